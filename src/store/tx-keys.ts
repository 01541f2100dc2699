import { and, eq, sql } from 'drizzle-orm';
import { conflict } from '../core/errors.js';
import { audit, sessionOf, type Q } from './ledger.js';
import { txKeys } from './schema.js';

/**
 * One transaction, one key (issue #10 item 4). A hash is 32 bytes whatever its spelling (`0x`
 * or not, upper or lower case: EVM writes 0x, TRON does not), so the ledger keys it by those bytes:
 * 64 lower-case hex digits. A hash that paid into the ledger can never confirm a payout, nor the
 * other way round within a merchant.
 *
 * Who holds a key (docs/decisions.md, "Who holds a transaction"): a payment (found by the watcher
 * or recorded by an operator) holds it in the whole ledger (scope ''); a payout, verified on chain
 * or not, within its own merchant (scope: the merchant's id). Before, a payout held it for the
 * whole ledger, and another merchant could take it first: an outside review took another
 * merchant's incoming payment's hash from the mempool with a 0.000001 payout on a chain nobody
 * verifies (the watcher then refused that payment), and a second review did the same with a
 * *verified* payout to the victim's own payee (the chain check matches token, payee and amount,
 * not who sent it), so that the victim could never confirm its own real payout. A payout only
 * settles its own merchant's hold: it needs no one else's transaction kept from it.
 */
export function txKey(hash: string): string {
  const h = hash.toLowerCase();
  return h.startsWith('0x') ? h.slice(2) : h;
}

/** txKey() in SQL, of a column holding a hash as written (`0x` or not, any case). */
export const txKeySql = (column: string) => `(case when lower(substr(${column}, 1, 2)) = '0x' then lower(substr(${column}, 3)) else lower(${column}) end)`;

export type TxUse = 'payment' | 'withdrawal';

/** Who claims a key: the merchant whose payment or payout it is. */
export interface TxClaimant {
  merchantId: string;
}

interface KeyRow {
  scope: string;
  use: string;
  shared: boolean;
}

function prepareKeyStatements(tx: Q) {
  const p = sql.placeholder;
  return {
    held: tx.select({ scope: txKeys.scope, use: txKeys.use, shared: txKeys.shared }).from(txKeys).where(eq(txKeys.key, p('key'))).prepare(),
    claim: tx.insert(txKeys).values({ key: p('key'), scope: p('scope'), use: p('use'), shared: p('shared'), createdAt: p('createdAt') }).prepare(),
  };
}
const keyStatements = new WeakMap<object, ReturnType<typeof prepareKeyStatements>>();
function keyStmts(tx: Q) {
  let st = keyStatements.get(sessionOf(tx));
  if (!st) keyStatements.set(sessionOf(tx), (st = prepareKeyStatements(tx)));
  return st;
}

/** The rows that stand in this claimant's way: the whole ledger's, and its own merchant's. */
function inTheWay(rows: KeyRow[], who: TxClaimant): KeyRow[] {
  return rows.filter((r) => r.scope === '' || r.scope === who.merchantId);
}

/**
 * Whether `hash` is taken for this claimant (a question before the chain is asked: a hash
 * already in the ledger is refused without a node round trip).
 */
export function txKeyTaken(tx: Q, hash: string, who: TxClaimant): boolean {
  return inTheWay(keyStmts(tx).held.all({ key: txKey(hash) }), who).length > 0;
}

/**
 * Claims the key of `hash` for one use, inside the caller's transaction. `shared` is for a payment
 * found on chain: another Transfer log of the same transaction may pay another order (its
 * (chain, key, log index) is unique on its own), but nothing recorded by hand may reuse the key.
 *
 * The refusal is the same whoever holds the key: it never names an order, a withdrawal or a
 * merchant, so a merchant cannot learn what another did with a transaction.
 */
export function claimTxKey(tx: Q, hash: string, use: TxUse, opts: { shared: boolean; now: number } & TxClaimant): string {
  const key = txKey(hash);
  const st = keyStmts(tx);
  const rows = st.held.all({ key });
  const scope = use === 'withdrawal' ? opts.merchantId : '';
  for (const held of inTheWay(rows, opts)) {
    if (!(opts.shared && held.shared && held.use === use && held.scope === scope)) throw alreadyRecorded(hash);
  }
  if (rows.some((r) => r.scope === scope)) return key;
  st.claim.run({ key, scope, use, shared: opts.shared, createdAt: opts.now });
  if (scope === '') namedByPayouts(tx, key, rows, opts.now);
  return key;
}

/**
 * Other merchants' payouts that name the transaction a payment now holds: an audit entry on each,
 * for the ledger's operator (no merchant: a merchant's own log would tell it when another
 * merchant was paid; a second outside review used it as a tripwire). Nothing is changed.
 */
function namedByPayouts(tx: Q, key: string, rows: KeyRow[], now: number): void {
  for (const r of rows) {
    if (r.scope === '') continue;
    for (const id of payoutsNaming(tx, r.scope, key)) {
      audit(tx, {
        at: now, actor: 'ledger', action: 'withdrawal.transaction_recorded_elsewhere', merchantId: null, subjectType: 'withdrawal', subjectId: id,
        detail: { txKey: key, merchant: r.scope, note: "this payout's transaction is also a payment into another merchant's order: check the payout on chain" },
      });
    }
  }
}

/** The merchant's withdrawals whose payout transaction has this key (any spelling of the hash). */
export function payoutsNaming(tx: Q, merchantId: string, key: string): string[] {
  return tx.all<{ id: string }>(sql`select id from withdrawals where merchant_id = ${merchantId} and tx_hash is not null and ${sql.raw(txKeySql('tx_hash'))} = ${key}`).map((r) => r.id);
}

/**
 * A payment recorded by hand that the watcher found on chain (src/store/payments.ts): its key is
 * then shared as one the watcher recorded, so that the transaction's logs to other orders count.
 */
export function shareTxKey(tx: Q, hash: string): void {
  tx.update(txKeys).set({ shared: true }).where(and(eq(txKeys.key, txKey(hash)), eq(txKeys.scope, ''), eq(txKeys.use, 'payment'))).run();
}

/**
 * A transfer recorded as sent back to its payer (`order return-held`) holds its key in the whole
 * ledger as a payment the watcher found would (shared: the transaction's other logs still count),
 * so that no order is credited with it by hand afterwards (a second outside review credited one).
 */
export function holdReturnedTxKey(tx: Q, hash: string, now: number): void {
  tx.insert(txKeys).values({ key: txKey(hash), scope: '', use: 'payment', shared: true, createdAt: now }).onConflictDoNothing().run();
}

/** Gives up a payout's key (its confirmation was dropped: src/store/withdrawal-verification.ts). */
export function releaseTxKey(tx: Q, hash: string, merchantId: string): void {
  tx.delete(txKeys).where(and(eq(txKeys.key, txKey(hash)), eq(txKeys.scope, merchantId), eq(txKeys.use, 'withdrawal'))).run();
}

export function alreadyRecorded(hash: string) {
  return conflict(`transaction ${hash} is already recorded in this ledger`);
}
