import type { Context } from '../../context.js';
import { withdrawalAfter } from '../../core/state.js';
import { asking, beforeAfter, checked, isNotFound, confirmChange } from '../common.js';
import { actForOwner } from '../owner.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
  // By the interface's rule, before anything is read or asked (as refund's --remark).
  checked(opts.remark, 'remark');
  await actForOwner(ctx, { withdrawal: id });
  const service = await ctx.service();
  const summary: [string, string][] = [['withdrawal', id]];
  if (asking(ctx)) {
    // Not there, or no longer pending: refused before the question, in the operation's words
    // (which checks again on the state it finds). Another failure to read leaves it to the operation.
    const w = await service.getWithdrawal(id, ctx.globals.mchId).catch((e) => (isNotFound(e) ? Promise.reject(e) : undefined));
    if (w) {
      withdrawalAfter(w.status, 'reject');
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
