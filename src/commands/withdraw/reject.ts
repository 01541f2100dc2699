import type { Context } from '../../context.js';
import { withdrawalAfter } from '../../core/state.js';
import { usage } from '../../core/errors.js';
import { asking, beforeAfter, checked, isNotFound, confirmChange } from '../common.js';
import { actForOwner } from '../owner.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>, id: string): Promise<void> {
  const remark = typeof opts.remark === 'string' ? opts.remark : undefined;
  const unverified = opts.unverified === true;
  const reason = typeof opts.reason === 'string' ? opts.reason.trim() : undefined;
  if (unverified && !reason) throw usage('--unverified needs --reason TEXT: why the chain is not asked whether it was paid out (kept in the audit log)');
  if (!unverified && opts.reason !== undefined) throw usage('--reason goes with --unverified');
  // By the interface's rule, before anything is read or asked (as refund's --remark).
  checked(remark, 'remark');
  checked(reason, 'reason');
  const local = unverified ? await ctx.local('withdraw reject --unverified') : undefined;
  await actForOwner(ctx, { withdrawal: id });
  const service = local ?? (await ctx.service());
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
  if (remark) summary.push(['remark', remark]);
  if (unverified) summary.push(['chain', `NOT asked whether it was paid out: ${reason}`]);
  await confirmChange(ctx, 'Reject withdrawal', summary);
  const input = { mchId: ctx.globals.mchId, id, remark };
  const w = local ? await local.rejectWithdrawalUnverified(input, reason!) : await service.rejectWithdrawal(input);
  await printWithdrawal(ctx, w);
}
