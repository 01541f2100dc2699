import { sql } from 'drizzle-orm';
import { conflict } from '../core/errors.js';
import type { Q } from './ledger.js';
import { alreadyRecorded, claimTxKey, txKey, txKeySql, txKeyTaken } from './tx-keys.js';

/**
 * Which withdrawals a payout transaction may confirm (decisions.md, "A batch payout"). A payout
 * checked on chain holds its transaction's key shared within its merchant, so that one batch
 * transaction (a transfer to each payee) confirms every withdrawal it pays; each withdrawal is
 * paid by a transfer of its own amount to its own address, so two withdrawals of one
 * transaction may not have the same amount, token and address (one transfer pays one
 * withdrawal). A payout not checked on chain (--unverified, a chain without rpcUrl) holds the key
 * alone, as before: nothing says which of the transaction's transfers it was.
 */

/** What a withdrawal needs for its payout's key. */
export interface PayoutClaimant {
  id: string;
  merchantId: string;
  chainId: string;
  token: string;
  to: string;
  amount: number | bigint;
}

/** Another withdrawal of the merchant that this transaction already pays the same amount of the same token to the same address. */
export function samePayout(tx: Q, w: PayoutClaimant, txHash: string): string | undefined {
  // `to` and `token` are stored in their canonical spelling (EIP-55, base58check): compared as they are.
  const row = tx.get<{ id: string }>(sql`select id from withdrawals
    where merchant_id = ${w.merchantId} and id <> ${w.id} and tx_hash is not null and ${sql.raw(txKeySql('tx_hash'))} = ${txKey(txHash)}
      and chain_id = ${w.chainId} and token = ${w.token} and to_address = ${w.to} and amount = ${w.amount}
    limit 1`);
  return row?.id;
}

/** Whether the key of `txHash` stands in the way of this withdrawal (before the chain is asked). */
export function payoutKeyTaken(tx: Q, w: PayoutClaimant, txHash: string, verified: boolean): boolean {
  return txKeyTaken(tx, txHash, { merchantId: w.merchantId }, { sharedPayout: verified }) || (verified && samePayout(tx, w, txHash) !== undefined);
}

/** Claims the key of a withdrawal's payout transaction, inside the caller's transaction; refuses one it cannot take. */
export function claimPayoutKey(tx: Q, w: PayoutClaimant, txHash: string, a: { verified: boolean; now: number }): void {
  claimTxKey(tx, txHash, 'withdrawal', { shared: a.verified, now: a.now, merchantId: w.merchantId });
  if (!a.verified) return;
  const twin = samePayout(tx, w, txHash);
  if (twin !== undefined) {
    throw conflict(`${alreadyRecorded(txHash).message}: it pays withdrawal ${twin} the same amount to the same address, and one transfer pays one withdrawal`);
  }
}
