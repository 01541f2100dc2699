import type { Context } from '../../context.js';
import { beforeAfter, confirmChange } from '../common.js';
import { formatTime } from '../output.js';
import { printOrder } from '../views.js';
import { heldDecision, type HeldOptions } from './held-ref.js';

/** `order credit-held <id>`: credits a held payment to the order's user, as a late payment. */
export async function run(ctx: Context, opts: HeldOptions, id: string): Promise<void> {
  const { ref, service, p } = await heldDecision(ctx, opts, id, 'order credit-held');
  if (p) {
    const before = await service.balance(p.uid, { mchId: p.mchId, asset: p.asset });
    await confirmChange(ctx, p.refused ? 'Credit a refused payment to its user by hand' : 'Credit a held payment', [
      ['order', p.refused ? `${p.orderId} (oid ${p.oid}): stays as it is` : `${p.orderId} (oid ${p.oid}), expired ${formatTime(p.expiredAt)}`],
      ['payment', `${p.amount} ${p.asset} in tx ${p.txHash} log ${p.logIndex} on chain ${p.chainId}${p.refused ? ', refused by the ledger (its transaction confirms a withdrawal)' : ''}`],
      ['user', `${p.uid}: available ${beforeAfter(before.available, p.amount, 1, p.asset)}`],
      ['reason', ref.reason],
    ]);
  }
  const { recordedByHand, ...order } = await service.creditHeldPayment(ref);
  // Recorded by hand before (order mark-paid): matched to that record, nothing credited now.
  if (recordedByHand) {
    const differs = recordedByHand.amount !== recordedByHand.onChain ? `; the chain moved ${recordedByHand.onChain}: settle the difference with cryptopay balance adjust` : '';
    ctx.io.stderr.write(`note: tx ${ref.txHash} was recorded by hand for this order as ${recordedByHand.amount}: matched to that record, nothing was credited now${differs}\n`);
  }
  await printOrder(ctx, order);
}
