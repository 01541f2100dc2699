import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import type { CheckpointData, CheckpointReply, CheckpointRequest } from './checkpoint-answer.js';
import { sqliteAddon } from './db.js';
import { groupCommit } from './group-commit.js';

/** SQLite's own automatic checkpoint, as every connection has it by default (pages of WAL). */
const SQLITE_AUTOCHECKPOINT = 1000;
/**
 * A checkpoint is asked for once this many changes were committed since the last one: a create
 * order writes ~3-4 WAL pages, so about as often as SQLite's own 1,000-page automatic checkpoint.
 */
export const CHECKPOINT_EVERY_CHANGES = 256;
/** How long the next batch waits for a checkpoint at most. */
const CHECKPOINT_WAIT_MS = 2_000;

/**
 * serve's WAL checkpoints on a thread of their own (issue #16). SQLite runs a checkpoint inside
 * the COMMIT that takes the WAL past 1,000 pages: under the create-order load that was one COMMIT
 * in seven, each holding the event loop 5-55 ms (copying ~1,000 pages into the database file and
 * two fsyncs), ~75% of the time all COMMITs took. Here the connections of serve (`connections`,
 * the ledger's own first: its group commit) have their automatic checkpoint off, and a worker
 * thread with its own connection runs the same PASSIVE checkpoint every CHECKPOINT_EVERY_CHANGES
 * changes, in two steps (GroupCommit.checkpointInBackground): one beside the batches, which go on
 * committing, then a short one between two batches, which the group commit holds the next batch
 * for (so the next write starts the WAL over, as after SQLite's own), while the event loop reads
 * and checks requests. Durability is SQLite's: a checkpoint syncs the WAL before it copies
 * committed pages, and the database file after when it reached the WAL's end (one that writes
 * overtook only records how far it got; the WAL starts over only after one that reached the end).
 * Should the thread fail, the connections get their automatic checkpoint back.
 */
export function checkpointInBackground(
  ledger: { path: string; sqlite: Database.Database },
  opts: {
    others?: Database.Database[];
    onError?: (message: string) => void;
    /** The thread's file; else ./checkpoint-worker.js. */
    workerUrl?: URL;
    everyChanges?: number;
  } = {},
): { close(): Promise<void> } {
  const mode = String(ledger.sqlite.pragma('journal_mode', { simple: true }));
  if (ledger.path === ':memory:' || mode !== 'wal') return { close: async () => {} };
  const connections = [ledger.sqlite, ...(opts.others ?? [])];
  const worker = new Worker(opts.workerUrl ?? new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { path: ledger.path, addon: sqliteAddon() } satisfies CheckpointData,
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
  });
  const waiting = new Map<number, (r: CheckpointReply) => void>();
  let next = 0;
  let dead = false;
  let closing = false;
  const giveBack = (why: string) => {
    if (dead) return;
    dead = true;
    for (const c of connections) groupCommit(c).checkpointInBackground(undefined);
    for (const c of connections) {
      try {
        if (c.open) c.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
      } catch {
        // A closed connection checkpoints no more.
      }
    }
    for (const settle of waiting.values()) settle({ id: -1, error: why });
    waiting.clear();
    opts.onError?.(`the WAL checkpoint thread stopped (${why}); checkpoints run in the COMMITs again`);
  };
  worker.on('message', (r: CheckpointReply) => {
    const settle = waiting.get(r.id);
    waiting.delete(r.id);
    settle?.(r);
  });
  let exited = false;
  worker.on('error', (e) => giveBack(e.message));
  worker.on('exit', (code) => {
    exited = true;
    if (!closing) giveBack(`exit ${code}`);
  });
  // The thread never keeps the process alive: serve decides when it stops.
  worker.unref();
  for (const c of connections) c.pragma('wal_autocheckpoint = 0');
  const checkpoint = () =>
    new Promise<void>((resolve) => {
      if (dead) return resolve();
      const id = next++;
      // Batches wait for a checkpoint, but never for long: past this the group commit goes on
      // (a checkpoint still running is safe beside writers; only the WAL may not start over).
      const cap = setTimeout(() => {
        opts.onError?.(`WAL checkpoint still running after ${CHECKPOINT_WAIT_MS / 1000} s; writes no longer wait for it`);
        resolve();
      }, CHECKPOINT_WAIT_MS);
      cap.unref();
      waiting.set(id, (r) => {
        clearTimeout(cap);
        // A checkpoint that failed leaves the WAL as it was; the next one tries again.
        if ('error' in r && r.id !== -1) opts.onError?.(`WAL checkpoint failed: ${r.error}`);
        resolve();
      });
      worker.postMessage({ id } satisfies CheckpointRequest);
    });
  // Every connection that writes counts its own changes towards a checkpoint: the callback
  // sender's, draining a backlog while no request writes, would otherwise grow the WAL unchecked.
  for (const c of connections) groupCommit(c).checkpointInBackground(checkpoint, opts.everyChanges ?? CHECKPOINT_EVERY_CHANGES);
  return {
    async close() {
      if (closing) return;
      closing = true;
      for (const c of connections) groupCommit(c).checkpointInBackground(undefined);
      // Ends once the thread has closed its connection after 'close' (or at once if it stopped).
      const gone = exited ? Promise.resolve() : new Promise((r) => worker.once('exit', r));
      // Held open until then: unreferenced, the process could end first (serve's last await,
      // exit code 13).
      worker.ref();
      if (!exited) worker.postMessage('close' satisfies CheckpointRequest);
      await gone;
      for (const settle of waiting.values()) settle({ id: -1, error: 'closed' });
      waiting.clear();
      for (const c of connections) {
        try {
          if (c.open) c.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
        } catch {
          // Closed already.
        }
      }
    },
  };
}
