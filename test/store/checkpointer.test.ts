/**
 * serve's WAL checkpoints off the event loop (src/store/checkpointer.ts): between two batches of
 * the group commit, on a thread with its own connection, never inside a COMMIT.
 */
import Database from 'better-sqlite3';
import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointInBackground } from '../../src/store/checkpointer.js';
import { openLedger } from '../../src/store/db.js';
import { GroupCommit, MAX_BESIDE, groupCommit } from '../../src/store/group-commit.js';
import { syncInBackground } from '../../src/store/wal-sync.js';

/** The bundle's thread (npm run build), as serve runs it. */
const WORKER = new URL('../../dist/bundle/checkpoint-worker.js', import.meta.url);

let dir: string;
let opened: Database.Database[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-ckpt-'));
});
afterEach(() => {
  for (const db of opened) if (db.open) db.close();
  opened = [];
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A file in WAL mode with one table `t`, and a group commit on its connection (background fsync
 * and checkpoints set by each test): how the tests of GroupCommit write. Closed after the test.
 */
function walTable(name: string) {
  const db = new Database(join(dir, name));
  opened.push(db);
  db.pragma('journal_mode = WAL');
  db.exec('create table t (v text)');
  const stmt = db.prepare('insert into t (v) values (?)');
  return {
    db,
    file: join(dir, name),
    g: new GroupCommit(db),
    insert: (v: string) => stmt.run(v),
    count: () => Number(db.prepare('select count(*) from t').pluck().get()),
  };
}

const turn = () => new Promise((r) => setImmediate(r));

/**
 * How many times the WAL of `file` has started over: its header's checkpoint sequence number
 * (bytes 12-15, big-endian), which SQLite counts up each time a write starts the WAL again from
 * its first frame. -1 while there is no WAL header yet.
 */
function walStarts(file: string): number {
  let fd: number | undefined;
  try {
    fd = openSync(`${file}-wal`, 'r');
    const head = Buffer.alloc(32);
    if (readSync(fd, head, 0, 32, 0) < 32) return -1;
    return head.readUInt32BE(12);
  } catch {
    return -1;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The checkpoints of `g`, one every 2 changes, played by the test: each waits in the list returned
 * (`runs`, when given) until the test calls it.
 */
function heldCheckpoints(g: GroupCommit, runs: (() => void)[] = []): (() => void)[] {
  g.checkpointInBackground(() => new Promise<void>((done) => runs.push(done)), 2);
  return runs;
}

/**
 * A WAL table (`walTable`) whose first checkpoint, due after changes 'a' and 'b', is running
 * beside the batches, held by the test in `runs`; its fsyncs run at once in the background unless
 * `backgroundSync` is false (the callback sender's connection).
 */
async function firstCheckpointRunning(name: string, backgroundSync = true) {
  const t = walTable(name);
  if (backgroundSync) t.g.syncInBackground(async () => {});
  const runs = heldCheckpoints(t.g);
  await t.g.submit(() => t.insert('a'));
  await t.g.submit(() => t.insert('b'));
  await turn();
  expect(runs).toHaveLength(1);
  return { ...t, runs };
}

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
  it('after `every` changes checkpoints beside the batches, then once more between two batches, which waits for it', async () => {
    const { db, g, insert } = walTable('g.db');
    const rows = () => (db.prepare('select v from t order by rowid').all() as { v: string }[]).map((r) => r.v);
    const syncs: (() => void)[] = [];
    g.syncInBackground(() => new Promise<void>((done) => syncs.push(done)));
    const checkpoints = heldCheckpoints(g);

    const a = g.submit(() => insert('a'));
    await turn();
    syncs.shift()!();
    await a;
    // One change since the last checkpoint: none yet.
    expect(checkpoints).toHaveLength(0);
    const b = g.submit(() => insert('b'));
    await turn();
    syncs.shift()!();
    await b;
    await turn();
    expect(checkpoints).toHaveLength(1);
    // The first checkpoint runs beside the batches: a change asked for meanwhile commits and is answered.
    const c = g.submit(() => insert('c'));
    await turn();
    expect(rows()).toEqual(['a', 'b', 'c']);
    // It ends while c's fsync is in flight: the second waits for c to be on disk.
    checkpoints.shift()!();
    await turn();
    await turn();
    expect(checkpoints).toHaveLength(0);
    syncs.shift()!();
    await c;
    await turn();
    expect(checkpoints).toHaveLength(1);
    // The second runs between two batches: a change asked for meanwhile waits for it.
    let dDone = false;
    const d = g.submit(() => insert('d')).then(() => (dDone = true));
    await turn();
    await turn();
    expect(rows()).toEqual(['a', 'b', 'c']);
    checkpoints.shift()!();
    await turn();
    await turn();
    expect(rows()).toEqual(['a', 'b', 'c', 'd']);
    expect(dDone).toBe(false);
    syncs.shift()!();
    await d;
    // The count started over with the second: d is one change of the next two.
    expect(checkpoints).toHaveLength(0);
  });

  it('runs another checkpoint beside the batches while many changes were committed during the last, eight at most, then the one between', async () => {
    const { g, insert, count, runs } = await firstCheckpointRunning('r.db');
    /**
     * Commits `during` changes while the running checkpoint runs (beside the batches, they are not
     * held), ends it, and says whether the next one holds the next batch.
     */
    const end = async (during: number) => {
      for (let i = 0; i < during; i++) await g.submit(() => insert(`d${i}`));
      runs.shift()!();
      await turn();
      await turn();
      expect(runs).toHaveLength(1);
      const before = count();
      const p = g.submit(() => insert('x'));
      await turn();
      await turn();
      const held = count() === before;
      if (held) {
        runs.shift()!();
        await turn();
      }
      await p;
      return held;
    };
    // More than 16 changes during each: another beside the batches, up to eight in all; after
    // eight, the one between.
    expect(MAX_BESIDE).toBe(8);
    for (let i = 1; i < MAX_BESIDE; i++) expect(await end(17)).toBe(false);
    expect(await end(17)).toBe(true);
    // A new round: one during which 16 or fewer were committed goes straight to the one between
    // (the last 16: the 'x' of the round before, then 15).
    await g.submit(() => insert('c'));
    await turn();
    expect(runs).toHaveLength(1);
    expect(await end(17)).toBe(false);
    expect(await end(15)).toBe(true);
  });

  it('goes on committing and checkpointing when a checkpoint throws where it is called or fails', async () => {
    const { g, insert, count } = walTable('x.db');
    g.syncInBackground(async () => {});
    let calls = 0;
    g.checkpointInBackground(() => {
      calls++;
      // The first throws at once, the second fails later, the third (between the batches) too.
      if (calls === 1) throw new Error('no thread');
      return Promise.reject(new Error('disk I/O error'));
    }, 2);
    for (let i = 0; i < 12; i++) {
      await g.submit(() => insert(`v${i}`));
      await turn();
    }
    expect(count()).toBe(12);
    // Every 2 changes a round of two (beside, between), whatever each one did: none was lost.
    expect(calls).toBeGreaterThanOrEqual(6);
  });

  it('stops checkpointing when the checkpoints are taken away while one runs beside the batches, and starts afresh when they come back', async () => {
    const { g, insert, count, runs } = await firstCheckpointRunning('c.db');
    // Enough changes while it runs for another round to follow it; but serve stops its
    // checkpointer (checkpointer.ts close) meanwhile.
    for (let i = 0; i < 20; i++) await g.submit(() => insert(`m${i}`));
    g.checkpointInBackground(undefined);
    runs.shift()!();
    await turn();
    for (let i = 0; i < 5; i++) await g.submit(() => insert(`c${i}`));
    await turn();
    expect(runs).toHaveLength(0);
    // Back again: a round starts from the beginning (beside the batches, not between them).
    heldCheckpoints(g, runs);
    await g.submit(() => insert('d'));
    await g.submit(() => insert('e'));
    await turn();
    expect(runs).toHaveLength(1);
    await g.submit(() => insert('f'));
    expect(count()).toBe(30);
    runs.shift()!();
  });

  it('after a failed fsync, a checkpoint running beside the batches is the last', async () => {
    const { g, insert } = walTable('f.db');
    const syncs: { ok: () => void; fail: (e: Error) => void }[] = [];
    g.syncInBackground(() => new Promise<void>((ok, fail) => syncs.push({ ok, fail })));
    const runs = heldCheckpoints(g);
    for (const v of ['a', 'b']) {
      const p = g.submit(() => insert(v));
      await turn();
      syncs.shift()!.ok();
      await p;
    }
    await turn();
    expect(runs).toHaveLength(1);
    // 20 changes while it runs (another round would follow), the last fsync of which fails.
    const batch = Array.from({ length: 20 }, (_, i) => g.submit(() => insert(`c${i}`)));
    await turn();
    syncs.shift()!.fail(new Error('EIO'));
    await expect(Promise.all(batch)).rejects.toThrow(/could not be flushed to disk/);
    // Committed into the WAL but maybe not on disk: it may have been kept, and a retry must look first.
    await expect(Promise.all(batch)).rejects.toThrow(/this change may or may not have been kept; restart serve, then look it up before sending it again/);
    runs.shift()!();
    await turn();
    await turn();
    expect(runs).toHaveLength(0);
    await expect(g.submit(() => insert('z'))).rejects.toThrow(/could not be flushed to disk/);
  });

  it('on a connection without a background fsync (the callback sender\'s), holds the next batch for the checkpoint between the batches', async () => {
    const { g, insert, count, runs } = await firstCheckpointRunning('s.db', false);
    // Beside the batches: c commits at once.
    await g.submit(() => insert('c'));
    runs.shift()!();
    await turn();
    await turn();
    expect(runs).toHaveLength(1);
    // Between them: d waits for it.
    const d = g.submit(() => insert('d'));
    await turn();
    await turn();
    expect(count()).toBe(3);
    runs.shift()!();
    await d;
    expect(count()).toBe(4);
  });

  it('starts the WAL over under steady writes: the second checkpoint copies what was committed during the first', async () => {
    const { db, file, g, insert } = walTable('w.db');
    db.pragma('wal_autocheckpoint = 0');
    const other = new Database(file);
    opened.push(other);
    const framesOf = () => (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
    g.syncInBackground(async () => {});
    const runs: string[] = [];
    // The checkpoint thread, played here: a PASSIVE checkpoint on another connection that copies
    // what was committed when it was asked for (a reader holds that snapshot until it has run),
    // settled only when the test says, after it may have committed more.
    const snapshot = new Database(file);
    opened.push(snapshot);
    const pending: (() => void)[] = [];
    g.checkpointInBackground(
      () =>
        new Promise<void>((done) => {
          snapshot.exec('BEGIN');
          snapshot.prepare('select count(*) from t').get();
          runs.push('run');
          pending.push(() => {
            other.pragma('wal_checkpoint(PASSIVE)');
            snapshot.exec('COMMIT');
            done();
          });
        }),
      4,
    );
    const big = 'x'.repeat(3000);
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) await g.submit(() => insert(big));
    };
    await write(4);
    await turn();
    expect(runs).toHaveLength(1);
    // Steady writes while the first checkpoint runs (few enough for the next to be the one
    // between the batches): they land in the WAL after what it copied.
    await write(10);
    pending.shift()!();
    await turn();
    await turn();
    expect(runs).toHaveLength(2);
    // The writes go on: the next change is asked for while the second checkpoint runs.
    const last = g.submit(() => insert(big));
    await turn();
    await turn();
    pending.shift()!();
    await last;
    // The WAL started over: it holds the last change alone, not the 15 before it.
    expect(framesOf()).toBeLessThan(5);
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

  it('keeps every acknowledged change, sound, while its thread checkpoints beside steady writes, and the WAL file does not grow to hold them all', async () => {
    const file = join(dir, 'steady.db');
    const ledger = openLedger(file);
    const acknowledged: string[] = [];
    try {
      const g = syncInBackground(ledger);
      const errors: string[] = [];
      const ck = checkpointInBackground(ledger, { onError: (m) => errors.push(m), workerUrl: WORKER, everyChanges: 50 });
      const insert = ledger.sqlite.prepare('insert into settings (key, value, updated_at) values (?, ?, 0)');
      const value = 'v'.repeat(1000);
      let next = 0;
      // Until the thread has started and checkpointed once, the WAL grows (its file keeps that
      // size): written one at a time until the WAL has started over once. On a loaded machine the
      // thread takes a while to start; that is not what is measured.
      const deadline = Date.now() + 45_000;
      const write = async (key: string) => {
        await g.submit(() => insert.run(key, value));
        acknowledged.push(key);
      };
      // The first change writes the WAL's header, if there was none.
      await write(`w${next++}`);
      const firstStart = walStarts(file);
      expect(firstStart).toBeGreaterThanOrEqual(0);
      while (walStarts(file) === firstStart && Date.now() < deadline) {
        await write(`w${next++}`);
        await turn();
      }
      expect(walStarts(file), 'the WAL started over once the thread ran').not.toBe(firstStart);
      const walBefore = statSync(`${file}-wal`).size;
      const startsBefore = walStarts(file);
      // Then ~1 KB changes, 32 always asked for at once: the writes never pause for a checkpoint.
      // They go on until at least 3,000 were acknowledged during which the WAL started over at
      // least three times and its file grew by less than 500 bytes a change (the WAL of the same
      // batches with no checkpoint grows by ~1.6 KB a change, 4.8 MB for 3,000; alone, by none).
      // A WAL that never starts over under steady writes never gets there: it fails at the
      // deadline (or at 30,000 changes). A starved checkpoint thread only makes it take longer.
      let written = 0;
      const done = () =>
        written >= 3000 &&
        walStarts(file) - startsBefore >= 3 &&
        statSync(`${file}-wal`).size - walBefore < written * 500;
      const writer = async () => {
        while (!done() && written < 30_000 && Date.now() < deadline) {
          await write(`k${next++}`);
          written++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, writer));
      await ck.close();
      // A starved thread may make a batch stop waiting for its checkpoint (a warning); nothing failed.
      expect(errors.filter((m) => !/still running after/.test(m))).toEqual([]);
      expect(walStarts(file) - startsBefore, 'times the WAL started over under steady writes').toBeGreaterThanOrEqual(3);
      expect(statSync(`${file}-wal`).size - walBefore, 'WAL growth, against 500 bytes for each change written').toBeLessThan(written * 500);
      expect(written).toBeGreaterThanOrEqual(3000);
    } finally {
      ledger.close();
    }
    // Opened again: sound, and every acknowledged change is there.
    const again = new Database(file, { readonly: true });
    try {
      expect(again.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(Number(again.prepare("select count(*) from settings where key like 'k%' or key like 'w%'").pluck().get())).toBe(acknowledged.length);
    } finally {
      again.close();
    }
  }, 90_000);

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
      const ck = checkpointInBackground(ledger, { onError: (m) => errors.push(m), workerUrl: new URL('./no-such-worker.js', WORKER) });
      const deadline = Date.now() + 5000;
      while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(errors.join()).toMatch(/checkpoint thread stopped/);
      expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
      // serve's stop closes it all the same: it settles, with no thread left to wait for.
      await ck.close();
    } finally {
      ledger.close();
    }
  });
});
