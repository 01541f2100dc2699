import type { Context } from '../../context.js';
import { confirmChange } from '../common.js';
import { formatTime } from '../output.js';
import { printOrder } from '../views.js';
import { findHeld, heldReference, type HeldOptions } from './held-ref.js';

/** `order credit-held <id>`: credits a held payment to the order's user, as a late payment. */
export async function run(ctx: Context, opts: HeldOptions, id: string): Promise<void> {
  const ref = await heldReference(ctx, opts, id);
  const service = await ctx.local('order credit-held');
  const p = await findHeld(service, ref);
  if (p) {
    const before = await service.balance(p.uid, { mchId: p.mchId, asset: p.asset });
    await confirmChange(ctx, 'Credit a held payment', [
      ['order', `${p.orderId} (oid ${p.oid}), expired ${formatTime(p.expiredAt)}`],
      ['payment', `${p.amount} ${p.asset} in tx ${p.txHash} log ${p.logIndex} on chain ${p.chainId}`],
      ['user', `${p.uid}: available ${before.available} -> credited ${p.amount}`],
      ['reason', ref.reason],
    ]);
  }
  await printOrder(ctx, await service.creditHeldPayment(ref));
}
