import type { Context } from '../../context.js';
import { ASSETS } from '../../core/assets.js';
import { formatAmount, parseLedgerAmount } from '../../core/money.js';
import type { CallbackView, OrderDetail, RefundView } from '../../core/types.js';
import { lastAnswer } from '../callbacks/list.js';
import { formatTime, type Cell } from '../output.js';
import { printOrder } from '../views.js';
import { localPayUrl } from './local-pay-url.js';
import { orderByRef } from './ref.js';

/** How many refunds and callbacks `order show` lists; past that it names the list command. */
const SHOWN = 20;

/**
 * `order show ID|OID`: the order, and on a terminal its story after it (a new-user trial needed
 * three commands to tell one): what is still due, each refund, each callback. `--json` keeps the
 * order record alone; `refund list --order` and `callbacks list --order` give the rest as JSON.
 * A list that cannot be read (a remote without the extension reads) is left out.
 */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  const o = await orderByRef(ctx, ref, { onChain: true });
  if (ctx.globals.json) return printOrder(ctx, o);
  const service = await ctx.service();
  const [refunds, callbacks] = await Promise.all([
    service.listRefunds({ mchId: o.mchId, orderId: o.id, limit: SHOWN + 1 }).catch(() => undefined),
    service.listCallbacks({ mchId: o.mchId, orderId: o.id, limit: SHOWN + 1 }).catch(() => undefined),
  ]);
  const rows = storyRows(o, refunds, callbacks);
  // Where the payer pays, while there is something to pay (a new-user trial found it printed by
  // order create alone); on a remote the server's own answer to create order names it.
  if (o.status === 'PENDING_PAY' && !ctx.isRemote()) rows.unshift(['pay url', await localPayUrl(ctx, o.id)]);
  await printOrder(ctx, o, undefined, rows);
}

function storyRows(o: OrderDetail, refunds: RefundView[] | undefined, callbacks: CallbackView[] | undefined): [string, Cell][] {
  const rows: [string, Cell][] = [];
  const d = ASSETS[o.asset]?.decimals ?? 6;
  const due = parseLedgerAmount(o.amount, d) - parseLedgerAmount(o.paidAmount, d);
  if (o.status === 'PENDING_PAY' && due > 0n) rows.push(['due', `${formatAmount(due, d)} ${o.asset}`]);
  // More arrived than the order's amount (an operator trial saw paid 25 on a 20 order, nothing said).
  if (due < 0n) rows.push(['overpaid', `${formatAmount(-due, d)} ${o.asset} more than the amount arrived: ${overpaidWent(o, d)}`]);
  if (refunds) {
    // Newest first, as refund list; shown oldest first, as the order's story reads.
    for (const r of refunds.slice(0, SHOWN).reverse()) {
      rows.push(['refund', `${r.amount} ${o.asset} at ${formatTime(r.refundTime)} (${r.refundId})${r.remark ? `: ${r.remark}` : ''}`]);
    }
    if (refunds.length > SHOWN) rows.push(['refunds', `more than ${SHOWN}: cryptopay refund list --order ${o.id}`]);
  }
  if (callbacks) {
    for (const c of callbacks.slice(0, SHOWN).reverse()) {
      const tried = c.attempts === 0 ? 'not tried yet' : `${c.attempts} attempt${c.attempts === 1 ? '' : 's'}, last answer ${lastAnswer(c)}`;
      const next = c.status === 'pending' && c.nextAttemptAt !== null ? `, next ${formatTime(c.nextAttemptAt)}` : '';
      rows.push(['callback', `${c.event} ${c.status.toUpperCase()} (${tried}${next}) ${c.id}`]);
    }
    if (callbacks.length > SHOWN) rows.push(['callbacks', `more than ${SHOWN}: cryptopay callbacks list --order ${o.id}`]);
  }
  return rows;
}

/** Where an overpayment went: credited with the payment, and how much of that was refunded since. */
function overpaidWent(o: OrderDetail, d: number): string {
  const refunded = parseLedgerAmount(o.refundedAmount, d);
  if (refunded === 0n) return `credited to user ${o.uid}'s balance (a refund or a withdrawal sends it back)`;
  if (refunded >= parseLedgerAmount(o.paidAmount, d)) return 'refunded with the rest of the payment';
  return `credited to user ${o.uid}'s balance with the payment, of which ${o.refundedAmount} ${o.asset} is refunded so far`;
}
