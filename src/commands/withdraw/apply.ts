import type { Context } from '../../context.js';
import { need } from '../common.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const uid = await need(ctx, opts.uid, 'uid', 'User id');
  const amount = await need(ctx, opts.amount, 'amount', 'Amount');
  const to = await need(ctx, opts.to, 'to', 'Target address');
  const chainId = await need(ctx, opts.chainId, 'chain-id', 'Chain id (1, 56, 137, 728126428)');
  const chainType = await need(ctx, opts.chainType, 'chain-type', 'Chain type (EVM or TRON)');
  const token = await need(ctx, opts.token, 'token', 'Token contract');
  const service = await ctx.service();
  const w = await service.applyWithdrawal({
    mchId: ctx.globals.mchId,
    uid,
    amount,
    to,
    chainId,
    chainType: chainType.toUpperCase() as 'EVM' | 'TRON',
    token,
    notifyUrl: opts.notifyUrl,
  });
  await printWithdrawal(ctx, w);
}
