/**
 * serve's WAL checkpoints off the event loop (src/store/checkpointer.ts): between two batches of
 * the group commit, on a thread with its own connection, never inside a COMMIT.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointInBackground } from '../../src/store/checkpointer.js';
import { openLedger } from '../../src/store/db.js';
import { GroupCommit, groupCommit, syncInBackground } from '../../src/store/group-commit.js';

/** The bundle's thread (npm run build), as serve runs it. */
const WORKER = new URL('../../dist/bundle/checkpoint-worker.js', import.meta.url);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-ckpt-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const turn = () => new Promise((r) => setImmediate(r));

/** Settings rows whose key is LIKE `like` in a copy of the database file alone (no WAL beside it): what checkpoints copied. */
function rowsInFileAlone(file: string, like: string): number {
  const copy = join(dir, `alone-${like.replace(/\W/g, '')}.db`);
  copyFileSync(file, copy);
  const alone = new Database(copy, { readonly: true });
  try {
    return Number(alone.prepare('select count(*) from settings where key like ?').pluck().get(like));
  } catch {
    // The file alone does not even have the table: nothing was ever checkpointed.
    return 0;
  } finally {
    alone.close();
  }
}

describe('GroupCommit.checkpointInBackground', () => {
  it('checkpoints once enough changes are on disk, and holds the next batch until it is done', async () => {
    const db = new Database(join(dir, 'g.db'));
    db.pragma('journal_mode = WAL');
    db.exec('create table t (v text)');
    const insert = db.prepare('insert into t (v) values (?)');
    const rows = () => (db.prepare('select v from t order by rowid').all() as { v: string }[]).map((r) => r.v);
    const g = new GroupCommit(db);
    const syncs: (() => void)[] = [];
    g.syncInBackground(() => new Promise<void>((done) => syncs.push(done)));
    const checkpoints: (() => void)[] = [];
    g.checkpointInBackground(() => new Promise<void>((done) => checkpoints.push(done)), 2);

    const a = g.submit(() => insert.run('a'));
    await turn();
    syncs.shift()!();
    await a;
    // One change since the last checkpoint: none yet.
    expect(checkpoints).toHaveLength(0);
    const b = g.submit(() => insert.run('b'));
    await turn();
    // Not before b is on disk.
    expect(checkpoints).toHaveLength(0);
    syncs.shift()!();
    await b;
    await turn();
    expect(checkpoints).toHaveLength(1);
    // A change asked for meanwhile waits for the checkpoint.
    let cDone = false;
    const c = g.submit(() => insert.run('c')).then(() => (cDone = true));
    await turn();
    await turn();
    expect(rows()).toEqual(['a', 'b']);
    checkpoints.shift()!();
    await turn();
    await turn();
    expect(rows()).toEqual(['a', 'b', 'c']);
    expect(cDone).toBe(false);
    syncs.shift()!();
    await c;
    expect(checkpoints).toHaveLength(0);
    db.close();
  });
});

describe('checkpointInBackground on a ledger file', () => {
  it('turns the connections\' own checkpoints off, copies committed pages into the database file on its thread, and gives them back when closed', async () => {
    const file = join(dir, 'ledger.db');
    const ledger = openLedger(file);
    const other = new Database(file);
    try {
      const g = syncInBackground(ledger);
      const errors: string[] = [];
      const ck = checkpointInBackground(ledger, { others: [other], onError: (m) => errors.push(m), workerUrl: WORKER, everyChanges: 5 });
      expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(0);
      expect(Number(other.pragma('wal_autocheckpoint', { simple: true }))).toBe(0);
      const insert = ledger.sqlite.prepare("insert into settings (key, value, updated_at) values (?, 'v', 0)");
      for (let i = 0; i < 30; i++) {
        expect(await g.submit(() => insert.run(`c${i}`).changes)).toBe(1);
        await turn();
      }
      await ck.close();
      expect(errors).toEqual([]);
      expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
      expect(Number(other.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
      // The database file alone (no WAL beside it) holds what the checkpoints copied: at least
      // the rows of the first 25 changes (one checkpoint every 5).
      expect(rowsInFileAlone(file, 'c%')).toBeGreaterThanOrEqual(25);
    } finally {
      other.close();
      ledger.close();
    }
  });

  it('checkpoints the WAL when only another connection writes (the callback sender draining a backlog while the API is idle)', async () => {
    const file = join(dir, 'sender.db');
    const ledger = openLedger(file);
    // As serve's sender connection: its own group commit, synchronous NORMAL, no background fsync.
    const sender = new Database(file);
    sender.pragma('synchronous = NORMAL');
    try {
      syncInBackground(ledger);
      const errors: string[] = [];
      const ck = checkpointInBackground(ledger, { others: [sender], onError: (m) => errors.push(m), workerUrl: WORKER, everyChanges: 5 });
      // The connection's one group commit, as the sender's CallbackWorker submits to.
      const g = groupCommit(sender);
      const insert = sender.prepare("insert into settings (key, value, updated_at) values (?, 'v', 0)");
      for (let i = 0; i < 30; i++) {
        await g.submit(() => insert.run(`s${i}`));
        await turn();
      }
      await ck.close();
      expect(errors).toEqual([]);
      // Checkpoints ran: the database file alone holds the rows of at least the first 25 changes.
      expect(rowsInFileAlone(file, 's%')).toBeGreaterThanOrEqual(25);
    } finally {
      sender.close();
      ledger.close();
    }
  });

  it('gives the connections their own checkpoints back when the thread cannot start', async () => {
    const ledger = openLedger(join(dir, 'l2.db'));
    try {
      syncInBackground(ledger);
      const errors: string[] = [];
      checkpointInBackground(ledger, { onError: (m) => errors.push(m), workerUrl: new URL('./no-such-worker.js', WORKER) });
      const deadline = Date.now() + 5000;
      while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(errors.join()).toMatch(/checkpoint thread stopped/);
      expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
    } finally {
      ledger.close();
    }
  });
});
