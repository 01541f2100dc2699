/**
 * A derivation thread of its own (src/chains/derive-ahead.ts with `workerUrl`): the address
 * ranges of src/chains/derive-ranges.ts answered on the parent port. serve runs them on its one
 * background thread instead (src/server/background-thread.ts).
 */
import { parentPort } from 'node:worker_threads';
import { answerRanges } from './derive-ranges.js';

export type { RangeReply, RangeRequest } from './derive-ranges.js';

answerRanges(parentPort!);
