import type { Context } from '../../context.js';
import { asking, confirmChange } from '../common.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
  const service = await ctx.service();
  const summary: [string, string][] = [['withdrawal', id]];
  if (asking(ctx)) {
    const w = await service.getWithdrawal(id, ctx.globals.mchId).catch(() => undefined);
    if (w) {
      const b = await service.balance(w.uid, { mchId: w.mchId });
      summary.push(
        ['amount', `${w.amount} to ${w.to}`],
        ['status', `${w.status} -> REJECTED`],
        ['user', `${w.uid}: ${w.amount} returns from held (${b.held}) to available (${b.available})`],
      );
    }
  }
  if (opts.remark) summary.push(['remark', opts.remark]);
  await confirmChange(ctx, 'Reject withdrawal', summary);
  const w = await service.rejectWithdrawal({ mchId: ctx.globals.mchId, id, remark: opts.remark });
  await printWithdrawal(ctx, w);
}
