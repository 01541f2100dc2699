/**
 * serve's read anchor on a real SQLite file: while it holds the locks, every read still sees
 * every commit made before it, and a write of this process still starts the WAL over.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.js';
import { anchorReads, readAnchorOf, type ReadAnchor } from '../../src/store/read-anchor.js';

let dir: string;
let path: string;
let db: Database.Database;
let anchor: ReadAnchor;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-anchor-'));
  path = join(dir, 'l.db');
  db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('create table t (id integer primary key, v text not null)');
  anchor = anchorReads({ path, sqlite: db })!;
});
afterEach(() => {
  anchor.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const turn = () => new Promise((r) => setImmediate(r));
const walBytes = () => statSync(`${path}-wal`).size;

describe('ReadAnchor', () => {
  it('is found by the ledger path while open, and not after close', () => {
    expect(readAnchorOf(path)).toBe(anchor);
    anchor.close();
    expect(readAnchorOf(path)).toBeUndefined();
    expect(() => anchor.hold()).not.toThrow();
  });

  it('holds a read transaction until the end of the turn, on its own connection', async () => {
    const read = db.prepare('select count(*) from t').pluck();
    anchor.hold();
    expect(db.inTransaction).toBe(false);
    expect(read.get()).toBe(0);
    await turn();
    // Released: a checkpoint can now copy everything and the next write restarts the WAL.
    db.prepare("insert into t (v) values ('a')").run();
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    expect(r!.checkpointed).toBe(r!.log);
  });

  it('lets each read see a commit another process made while the anchor held its locks', () => {
    const read = db.prepare('select v from t order by id').pluck();
    anchor.hold();
    expect(read.all()).toEqual([]);
    // Another process writes (a CLI's mark-paid, say) while this turn's anchor is held.
    const other = spawnSync(process.execPath, ['-e', `
      const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
      const d = new Database(${JSON.stringify(path)}, { timeout: 5000 });
      d.prepare("insert into t (v) values ('from another process')").run();
      d.close();`], { encoding: 'utf8' });
    expect(other.status, other.stderr).toBe(0);
    // The very next read, still in the anchored turn, sees it: no read is answered from an old snapshot.
    expect(read.all()).toEqual(['from another process']);
  });

  it('is let go before a group commit writes, so the WAL starts over instead of growing', async () => {
    const g = new GroupCommit(db);
    const big = 'x'.repeat(3000);
    const insert = db.prepare('insert into t (v) values (?)');
    const sizes: number[] = [];
    for (let i = 0; i < 40; i++) {
      // As in serve within one turn: a change commits, a write is asked for, a GET takes the
      // anchor while the WAL still has frames to copy (so its read mark is not the WAL-free one),
      // then the checkpoint thread copies them all. The anchor's own release comes after the
      // batch's COMMIT, which could then not start the WAL over if the anchor were still held.
      insert.run(big);
      const done = g.submit(() => insert.run(big));
      anchor.hold();
      db.pragma('wal_checkpoint(PASSIVE)');
      await done;
      sizes.push(walBytes());
    }
    // Each round writes a few pages; a WAL that never starts over holds all 40 rounds' worth.
    expect(Math.max(...sizes)).toBeLessThan(8 * 4096 * 4);
    expect(db.prepare('select count(*) from t').pluck().get()).toBe(80);
  });
});
