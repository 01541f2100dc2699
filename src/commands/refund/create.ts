import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import type { RefundResult } from '../../core/types.js';
import { asking, checked, confirmChange, need } from '../common.js';
import { formatTime, printJson, printRecord } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  for (const flag of ['id', 'oid', 'amount', 'remark']) checked(opts[flag], flag);
  if (!opts.id && !opts.oid) {
    if (!ctx.io.interactive) throw usage('refund needs --id or --oid');
    opts.id = await need(ctx, undefined, 'id', 'Order id');
  }
  const amount = await need(ctx, opts.amount, 'amount', 'Amount to refund');
  const service = await ctx.service();
  const summary: [string, string][] = [
    ['order', opts.id ?? `oid ${opts.oid}`],
    ['refund', amount],
  ];
  if (asking(ctx)) {
    // What will happen to the order and the user's balance, locally or on the remote alike.
    const order = await service.showOrder({ mchId: ctx.globals.mchId, id: opts.id, oid: opts.oid }).catch(() => undefined);
    if (order) {
      const b = await service.balance(order.uid, { mchId: order.mchId, asset: order.asset });
      summary.splice(0, 1, ['order', `${order.id} (oid ${order.oid}, ${order.status}), paid ${order.paidAmount}, refunded so far ${order.refundedAmount} ${order.asset}`]);
      summary.push(['user', `${order.uid}: available ${b.available} ${order.asset}, debited ${amount}`]);
    }
  }
  if (opts.remark) summary.push(['remark', opts.remark]);
  await confirmChange(ctx, 'Refund', summary);
  const result: RefundResult = await service.refund({ mchId: ctx.globals.mchId, id: opts.id, oid: opts.oid, amount, remark: opts.remark });
  if (ctx.globals.json) return printJson(ctx, result);
  await printRecord(ctx, [
    ['id', result.id],
    ['oid', result.oid],
    ['refunded', result.amount],
    ['status', result.status],
    ['remark', result.remark],
    ['time', formatTime(result.refundTime)],
  ]);
}
