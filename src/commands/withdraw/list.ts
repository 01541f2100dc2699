import type { Context } from '../../context.js';
import { WITHDRAWAL_STATUSES } from '../../core/types.js';
import { oneOf, pageNote, pageOfList, parseCursor, parseLimit, parseTimeRange } from '../common.js';
import { formatTime, printJson, printTable } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, WITHDRAWAL_STATUSES, 'status');
  const limit = parseLimit(opts.limit);
  const filter = { mchId: ctx.globals.mchId, status, uid: opts.uid, ...parseTimeRange(opts, ctx.now()), cursor: parseCursor(opts.cursor), limit };
  const page = await pageOfList(
    ctx,
    limit,
    ctx.isRemote() ? undefined : async () => (await ctx.local('withdraw list')).pageWithdrawals(filter),
    async () => (await ctx.service()).listWithdrawals(filter),
  );
  if (ctx.globals.json) return printJson(ctx, page.items);
  await printTable(
    ctx,
    ['id', 'uid', 'amount', 'to', 'chain', 'status', 'tx hash', 'created'],
    page.items.map((w) => [w.id, w.uid, w.amount, w.to, `${w.chainType} ${w.chainId}`, w.status === 'PENDING' && w.txHash ? 'PENDING (confirmations)' : w.status, w.txHash, formatTime(w.createdAt)]),
  );
  pageNote(ctx, page);
}
