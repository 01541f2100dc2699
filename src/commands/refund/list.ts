import type { Context } from '../../context.js';
import { pageNote, parseCursor, parseLimit } from '../common.js';
import { formatTime, printJson, printTable } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const service = await ctx.local('refund list');
  // --order takes an order's id or its oid, like order show.
  const orderId = opts.order === undefined ? undefined : (await service.orderByRef(opts.order, ctx.globals.mchId)).id;
  const page = await service.pageRefunds({ orderId, mchId: ctx.globals.mchId, limit: parseLimit(opts.limit), cursor: parseCursor(opts.cursor) });
  if (ctx.globals.json) return printJson(ctx, page.items);
  await printTable(ctx, ['refund', 'order', 'oid', 'amount', 'remark', 'time'], page.items.map((r) => [r.refundId, r.id, r.oid, r.amount, r.remark, formatTime(r.refundTime)]));
  pageNote(ctx, page);
}
