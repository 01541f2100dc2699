/**
 * serve's WAL checkpoint thread (src/store/checkpointer.ts): the checkpoints of
 * src/store/checkpoint-answer.ts on the parent port, at the process's priority (the group
 * commit's batches wait for some of them).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerCheckpoints, type CheckpointData } from './checkpoint-answer.js';

export type { CheckpointData, CheckpointReply, CheckpointRequest } from './checkpoint-answer.js';

answerCheckpoints(parentPort!, workerData as CheckpointData);
