/**
 * serve's one background thread (src/server/background-thread.ts): the address ranges derived
 * ahead and the WAL checkpoints, each on a port of its own. The thread ends once both are closed.
 */
import { workerData } from 'node:worker_threads';
import { answerRanges } from '../chains/derive-ranges.js';
import { answerCheckpoints } from '../store/checkpoint-answer.js';
import type { BackgroundData } from './background-thread.js';

const { derive, checkpoint } = workerData as BackgroundData;
answerRanges(derive);
try {
  answerCheckpoints(checkpoint.port, checkpoint);
} catch {
  // The ledger cannot be opened here: its port closes, the connections checkpoint in their
  // COMMITs again (src/store/checkpointer.ts), and the derivation goes on.
  checkpoint.port.close();
}
