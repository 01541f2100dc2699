import type { Context } from '../../context.js';
import { parseLimit } from '../common.js';
import { formatTime, printJson, printTable } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const list = await (await ctx.service()).listRefunds({ orderId: opts.order, mchId: ctx.globals.mchId, limit: parseLimit(opts.limit) });
  if (ctx.globals.json) return printJson(ctx, list);
  await printTable(ctx, ['refund', 'order', { name: 'oid', text: true, minWidth: 8 }, 'amount', { name: 'remark', text: true, below: true }, 'time'], list.map((r) => [r.refundId, r.id, r.oid, r.amount, r.remark, formatTime(r.refundTime)]));
}
