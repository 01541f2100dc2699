/**
 * The checkpoint thread of `cryptopay serve` (src/store/checkpointer.ts): its own connection to
 * the ledger file, on which it runs SQLite's PASSIVE checkpoint when asked: the WAL's committed
 * pages copied into the database file and that file fsync'ed, off the serving thread. Only
 * better-sqlite3 is loaded here.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

export interface CheckpointData {
  path: string;
  /** better-sqlite3's native addon, by path (src/store/db.ts, sqliteAddon). */
  addon: string;
}
export type CheckpointRequest = { id: number } | 'close';
export type CheckpointReply = { id: number; busy: number; log: number; checkpointed: number } | { id: number; error: string };

const { path, addon } = workerData as CheckpointData;
const db = new Database(path, { fileMustExist: true, timeout: 15_000, nativeBinding: addon });
// A checkpoint syncs the WAL before it copies and the database file after (synchronous FULL).
db.pragma('synchronous = FULL');
parentPort!.on('message', (m: CheckpointRequest) => {
  if (m === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number | bigint; log: number | bigint; checkpointed: number | bigint }[];
    parentPort!.postMessage({ id: m.id, busy: Number(r!.busy), log: Number(r!.log), checkpointed: Number(r!.checkpointed) } satisfies CheckpointReply);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message } satisfies CheckpointReply);
  }
});
