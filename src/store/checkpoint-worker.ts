/**
 * A checkpoint thread of its own (src/store/checkpointer.ts with `workerUrl`): the checkpoints of
 * src/store/checkpoint-answer.ts on the parent port. serve runs them on its one background thread
 * instead (src/server/background-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerCheckpoints, type CheckpointData } from './checkpoint-answer.js';

export type { CheckpointData, CheckpointReply, CheckpointRequest } from './checkpoint-answer.js';

answerCheckpoints(parentPort!, workerData as CheckpointData);
