import { sql } from 'drizzle-orm';
import { conflict } from '../core/errors.js';
import type { Q } from './ledger.js';

/**
 * A deep reorg holds back what would leave on the payments it took (docs/decisions.md, "A deep
 * reorg holds back"). A counted payment whose block a reorg deeper than the chain's confirmations
 * replaced, and that was not mined again, stays credited: nothing is taken back by itself. But
 * until the service's operator has checked it (`cryptopay chains --ack-reorg`), the user it
 * credited withdraws nothing and its order is not refunded: the payer may never have paid, and a
 * withdrawal paid out meanwhile could not be recovered (an attacker review of 2026-11-25 withdrew
 * such a credit at once). Marked by reportDeepReorg, cleared by acknowledgeDeepReorg (chain-state.ts).
 */

interface Taken {
  orderId: string;
  txHash: string;
  chainId: string;
}

const until = (chainId: string) => `until the service's operator has checked it (cryptopay chains --ack-reorg ${chainId}); nothing was changed`;
const took = (chainId: string) => `a payment that a reorg deeper than chain ${chainId}'s confirmations took off the chain`;

/** Refuses a withdrawal of a user a reorged payment credited. */
export function refuseReorgedUser(q: Q, merchantId: string, uid: string): void {
  const t = q.get<Taken>(sql`select p.order_id as orderId, p.tx_hash as txHash, p.chain_id as chainId from payments p join orders o on o.id = p.order_id
    where p.reorged_at is not null and o.merchant_id = ${merchantId} and o.uid = ${uid} limit 1`);
  if (t) throw conflict(`user ${uid} was credited by ${took(t.chainId)} (order ${t.orderId}, transaction ${t.txHash}): nothing leaves for this user ${until(t.chainId)}`);
}

/** Refuses a refund of an order a reorged payment paid. */
export function refuseReorgedOrder(q: Q, orderId: string): void {
  const t = q.get<Taken>(sql`select order_id as orderId, tx_hash as txHash, chain_id as chainId from payments where reorged_at is not null and order_id = ${orderId} limit 1`);
  if (t) throw conflict(`order ${orderId} was paid by ${took(t.chainId)} (transaction ${t.txHash}): it is not refunded ${until(t.chainId)}`);
}
