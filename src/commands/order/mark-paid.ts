import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { checked, confirmChange, credited, need } from '../common.js';
import { printOrder } from '../views.js';
import { orderByRef } from './ref.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
  checked(opts.txHash, 'tx-hash');
  checked(opts.amount, 'amount');
  checked(opts.chainType, 'chain-type');
  checked(opts.chainId, 'chain-id');
  checked(opts.token, 'token');
  if (opts.token !== undefined && opts.chainId === undefined) throw usage('--token needs --chain-id: the chain the token is on');
  const txHash = await need(ctx, opts.txHash, 'tx-hash', 'Transaction hash of the payment');
  const service = await ctx.local('order mark-paid');
  // The chain and token as the ledger knows them, before the question (markPaid asks again).
  if (opts.chainId !== undefined) {
    const { paymentChain } = await import('../../store/payments.js');
    paymentChain(await service.registry(), { chainType: opts.chainType?.toUpperCase(), chainId: opts.chainId, token: opts.token });
  }
  // By id or oid, as order show and order status take it.
  const order = await orderByRef(ctx, id);
  const amount = opts.amount ?? order.amount;
  const before = await service.balance(order.uid, { mchId: order.mchId, asset: order.asset });
  await confirmChange(ctx, 'Record a payment', [
    ['order', `${order.id} (oid ${order.oid}, ${order.status})`],
    ['order amount', `${order.amount} ${order.asset}, paid so far ${order.paidAmount} ${order.asset}`],
    ['payment', `${amount} ${order.asset} in tx ${txHash}`],
    ['user', `${order.uid}: available ${credited(before.available, amount, order.asset)}`],
  ]);
  const updated = await service.markPaid({
    id: order.id,
    txHash,
    amount: opts.amount,
    chainType: opts.chainType?.toUpperCase(),
    chainId: opts.chainId,
    token: opts.token,
  });
  await printOrder(ctx, updated);
}
