/**
 * serve's address derivation thread (src/chains/derive-ahead.ts): the address ranges of
 * src/chains/derive-ranges.ts answered on the parent port, at the lowest priority.
 */
import { stat } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { answerRanges } from './derive-ranges.js';

export type { RangeReply, RangeRequest } from './derive-ranges.js';

// The pool works ahead of demand (two chunks), so it can take the cores when the serving thread
// and the checkpoint thread leave them: under create-order load that kept the serving thread from
// waiting for a core behind it (bench/CHANGES.md, thirteenth round). On Linux a nice value is a
// thread's own (setpriority of "this process", 0, sets the calling thread's); elsewhere it would
// slow the whole process, so it is left as it is there.
//
// A thread inherits the nice value of the thread that starts it, and libuv's thread pool (which
// runs serve's fsyncs) is started by the first thread to use it: one call on it first, so that
// the pool never starts from here once this thread is niced.
stat(process.execPath, () => {
  if (process.platform !== 'linux') return;
  try {
    setPriority(19);
  } catch {
    // Not allowed here: the thread keeps the priority it has.
  }
});
answerRanges(parentPort!);
