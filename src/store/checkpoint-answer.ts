import Database from 'better-sqlite3';
import type { MessagePort } from 'node:worker_threads';

export interface CheckpointData {
  path: string;
  /** better-sqlite3's native addon, by path (src/store/db.ts, sqliteAddon). */
  addon: string;
}
export type CheckpointRequest = { id: number } | 'close';
export type CheckpointReply = { id: number; busy: number; log: number; checkpointed: number } | { id: number; error: string };

/**
 * The checkpoints of `cryptopay serve` (src/store/checkpointer.ts), answered on `port` off the
 * serving thread: a connection of its own to the ledger file, on which SQLite's PASSIVE
 * checkpoint runs when asked (the WAL's committed pages copied into the database file and that
 * file fsync'ed). 'close' closes the connection, then the port. Only better-sqlite3 is loaded.
 */
export function answerCheckpoints(port: Pick<MessagePort, 'on' | 'postMessage' | 'close'>, { path, addon }: CheckpointData): void {
  const db = new Database(path, { fileMustExist: true, timeout: 15_000, nativeBinding: addon });
  // A checkpoint syncs the WAL before it copies and the database file after (synchronous FULL).
  db.pragma('synchronous = FULL');
  // The other side gone without a 'close' (the thread ending): the connection too.
  port.on('close', () => {
    if (db.open) db.close();
  });
  port.on('message', (m: CheckpointRequest) => {
    if (m === 'close') {
      if (db.open) db.close();
      port.close();
      return;
    }
    try {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number | bigint; log: number | bigint; checkpointed: number | bigint }[];
      port.postMessage({ id: m.id, busy: Number(r!.busy), log: Number(r!.log), checkpointed: Number(r!.checkpointed) } satisfies CheckpointReply);
    } catch (e) {
      port.postMessage({ id: m.id, error: (e as Error).message } satisfies CheckpointReply);
    }
  });
}
