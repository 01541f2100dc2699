import type { Context } from '../../context.js';
import { formatTime, printJson, printTable } from '../output.js';
import { orderIdOf } from './ref.js';

/** `order held`: payments found on chain more than 24 h after their order expired, waiting for an operator. */
export async function run(ctx: Context, opts: { order?: string }): Promise<void> {
  // By id or oid, and refused when there is no such order (not an empty list).
  const list = await (await ctx.service()).heldPayments({ mchId: ctx.globals.mchId, orderId: await orderIdOf(ctx, opts.order) });
  if (ctx.globals.json) return printJson(ctx, list);
  await printTable(
    ctx,
    ['order', { name: 'oid', text: true, minWidth: 8, priority: 8 }, { name: 'uid', text: true, minWidth: 8, priority: 7 }, { name: 'amount', priority: 9 }, { name: 'chain', priority: 6 }, { name: 'tx hash', priority: 6 }, { name: 'log', priority: 4 }, 'order expired', 'held since'],
    list.map((p) => [p.orderId, p.oid, p.uid, `${p.amount} ${p.asset}`, p.chainId, p.txHash, p.logIndex, formatTime(p.expiredAt), formatTime(p.heldAt)]),
  );
}
