import type { Context } from '../../context.js';
import { WITHDRAWAL_STATUSES } from '../../core/types.js';
import { oneOf, parseLimit } from '../common.js';
import { formatTime, printJson, printTable } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, WITHDRAWAL_STATUSES, 'status');
  const list = await (await ctx.service()).listWithdrawals({ mchId: ctx.globals.mchId, status, uid: opts.uid, limit: parseLimit(opts.limit) });
  if (ctx.globals.json) return printJson(ctx, list);
  await printTable(
    ctx,
    ['id', 'uid', 'amount', 'to', 'chain', 'status', 'tx hash', 'created'],
    list.map((w) => [w.id, w.uid, w.amount, w.to, `${w.chainType} ${w.chainId}`, w.status === 'PENDING' && w.txHash ? 'PENDING (confirmations)' : w.status, w.txHash, formatTime(w.createdAt)]),
  );
}
