import type Database from 'better-sqlite3';
import { lte } from 'drizzle-orm';
import { AppError } from '../core/errors.js';
import { groupCommit } from './group-commit.js';
import { isBusy } from './ledger-file.js';
import type { Caller } from '../core/service.js';
import type { Ledger } from './db.js';
import type { Q } from './ledger.js';
import { nonces } from './schema.js';
import { statementsOf } from './statements.js';

/**
 * The nonce of a signed request (spec decisions §1): used up once the signature verified, whatever
 * the operation answers, so that one signed request is carried out at most once. A client retries
 * a refused request by signing it again with a new nonce.
 *
 * Three rules make "at most once" hold when copies of a request race each other:
 * - a change goes in with its nonce, in one transaction;
 * - a change refused inside its transaction keeps the nonce (its own work is rolled back to a
 *   savepoint, the nonce is not), so no copy can find the nonce unused after the refusal, not
 *   even in the same batch of the group commit or in another process;
 * - while a request is being carried out in this process, a copy of it is refused as a replay
 *   (`holdInFlight`): a refusal found before the transaction (an input check, a read of the chain)
 *   spends the nonce in a write of its own, and a copy checked before that write must not run.
 */

/** The refusal of a replayed request. */
export const NONCE_USED = 'nonce has already been used';
/**
 * The refusal of a copy of a request that is still being carried out in this process (a client
 * that gave up waiting and sent the same body again): its nonce is not used up yet, and may never
 * be (the first copy may still fail with a 503, the ledger busy or its disk full, keeping nothing).
 * It says so, so that the client waits for the first answer instead of taking this one for "done".
 * It begins with NONCE_USED's words, which a client may be matching.
 */
export const NONCE_IN_FLIGHT = `${NONCE_USED}, or is about to be: a copy of this request is still being carried out, and that copy's own answer says whether it was done`;
/** Either refusal of a nonce already taken. */
export const isNonceTaken = (e: unknown): boolean => e instanceof AppError && e.message.startsWith(NONCE_USED);

type Nonce = NonNullable<Caller['nonce']>;

/** Per ledger connection: the nonces of the signed requests this process is carrying out. */
const inFlight = new WeakMap<Ledger, Set<string>>();

/**
 * Marks `nonce` as being carried out until the returned function is called; refuses it as a
 * replay if a copy of the request already is.
 */
export function holdInFlight(ledger: Ledger, nonce: Nonce): () => void {
  let held = inFlight.get(ledger);
  if (!held) inFlight.set(ledger, (held = new Set()));
  const key = `${nonce.merchantId}\n${nonce.value}`;
  if (held.has(key)) throw new AppError('unauthorized', NONCE_IN_FLIGHT);
  held.add(key);
  return () => held.delete(key);
}

/** True if the nonce is already used up in the ledger (a replay, answered as one before any work). */
export function nonceUsed(ledger: Ledger, nonce: Nonce): boolean {
  return statementsOf(ledger).nonceSeen.get({ merchantId: nonce.merchantId, nonce: nonce.value }) !== undefined;
}

/** Uses the nonce up in the transaction `tx` is in; refuses a nonce already used. */
export function useNonce(ledger: Ledger, tx: Q, nonce: Nonce, now: number): void {
  const inserted = statementsOf(ledger).insertNonce.run({ merchantId: nonce.merchantId, nonce: nonce.value, expiresAt: nonce.expiresAt });
  if (inserted.changes === 0) throw new AppError('unauthorized', NONCE_USED);
  // Forget nonces whose timestamps can no longer pass the freshness window; a little at a time.
  if (Math.random() < 0.01) tx.delete(nonces).where(lte(nonces.expiresAt, now)).run();
}

/** A refusal that spends the nonce: a refusal of the operation, not the ledger being unavailable. */
export function spendsNonce(e: unknown): e is AppError {
  return e instanceof AppError && !isNonceTaken(e) && e.kind !== 'unavailable';
}

export type Outcome<T> = { value: T } | { refused: AppError };

/**
 * Runs `change` in a savepoint of its own inside the transaction that used the nonce up: a
 * refusal (an AppError) rolls the change back to it and is returned, so the transaction commits
 * with the nonce in it; anything else (a failure of the ledger) is thrown and takes the nonce
 * back with the rest.
 */
export function refusalKeepsNonce<T>(sqlite: Database.Database, change: () => T): Outcome<T> {
  const s = savepoints(sqlite);
  s.begin.run();
  try {
    const value = change();
    s.release.run();
    return { value };
  } catch (e) {
    if (!spendsNonce(e) || !sqlite.inTransaction) throw e;
    s.rollbackTo.run();
    s.release.run();
    return { refused: e };
  }
}

const prepared = new WeakMap<Database.Database, { begin: Database.Statement; release: Database.Statement; rollbackTo: Database.Statement }>();

function savepoints(sqlite: Database.Database) {
  let s = prepared.get(sqlite);
  if (!s) {
    s = { begin: sqlite.prepare('SAVEPOINT signed_change'), release: sqlite.prepare('RELEASE signed_change'), rollbackTo: sqlite.prepare('ROLLBACK TO signed_change') };
    prepared.set(sqlite, s);
  }
  return s;
}

/**
 * The writes of one caller, with its nonce when the caller is a signed request (the service's
 * facade, src/store/local-service.ts, holds one per caller).
 */
export class SignedWriter {
  /** The nonce went into the ledger with a change of this writer's, done or refused. */
  private nonceSpent = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly nonce: Nonce | undefined,
    private readonly now: () => number,
  ) {}

  /**
   * Every change runs in a BEGIN IMMEDIATE transaction (writers queue on the file lock instead of
   * failing), shared through group commit with the other changes of this event-loop turn, each
   * in its own savepoint (src/store/group-commit.ts). The nonce of a signed request is used up
   * in the same transaction, and stays used up when the change is refused. Settles once it is
   * durable.
   */
  async write<T>(fn: (tx: Q) => T): Promise<T> {
    const n = this.nonce;
    const { db, sqlite } = this.ledger;
    let outcome: Outcome<T>;
    try {
      outcome = await groupCommit(sqlite).submit((): Outcome<T> => {
        if (!n) return { value: fn(db) };
        useNonce(this.ledger, db, n, this.now());
        return refusalKeepsNonce(sqlite, () => fn(db));
      });
      if (n) this.nonceSpent = true;
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (isBusy(e)) throw new AppError('unavailable', 'the ledger is busy: another process held it too long; try again', { cause: e });
      throw e;
    }
    if ('refused' in outcome) throw outcome.refused;
    return outcome.value;
  }

  /**
   * A signed request refused before its operation (the rate limit): its nonce is used up all the
   * same (spec decisions §1), in a transaction of its own. A nonce already used, or in use by a
   * copy of the request being carried out, is refused as a replay. Without a nonce, nothing to do.
   */
  async spendNonce(): Promise<void> {
    if (!this.nonce) return;
    const release = holdInFlight(this.ledger, this.nonce);
    try {
      await this.write(() => undefined);
    } finally {
      release();
    }
  }

  /**
   * A signed operation (decisions §1): its nonce is used up as soon as the signature verified,
   * whatever the operation answers. On success the nonce went in with the change; on a refusal in
   * the change's transaction it stayed in; on a refusal before it (an input check, a read of the
   * chain) it is written on its own before the refusal is answered, so the same body cannot be
   * replayed later when the state has changed (a balance topped up). While it runs, a copy of the
   * request is refused as a replay.
   */
  async op<T>(op: () => Promise<T>, opts: { replayCheckedByWrite?: boolean } = {}): Promise<T> {
    const n = this.nonce;
    if (!n) return op();
    const release = holdInFlight(this.ledger, n);
    try {
      // A replay is answered as one before anything else is checked (the write checks it again).
      // An operation whose only work before its write is checking its input (create order: no
      // read of the chain, no other I/O) leaves it to the write, which uses the nonce up first
      // thing in its transaction: one read of the ledger fewer per request, and a replay refused
      // by that check, or by the one below when its input is refused first.
      if (!opts.replayCheckedByWrite && nonceUsed(this.ledger, n)) throw new AppError('unauthorized', NONCE_USED);
      try {
        return await op();
      } catch (e) {
        if (spendsNonce(e) && !this.nonceSpent) {
          let replayed: AppError | undefined;
          await this.write(() => undefined).catch((spent: unknown) => {
            if (!isNonceTaken(spent)) throw spent;
            // Already used: by an earlier copy of this request (a replay, answered as one), or by
            // a copy in another process: spent all the same.
            replayed = spent as AppError;
          });
          if (replayed && opts.replayCheckedByWrite) throw replayed;
        }
        throw e;
      }
    } finally {
      release();
    }
  }

  /**
   * A signed read (the extension endpoints, decisions §12): its nonce is used up like any signed
   * request's, once the read has succeeded (op spends it on a refusal). Without a nonce (the CLI
   * on a local ledger) it is the plain read.
   */
  async read<T>(read: () => T | Promise<T>): Promise<T> {
    if (!this.nonce) return read();
    return this.op(async () => {
      const result = await read();
      await this.write(() => undefined);
      return result;
    });
  }
}
