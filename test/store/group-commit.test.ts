/**
 * Group commit on a real SQLite file: changes asked for in one event-loop turn share one
 * transaction, each in a savepoint; a refused change leaves nothing, a failed COMMIT keeps nothing.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.js';

let dir: string;
let db: Database.Database;
let other: Database.Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-gc-'));
  db = new Database(join(dir, 'l.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.exec(`create table parent (id integer primary key);
           create table t (id integer primary key, v text not null unique,
             parent integer references parent(id) deferrable initially deferred)`);
  // A second connection sees only what was committed.
  other = new Database(join(dir, 'l.db'), { readonly: true });
});
afterEach(() => {
  other.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = () => other.prepare('select v from t order by id').pluck().all();
const insert = (v: string, parent: number | null = null) => db.prepare('insert into t (v, parent) values (?, ?)').run(v, parent).lastInsertRowid;

describe('GroupCommit', () => {
  it('runs the changes of one turn in one transaction, in order, each seeing the one before', async () => {
    const g = new GroupCommit(db);
    const seen: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        g.submit(() => {
          seen.push(Number(db.prepare('select count(*) from t').pluck().get()));
          insert(`v${i}`);
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // The 50 changes ran one after another in one transaction: each saw all the earlier ones.
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(rows()).toHaveLength(50);
  });

  it('answers nobody before the COMMIT: a change is invisible to other connections until its promise settles', async () => {
    const g = new GroupCommit(db);
    let visibleWhenRun = -1;
    const p = g.submit(() => {
      insert('a');
      visibleWhenRun = rows().length;
      return 'done';
    });
    expect(rows()).toEqual([]);
    await expect(p).resolves.toBe('done');
    expect(visibleWhenRun).toBe(0);
    expect(rows()).toEqual(['a']);
  });

  it('a change that throws is rolled back to its savepoint; the others of the batch land', async () => {
    const g = new GroupCommit(db);
    const [a, b, c] = await Promise.allSettled([
      g.submit(() => insert('a')),
      g.submit(() => {
        insert('b');
        insert('b2');
        throw new Error('refused after writing');
      }),
      g.submit(() => insert('c')),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'rejected', reason: { message: 'refused after writing' } });
    expect(c.status).toBe('fulfilled');
    expect(rows()).toEqual(['a', 'c']);
  });

  it('a change refused by a constraint (a duplicate) leaves the rest of the batch alone', async () => {
    const g = new GroupCommit(db);
    const out = await Promise.allSettled([g.submit(() => insert('x')), g.submit(() => insert('x')), g.submit(() => insert('y'))]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(rows()).toEqual(['x', 'y']);
  });

  it('when COMMIT fails, nothing of the batch is kept and every change in it is refused', async () => {
    const g = new GroupCommit(db);
    // A deferred foreign key is checked at COMMIT: the second change makes the whole COMMIT fail.
    const out = await Promise.allSettled([g.submit(() => insert('a')), g.submit(() => insert('b', 999)), g.submit(() => insert('c'))]);
    expect(out.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((out[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(rows()).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The connection is usable again.
    await g.submit(() => insert('d'));
    expect(rows()).toEqual(['d']);
  });

  it('splits a long queue into batches of at most maxBatch changes', async () => {
    const g = new GroupCommit(db, 4);
    // Changes of one batch run in one synchronous stretch: a microtask queued by the first runs
    // only after the whole batch, so the counter tells the batches apart.
    let tick = 0;
    const batchOf: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        g.submit(() => {
          batchOf.push(tick);
          queueMicrotask(() => (tick = batchOf.length));
          insert(`v${i}`);
        }),
      ),
    );
    const sizes = [...new Set(batchOf)].map((b) => batchOf.filter((x) => x === b).length);
    expect(sizes).toEqual([4, 4, 2]);
    expect(rows()).toHaveLength(10);
  });
});
