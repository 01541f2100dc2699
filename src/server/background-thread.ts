import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { endWorker, type ThreadEnd } from '../core/end-worker.js';
import type { CheckpointData } from '../store/checkpoint-answer.js';
import { sqliteAddon } from '../store/db.js';

export interface BackgroundData {
  derive: MessagePort;
  checkpoint: CheckpointData & { port: MessagePort };
}

/**
 * serve's work off the serving thread, on one thread: the address pool's ranges
 * (src/chains/derive-ahead.ts) and the WAL checkpoints (src/store/checkpointer.ts), each over a
 * port of its own. Two threads cost two V8 isolates and two Node environments (~8 MB of RSS each
 * even idle); the checkpoints are short and rare next to the derivation (one every 256 changes),
 * and the derivation reads its messages between slices of addresses (32 with libsecp256k1, ~1 ms),
 * so a checkpoint waits for at most one slice. If the thread stops, both ports close and each side falls back (the
 * pool derives on demand, the connections checkpoint in their COMMITs again).
 */
export interface BackgroundThread {
  derive: MessagePort;
  checkpoint: MessagePort;
  /**
   * Ends the thread (after the pool and the checkpointer have closed their ports): both ports
   * closed, it returns by itself after the slice of addresses it is on; it is terminated only if
   * it has not within the grace period (src/core/end-worker.ts says why that matters).
   */
  close(): Promise<ThreadEnd>;
}

export function startBackgroundThread(ledgerPath: string, opts: { workerUrl?: URL } = {}): BackgroundThread {
  const derive = new MessageChannel();
  const checkpoint = new MessageChannel();
  const data: BackgroundData = { derive: derive.port2, checkpoint: { port: checkpoint.port2, path: ledgerPath, addon: sqliteAddon() } };
  const worker = new Worker(opts.workerUrl ?? new URL('./background-worker.js', import.meta.url), {
    workerData: data,
    transferList: [derive.port2, checkpoint.port2],
    // The derivation table and a range's bigints; the checkpoints need next to nothing.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  // The thread never keeps the process alive: serve decides when it stops.
  worker.unref();
  // Whatever ends the thread (a failure to start, an error in it) closes both sides' ports.
  const gone = () => {
    derive.port1.close();
    checkpoint.port1.close();
  };
  let exited = false;
  worker.on('error', gone);
  worker.on('exit', () => {
    exited = true;
    gone();
  });
  return {
    derive: derive.port1,
    checkpoint: checkpoint.port1,
    close: () => endWorker(worker, () => exited, gone),
  };
}
