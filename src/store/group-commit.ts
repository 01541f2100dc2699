import type Database from 'better-sqlite3';

/**
 * Group commit. Every change asked for in one turn of the event loop runs inside one
 * `BEGIN IMMEDIATE` transaction, each change in its own savepoint, and one `COMMIT` makes them
 * all durable together: one WAL fsync (synchronous = FULL is kept) for many requests instead of
 * one each. Nobody is answered before that COMMIT has returned.
 *
 * - A change that throws is rolled back to its savepoint: it changes nothing and the others in
 *   the batch go on. Its refusal reached the caller only once the batch is committed.
 * - Changes run in the order they were asked for, and each sees the ones before it (a second
 *   create with the same oid in the same batch finds the first).
 * - If BEGIN or COMMIT fails, nothing of the batch is kept and every change in it is refused
 *   with that failure, including one that had refused on its own: its refusal rested on state
 *   that never landed.
 *
 * A CLI process asks for one change, so its batch is that change alone.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;

  constructor(
    private readonly sqlite: Database.Database,
    /** At most this many changes share one transaction (bounds how long the file lock is held). */
    private readonly maxBatch = 256,
  ) {
    this.begin = sqlite.prepare('BEGIN IMMEDIATE');
    this.commit = sqlite.prepare('COMMIT');
    this.rollback = sqlite.prepare('ROLLBACK');
    this.savepoint = sqlite.prepare('SAVEPOINT change');
    this.release = sqlite.prepare('RELEASE change');
    this.rollbackTo = sqlite.prepare('ROLLBACK TO change');
  }

  /** Runs `change` in the next batch; settles once the batch is durable (or refused). */
  submit<T>(change: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ change, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length) this.schedule();
    if (batch.length === 0) return;

    try {
      this.begin.run();
    } catch (e) {
      for (const p of batch) p.reject(e);
      return;
    }
    const outcomes: Outcome[] = new Array(batch.length);
    try {
      for (let i = 0; i < batch.length; i++) {
        this.savepoint.run();
        try {
          outcomes[i] = { ok: true, value: batch[i]!.change() };
          this.release.run();
        } catch (e) {
          outcomes[i] = { ok: false, error: e };
          // SQLite ends the whole transaction itself on some errors (I/O, disk full): then
          // there is no savepoint to go back to, and the batch fails as one below.
          if (!this.sqlite.inTransaction) throw e;
          this.rollbackTo.run();
          this.release.run();
        }
      }
      this.commit.run();
    } catch (e) {
      try {
        if (this.sqlite.inTransaction) this.rollback.run();
      } catch {
        // The connection already ended the transaction; nothing of the batch was kept either way.
      }
      for (const p of batch) p.reject(e);
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i]!;
      if (o.ok) batch[i]!.resolve(o.value);
      else batch[i]!.reject(o.error);
    }
  }
}

interface Pending {
  change: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const committers = new WeakMap<Database.Database, GroupCommit>();

/** The one group committer of a connection. */
export function groupCommit(sqlite: Database.Database): GroupCommit {
  let g = committers.get(sqlite);
  if (!g) committers.set(sqlite, (g = new GroupCommit(sqlite)));
  return g;
}
