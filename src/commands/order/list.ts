import type { Context } from '../../context.js';
import { ORDER_STATUSES } from '../../core/types.js';
import { oneOf, pageNote, parseCursor, parseLimit, parseTimeRange } from '../common.js';
import { formatTime, merchantColumn, printJson, printTable, type Column } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, ORDER_STATUSES, 'status');
  const limit = parseLimit(opts.limit);
  const filter = { mchId: ctx.globals.mchId, status, uid: opts.uid, oid: opts.oid, ...parseTimeRange(opts, ctx.now()), cursor: parseCursor(opts.cursor), limit };
  const page = await (await ctx.service()).pageOrders(filter);
  if (ctx.globals.json) return printJson(ctx, page.items);
  const head: Array<string | Column> = ['id', { name: 'oid', text: true, minWidth: 8, priority: 8 }, { name: 'uid', text: true, minWidth: 8, priority: 7 }, { name: 'amount', priority: 9 }, { name: 'status', priority: 9 }, { name: 'paid', priority: 4 }, { name: 'refunded', priority: 3 }, { name: 'expires', priority: 5 }];
  const rows = page.items.map((o) => [o.id, o.oid, o.uid, o.amount, o.status, o.paidAmount, o.refundedAmount, formatTime(o.expiredAt)]);
  merchantColumn(page.items, head, rows);
  await printTable(ctx, head, rows);
  pageNote(ctx, page);
}
