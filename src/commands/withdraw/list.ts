import type { Context } from '../../context.js';
import { WITHDRAWAL_STATUSES } from '../../core/types.js';
import { oneOf, pageNote, parseCursor, parseLimit, parseTimeRange } from '../common.js';
import { formatTime, printJson, printTable } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, WITHDRAWAL_STATUSES, 'status');
  const limit = parseLimit(opts.limit);
  const range = parseTimeRange(opts, ctx.now());
  const cursor = parseCursor(opts.cursor);
  const page = await (await ctx.local('withdraw list')).pageWithdrawals({ mchId: ctx.globals.mchId, status, uid: opts.uid, ...range, limit, cursor });
  if (ctx.globals.json) return printJson(ctx, page.items);
  await printTable(
    ctx,
    ['id', 'uid', 'amount', 'to', 'chain', 'status', 'tx hash', 'created'],
    page.items.map((w) => [w.id, w.uid, w.amount, w.to, `${w.chainType} ${w.chainId}`, w.status === 'PENDING' && w.txHash ? 'PENDING (confirmations)' : w.status, w.txHash, formatTime(w.createdAt)]),
  );
  pageNote(ctx, page);
}
