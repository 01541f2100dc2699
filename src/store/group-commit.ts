import type Database from 'better-sqlite3';
import { AppError } from '../core/errors.js';
import { isBusy } from './ledger-file.js';
import { releaseReadAnchors } from './read-anchor.js';

/**
 * A checkpoint beside the batches during which more changes than this were committed is followed
 * by another beside them, up to MAX_BESIDE in all: the one between the batches then has less to
 * copy (bench/CHANGES.md, thirteenth round). On a large ledger a checkpoint copies more scattered
 * pages and takes longer, so more changes come in during the last of three; eight keep the wait
 * between the batches short there too (fourteenth round). The cap bounds the WAL when the writes
 * outpace the copying.
 */
const CATCH_UP_CHANGES = 16;
export const MAX_BESIDE = 8;

/**
 * Runs a checkpoint; settles, never rejects, even when `run` throws where it is called (the
 * checkpointer reports its own failures; the WAL is then checkpointed later), so that the group
 * commit's state always moves on.
 */
function runCheckpoint(run: () => Promise<void>): Promise<void> {
  return Promise.resolve()
    .then(run)
    .catch(() => {});
}

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
 *
 * With `syncInBackground` (serve; src/store/wal-sync.ts), the fsync leaves the event loop: a batch commits with
 * synchronous = NORMAL (its WAL frames written, not yet flushed), the WAL file is fdatasync'ed on
 * libuv's thread pool, and only then is anyone of the batch answered. Meanwhile the event loop
 * goes on reading requests, whose changes wait and go in as the next batch once the fsync is done. Under synchronous = FULL, COMMIT held
 * the event loop for the whole fsync. Durability is the same: nobody is answered before the WAL
 * frames of their change are on disk, and a change that builds on another (a refund of a payment
 * just recorded) comes later in the WAL, so its fsync covers both.
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
  /** syncInBackground: flushes the WAL to disk; batches are answered once it resolves. */
  private sync?: () => Promise<void>;
  private relaxed = false;
  private flushAfterSync = false;
  /** Batches committed, and of those the ones a finished fsync made durable. */
  private committed = 0;
  private synced = 0;
  private syncing = false;
  private waiting: Waiter[] = [];
  /** A failed fsync: what was committed may not be on disk, so nothing more is accepted. */
  private broken?: AppError;
  /** Told once, when changes start being refused for good (serve logs it). */
  onBroken?: (message: string) => void;
  /** checkpointInBackground: runs a WAL checkpoint elsewhere. */
  private checkpoint?: { run: () => Promise<void>; every: number };
  private sinceCheckpoint = 0;
  /** 'beside': one runs while batches go on; 'between': the next batch waits for it. */
  private checkpointing?: 'beside' | 'between';
  /** A checkpoint beside the batches has finished: the short one between two batches is due. */
  private restartDue = false;
  /**
   * How long a change waits for another connection's write lock (the connection's own busy
   * timeout, read once), and the statement that gives that timeout back after each BEGIN.
   */
  private readonly lockWait: { ms: number; restore: string };
  /** The batch's BEGIN found the write lock taken: it is tried again when this fires. */
  private lockRetry?: NodeJS.Timeout;
  /** How often in a row a BEGIN found the lock taken: the pause before the next try grows with it. */
  private lockTries = 0;
  /** A batch was just made durable: the next one waits a turn, for its answers to be written. */
  private answering = false;

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
    const ms = Number(sqlite.pragma('busy_timeout', { simple: true }));
    this.lockWait = { ms, restore: `PRAGMA busy_timeout = ${ms}` };
  }

  /** Why changes are refused for good (a failed fsync, the ledger file gone), or undefined. */
  get failure(): AppError | undefined {
    return this.broken;
  }

  /** Runs `change` in the next batch; settles once the batch is durable (or refused). */
  submit<T>(change: () => T): Promise<T> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<T>((resolve, reject) => {
      // When it was asked for: each change waits for another connection's write lock at most the busy timeout.
      this.queue.push({ change, resolve: resolve as (v: unknown) => void, reject, at: performance.now() });
      this.schedule();
    });
  }

  /**
   * Commits without waiting for the disk (synchronous = NORMAL for the batch's transaction only;
   * anything else on the connection keeps FULL) and answers each batch once `sync` (an fsync of
   * the WAL file) has finished after its COMMIT.
   */
  syncInBackground(sync: () => Promise<void>): void {
    this.sync = sync;
  }

  /**
   * WAL checkpoints off this connection's COMMITs (src/store/checkpointer.ts), `run` on another
   * thread, in two steps:
   *
   * 1. Once `every` changes were committed since the last one, a checkpoint runs *beside* the
   *    batches, which go on committing: it copies the bulk of the WAL into the database file.
   *    While many changes were committed during one, another follows (at most MAX_BESIDE in all).
   * 2. Then, once every batch is on disk, one runs *between* two batches: the next batch waits
   *    for it (its requests are still read and checked). It copies only what was committed
   *    during the last one, so the wait is short, and the next write starts the WAL over, as
   *    after SQLite's own checkpoint; without this step, under steady writes no checkpoint would
   *    ever catch up and the WAL would grow for as long as the load lasts.
   *
   * Undefined: none (the connection's own, if on).
   */
  checkpointInBackground(run: (() => Promise<void>) | undefined, every = 256): void {
    this.checkpoint = run ? { run, every } : undefined;
    this.restartDue = false;
  }

  /**
   * Undefined when every batch committed so far is on disk; else settles once it is. A read
   * answered after this shows nothing that a power cut could still take back.
   */
  durable(): Promise<void> | undefined {
    if (this.broken) return Promise.reject(this.broken);
    if (this.synced === this.committed) return undefined;
    return new Promise<void>((settle, fail) => this.waiting.push({ seq: this.committed, settle, fail }));
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
    // While an fsync is in flight the queue fills up and goes in as one batch once it is done:
    // fewer, larger transactions (each COMMIT writes the pages it touched to the WAL again).
    if (this.syncing || this.checkpointing === 'between' || this.lockRetry || this.answering) {
      this.flushAfterSync = true;
      return;
    }
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length) this.schedule();
    if (batch.length === 0) return;
    if (this.broken) {
      for (const p of batch) p.reject(this.broken);
      return;
    }

    // A read mark of this process held at COMMIT would keep the WAL from starting over.
    releaseReadAnchors();
    try {
      // exec, not a prepared statement: a prepared PRAGMA did not take effect on its first run.
      // One exec for the batch's settings: no busy wait (see beginNow), and synchronous NORMAL
      // when the fsync runs in the background.
      this.sqlite.exec(this.sync ? 'PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL' : 'PRAGMA busy_timeout = 0');
      if (this.sync) this.relaxed = true;
      this.beginNow();
    } catch (e) {
      // BEGIN made, then giving the busy timeout back failed: not left inside the transaction.
      try {
        if (this.sqlite.inTransaction) this.rollback.run();
      } catch {
        // Nothing of the batch was written either way.
      }
      this.restoreFull();
      if (this.waitForLock(e, batch)) return;
      for (const p of batch) p.reject(ledgerTrouble(e));
      return;
    }
    this.lockTries = 0;
    const outcomes: Outcome[] = new Array(batch.length);
    try {
      for (let i = 0; i < batch.length; i++) {
        this.savepoint.run();
        try {
          outcomes[i] = { ok: true, value: batch[i]!.change() };
          this.release.run();
        } catch (e) {
          outcomes[i] = { ok: false, error: ledgerTrouble(e) };
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
      this.restoreFull();
      for (const p of batch) p.reject(ledgerTrouble(e));
      return;
    }
    this.restoreFull();
    this.sinceCheckpoint += batch.length;
    const settle = () => {
      for (let i = 0; i < batch.length; i++) {
        const o = outcomes[i]!;
        if (o.ok) batch[i]!.resolve(o.value);
        else batch[i]!.reject(o.error);
      }
    };
    if (!this.sync) {
      settle();
      // Committed is durable here (or all the connection asks for): a checkpoint may follow.
      this.startCheckpoint();
      return;
    }
    this.waiting.push({ seq: ++this.committed, settle, fail: (e) => batch.forEach((p) => p.reject(e)) });
    this.startSync();
  }

  /**
   * BEGIN IMMEDIATE without SQLite's busy wait (flush set the busy timeout to 0 just before),
   * the connection's own given back at once after. SQLite's busy handler sleeps on this thread:
   * in serve, every request (status GETs, payment pages, /healthz) waited with the write while
   * another process held the ledger's write lock, up to the 15 s busy timeout. While the lock is
   * taken, the batch waits on a timer instead (waitForLock), and the event loop goes on answering
   * reads, which a writer elsewhere does not hold up on a WAL ledger, and taking in changes.
   */
  private beginNow(): void {
    try {
      this.begin.run();
    } finally {
      this.sqlite.exec(this.lockWait.restore);
    }
  }

  /**
   * The batch found the write lock taken: each of its changes asked for the busy timeout ago or
   * longer is refused with SQLite's SQLITE_BUSY, as SQLite's own wait refuses; the others go back
   * to the head of the queue, in order, and are tried again after a pause (2 ms, doubling up to
   * 50 ms). False when the failure is not the lock: the whole batch is then refused.
   */
  private waitForLock(e: unknown, batch: Pending[]): boolean {
    if (!isBusy(e)) return false;
    const now = performance.now();
    // Oldest first: the ones past the wait are the batch's first.
    let waited = 0;
    while (waited < batch.length && now - batch[waited]!.at >= this.lockWait.ms) waited++;
    for (const p of batch.slice(0, waited)) p.reject(e);
    this.queue.unshift(...batch.slice(waited));
    if (this.queue.length === 0) {
      this.lockTries = 0;
      return true;
    }
    const pause = Math.min(50, 2 ** ++this.lockTries);
    this.lockRetry = setTimeout(() => {
      this.lockRetry = undefined;
      this.flush();
    }, pause);
    return true;
  }

  /**
   * Starts the checkpoint that is due, if any (see checkpointInBackground); true if it is one the
   * next batch waits for.
   */
  private startCheckpoint(): boolean {
    const c = this.checkpoint;
    if (!c || this.checkpointing || this.broken) return false;
    if (!this.restartDue) {
      if (this.sinceCheckpoint < c.every) return false;
      this.sinceCheckpoint = 0;
      this.besideTheBatches(c, 1);
      return false;
    }
    if (this.synced !== this.committed) return false;
    this.restartDue = false;
    // The count starts over: what was committed until now is what this one copies.
    this.sinceCheckpoint = 0;
    this.checkpointing = 'between';
    runCheckpoint(c.run).finally(() => {
      this.checkpointing = undefined;
      if (this.flushAfterSync) {
        this.flushAfterSync = false;
        this.schedule();
      }
    });
    return true;
  }

  /**
   * Round `round` of the checkpoints beside the batches. While many changes were committed during
   * one, another follows, so that the one between the batches, which they wait for, copies less.
   */
  private besideTheBatches(c: NonNullable<GroupCommit['checkpoint']>, round: number): void {
    this.checkpointing = 'beside';
    const from = this.sinceCheckpoint;
    runCheckpoint(c.run).finally(() => {
      this.checkpointing = undefined;
      // Not after a failed fsync: what the refused batch wrote is not to be copied again.
      if (this.broken) return;
      if (this.sinceCheckpoint - from > CATCH_UP_CHANGES && round < MAX_BESIDE && this.checkpoint === c) {
        this.besideTheBatches(c, round + 1);
        return;
      }
      this.restartDue = true;
      // While an fsync is in flight, its end starts the next step.
      if (!this.syncing) this.startCheckpoint();
    });
  }

  private restoreFull(): void {
    if (!this.relaxed) return;
    try {
      this.sqlite.exec('PRAGMA synchronous = FULL');
      this.relaxed = false;
    } catch {
      // Only fails inside a transaction, which every path above has ended.
    }
  }

  /** One fsync at a time; it covers every batch committed before it started. */
  private startSync(): void {
    if (this.syncing || this.broken || this.synced === this.committed) return;
    this.syncing = true;
    const upTo = this.committed;
    this.sync!().then(
      () => {
        this.synced = upTo;
        const done = this.waiting.filter((w) => w.seq <= upTo);
        this.waiting = this.waiting.filter((w) => w.seq > upTo);
        for (const w of done) w.settle();
      },
      (e: unknown) => {
        this.broken = e instanceof LedgerFileGone
          ? new AppError('unavailable', `${e.message}: no change is taken from now on; stop serve and look at the file before starting it again`, { cause: e })
          // The COMMIT went into SQLite's WAL; whether it reached the disk is not known.
          : new AppError('unavailable', `the ledger could not be flushed to disk (${(e as Error)?.message ?? String(e)}): this change may or may not have been kept; restart serve, then look it up before sending it again (a refund or withdrawal sent twice is done twice)`, { cause: e });
        this.onBroken?.(this.broken.message);
        const failed = this.waiting;
        this.waiting = [];
        for (const w of failed) w.fail(this.broken);
      },
    ).finally(() => {
      this.syncing = false;
      if (this.startCheckpoint()) return;
      // The next batch goes in on the next turn, not in this one: the answers of the batch just
      // made durable are written first, instead of waiting for the whole next batch to run and
      // commit. Their continuations run after this callback, several promise hops deep (service,
      // route, the durable mark), and queue their writes at this turn's end (turn-writes.ts): an
      // immediate queued here would run before those. This one only queues the flush, which
      // then runs after them, once the next poll has read the requests their answers bring.
      if (this.flushAfterSync) {
        this.flushAfterSync = false;
        this.answering = true;
        setImmediate(() => {
          this.answering = false;
          this.schedule();
        });
      }
      this.startSync();
    });
  }
}

interface Waiter {
  /** Settled once the batches up to this one are durable. */
  seq: number;
  settle: () => void;
  fail: (error: unknown) => void;
}

interface Pending {
  change: () => unknown;
  /** performance.now() when it was asked for: how long it has waited for the write lock. */
  at: number;
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

/** The path of serve's ledger no longer names the file it opened: deleted, moved or replaced. */
export class LedgerFileGone extends Error {
  constructor(path: string) {
    super(`the ledger file ${path} is not the file serve opened any more (deleted, moved or replaced while serve ran)`);
    this.name = 'LedgerFileGone';
  }
}

/**
 * A change SQLite could not make for want of disk is the ledger's trouble, said as such (503 over
 * HTTP, exit 3 on the CLI), not an internal error with a stack trace per request (a durability
 * review: 39,000 lines of stderr in 4 s). SQLite keeps nothing of it: the statement, or the whole
 * batch, is rolled back.
 */
function ledgerTrouble(e: unknown): unknown {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  if (code === 'SQLITE_FULL') {
    return new AppError('unavailable', "the ledger's disk is full: this change was not made; free space on the ledger's disk, then send it again", { cause: e });
  }
  return e;
}
