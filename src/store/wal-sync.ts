import type Database from 'better-sqlite3';
import { close, closeSync, fdatasync, fstatSync, open, statSync } from 'node:fs';
import { groupCommit, LedgerFileGone, type GroupCommit } from './group-commit.js';

/**
 * serve's ledger connection: its group commit fsyncs the WAL file off the event loop (see
 * GroupCommit). The WAL file is opened once and kept open: an fsync is then one trip to libuv's
 * thread pool instead of three (open, fdatasync, close), each of which waited for a turn of a
 * busy event loop. Before each fsync the path is checked (a stat on this thread, ~µs) to still be
 * the file the descriptor holds, so the fsync is always of the WAL SQLite writes now: SQLite
 * keeps that file while this connection is open, but should it ever be replaced, it is opened
 * again.
 */
export function syncInBackground(ledger: { path: string; sqlite: Database.Database }, onBroken?: (message: string) => void): GroupCommit {
  const g = groupCommit(ledger.sqlite);
  g.onBroken = onBroken;
  const mode = String(ledger.sqlite.pragma('journal_mode', { simple: true }));
  // Without a WAL file (an in-memory ledger) there is nothing to fsync: COMMIT stays as it is.
  if (ledger.path === ':memory:' || mode !== 'wal') return g;
  const wal = `${ledger.path}-wal`;
  // The ledger file as serve opened it: a change committed once the path names another file (or
  // none) went into a file nobody will open again, and is never acknowledged (a durability
  // review: a backup restored with mv under serve, and hundreds of 200s lost).
  const main = statSync(ledger.path);
  let held: { fd: number; dev: number; ino: number } | undefined;
  /** The descriptor of the WAL file at `wal` now, opened (again) when it is not the one held. */
  const current = (): Promise<number> => {
    let there: { dev: number; ino: number } | undefined;
    try {
      there = statSync(ledger.path);
    } catch {
      // Gone: refused below.
    }
    if (!there || there.ino !== main.ino || there.dev !== main.dev) return Promise.reject(new LedgerFileGone(ledger.path));
    if (held) {
      let same = false;
      try {
        const st = statSync(wal);
        same = st.ino === held.ino && st.dev === held.dev;
      } catch {
        // Gone: opened again below, which reports why if it cannot be.
      }
      if (same) return Promise.resolve(held.fd);
      close(held.fd, () => {});
      held = undefined;
    }
    return new Promise((resolve, reject) => {
      open(wal, 'r', (err, fd) => {
        if (err) return reject(err);
        try {
          const st = fstatSync(fd);
          held = { fd, dev: st.dev, ino: st.ino };
        } catch {
          // Kept unheld: opened again for the next fsync.
        }
        resolve(fd);
      });
    });
  };
  // node:fs's callbacks, not node:fs/promises: fs/promises pulls in readline and stream code
  // that a command's start-up would pay for (this module was once loaded by every command).
  // The descriptor goes with the connection.
  const withClose = ledger as { close?: () => void };
  if (typeof withClose.close === 'function') {
    const closeLedger = withClose.close;
    withClose.close = () => {
      if (held) closeSync(held.fd);
      held = undefined;
      closeLedger();
    };
  }
  g.syncInBackground(() =>
    current().then(
      (fd) =>
        new Promise<void>((resolve, reject) => {
          fdatasync(fd, (syncErr) => {
            if (held?.fd !== fd) close(fd, () => {});
            if (syncErr) reject(syncErr);
            else resolve();
          });
        }),
    ),
  );
  return g;
}
