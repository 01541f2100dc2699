import type { Context } from '../../context.js';
import { pageNote, parseCursor, parseLimit } from '../common.js';
import { formatTime, merchantColumn, printJson, printTable, type Column } from '../output.js';
import { orderIdOf } from '../order/ref.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const limit = parseLimit(opts.limit);
  const cursor = parseCursor(opts.cursor);
  // --order takes an order's id or its oid, like order show.
  const filter = { orderId: await orderIdOf(ctx, opts.order), mchId: ctx.globals.mchId, cursor, limit };
  const page = await (await ctx.service()).pageRefunds(filter);
  if (ctx.globals.json) return printJson(ctx, page.items);
  const head: Array<string | Column> = ['refund', 'order', { name: 'oid', text: true, minWidth: 8 }, 'amount', { name: 'remark', text: true, below: true }, 'time'];
  const rows = page.items.map((r) => [r.refundId, r.id, r.oid, r.amount, r.remark, formatTime(r.refundTime)]);
  merchantColumn(page.items, head, rows);
  await printTable(ctx, head, rows);
  pageNote(ctx, page);
}
