import { eq, sql } from 'drizzle-orm';
import { conflict } from '../core/errors.js';
import { sessionOf, type Q } from './ledger.js';
import { txKeys } from './schema.js';

/**
 * One transaction, one key (issue #10 item 4). A hash is 32 bytes whatever its spelling (`0x`
 * or not, upper or lower case: EVM writes 0x, TRON does not), so the ledger keys it by those bytes:
 * 64 lower-case hex digits. The key is unique across payments and withdrawals: a hash that paid
 * into the ledger can never confirm a payout, nor the other way round.
 */
export function txKey(hash: string): string {
  const h = hash.toLowerCase();
  return h.startsWith('0x') ? h.slice(2) : h;
}

export type TxUse = 'payment' | 'withdrawal';

/**
 * Claims the key of `hash` for one use, inside the caller's transaction. `shared` is for a payment
 * found on chain: another Transfer log of the same transaction may pay another order (its
 * (chain, key, log index) is unique on its own), but nothing recorded by hand may reuse the key.
 *
 * The refusal is the same whoever holds the key: it never names an order, a withdrawal or a
 * merchant, so a merchant cannot learn what another did with a transaction.
 */
function prepareKeyStatements(tx: Q) {
  const p = sql.placeholder;
  return {
    held: tx.select({ use: txKeys.use, shared: txKeys.shared }).from(txKeys).where(eq(txKeys.key, p('key'))).prepare(),
    claim: tx.insert(txKeys).values({ key: p('key'), use: p('use'), shared: p('shared'), createdAt: p('createdAt') }).prepare(),
  };
}
const keyStatements = new WeakMap<object, ReturnType<typeof prepareKeyStatements>>();

export function claimTxKey(tx: Q, hash: string, use: TxUse, opts: { shared: boolean; now: number }): string {
  const key = txKey(hash);
  let st = keyStatements.get(sessionOf(tx));
  if (!st) keyStatements.set(sessionOf(tx), (st = prepareKeyStatements(tx)));
  const held = st.held.get({ key });
  if (held) {
    if (!(opts.shared && held.shared && held.use === use)) throw alreadyRecorded(hash);
    return key;
  }
  st.claim.run({ key, use, shared: opts.shared, createdAt: opts.now });
  return key;
}

export function alreadyRecorded(hash: string) {
  return conflict(`transaction ${hash} is already recorded in this ledger`);
}
