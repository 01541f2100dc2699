import type Database from 'better-sqlite3';
import { lte } from 'drizzle-orm';
import { AppError } from '../core/errors.js';
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
  if (held.has(key)) throw new AppError('unauthorized', NONCE_USED);
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

/** Refusals whose nonce was used up in the refused change's own transaction. */
const spentWithRefusal = new WeakSet<object>();

/** True if `e` is a refusal that already used its request's nonce up. */
export function nonceSpentBy(e: unknown): boolean {
  return typeof e === 'object' && e !== null && spentWithRefusal.has(e);
}

/** A refusal that spends the nonce: a refusal of the operation, not the ledger being unavailable. */
export function spendsNonce(e: unknown): e is AppError {
  return e instanceof AppError && e.message !== NONCE_USED && e.kind !== 'unavailable';
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
    spentWithRefusal.add(e);
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
