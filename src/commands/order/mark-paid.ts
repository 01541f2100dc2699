import type { Context } from '../../context.js';
import { checked, confirmChange, credited, need } from '../common.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
  checked(opts.txHash, 'tx-hash');
  checked(opts.amount, 'amount');
  checked(opts.chainType, 'chain-type');
  checked(opts.chainId, 'chain-id');
  const txHash = await need(ctx, opts.txHash, 'tx-hash', 'Transaction hash of the payment');
  const service = await ctx.local('order mark-paid');
  const order = await service.getOrder(id, ctx.globals.mchId);
  const amount = opts.amount ?? order.amount;
  const before = await service.balance(order.uid, { mchId: order.mchId, asset: order.asset });
  await confirmChange(ctx, 'Record a payment', [
    ['order', `${order.id} (oid ${order.oid}, ${order.status})`],
    ['order amount', `${order.amount} ${order.asset}, paid so far ${order.paidAmount} ${order.asset}`],
    ['payment', `${amount} ${order.asset} in tx ${txHash}`],
    ['user', `${order.uid}: available ${credited(before.available, amount, order.asset)}`],
  ]);
  const updated = await service.markPaid({
    id,
    txHash,
    amount: opts.amount,
    chainType: opts.chainType?.toUpperCase(),
    chainId: opts.chainId,
    token: opts.token,
  });
  await printOrder(ctx, updated);
}
