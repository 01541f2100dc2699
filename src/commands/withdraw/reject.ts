import type { Context } from '../../context.js';
import { asking, beforeAfter, confirmChange } from '../common.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
  const service = await ctx.service();
  const summary: [string, string][] = [['withdrawal', id]];
  if (asking(ctx)) {
    const w = await service.getWithdrawal(id, ctx.globals.mchId).catch(() => undefined);
    if (w) {
      const b = await service.balance(w.uid, { mchId: w.mchId });
      summary.push(
        ['amount', `${w.amount} ${b.asset} to ${w.to}`],
        ['status', `${w.status} -> REJECTED`],
        ['user', `${w.uid}: the hold of ${w.amount} ${b.asset} returns`],
        ['available', beforeAfter(b.available, w.amount, 1, b.asset)],
        ['held', beforeAfter(b.held, w.amount, -1, b.asset)],
      );
    }
  }
  if (opts.remark) summary.push(['remark', opts.remark]);
  await confirmChange(ctx, 'Reject withdrawal', summary);
  const w = await service.rejectWithdrawal({ mchId: ctx.globals.mchId, id, remark: opts.remark });
  await printWithdrawal(ctx, w);
}
