import type { Context } from '../../context.js';
import { confirmChange, need } from '../common.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, logId: string): Promise<void> {
  const txHash = await need(ctx, opts.txHash, 'tx-hash', 'Payout transaction hash');
  const blockNumber = await need(ctx, opts.blockNumber, 'block-number', 'Block number');
  const service = await ctx.service();
  const summary: [string, string][] = [['withdrawal', logId]];
  if (!ctx.isRemote()) {
    const local = await ctx.local('withdraw confirm');
    const w = await local.getWithdrawal(logId, ctx.globals.mchId).catch(() => undefined);
    if (w) {
      const b = await local.balance(w.uid, { mchId: w.mchId });
      summary.push(
        ['pays out', `${w.amount} to ${w.to} (${w.chainType} ${w.chainId}, token ${w.token})`],
        ['status', `${w.status} -> CONFIRMED`],
        ['user', `${w.uid}: ${w.amount} of the ${b.held} held is paid out; available stays ${b.available}`],
      );
    }
  }
  summary.push(['transaction', `${txHash} in block ${blockNumber}`]);
  await confirmChange(ctx, 'Confirm withdrawal', summary);
  const w = await service.confirmWithdrawal({ mchId: ctx.globals.mchId, logId, txHash, blockNumber });
  await printWithdrawal(ctx, w);
}
