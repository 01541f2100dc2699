import type { Context } from '../../context.js';
import { need } from '../common.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const oid = await need(ctx, opts.oid, 'oid', 'Merchant order number (oid)');
  const uid = await need(ctx, opts.uid, 'uid', 'User id (uid)');
  const amount = await need(ctx, opts.amount, 'amount', 'Amount');
  const service = await ctx.service();
  const order = await service.createOrder({
    mchId: ctx.globals.mchId,
    oid,
    uid,
    amount,
    memo: opts.memo,
    expiredAt: opts.expiredAt,
    notifyUrl: opts.notifyUrl,
    redirectUrl: opts.redirectUrl,
    logo: opts.logo,
  });
  await printOrder(ctx, order);
}
