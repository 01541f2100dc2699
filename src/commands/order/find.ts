import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import { parseLimit } from '../common.js';
import { formatTime, merchantColumn, printJson, printTable, type Column } from '../output.js';
import { shellQuote } from '../shell-quote.js';
import { amountIn, commandRegistry } from '../withdraw/asset.js';

const LABEL = { id: 'id', oid: 'oid', uid: 'uid', txHash: 'tx hash', address: 'address', payer: 'paid from', refund: 'refund id' } as const;

/**
 * `order find TEXT`: the orders whose id, oid, uid, payment transaction, deposit address or payer
 * is TEXT, or that hold the refund of that id, and the withdrawal of that id or that a transaction
 * hash pays out; exit 1 when nothing matches.
 */
export async function run(ctx: Context, opts: Record<string, string | undefined>, text: string): Promise<void> {
  const q = text.trim();
  const limit = parseLimit(opts.limit);
  const found = await (await ctx.service()).findOrders(q, { mchId: ctx.globals.mchId, limit });
  if (found.orders.length === 0 && found.withdrawals.length === 0) {
    const scope = ctx.globals.mchId ? ` of merchant ${ctx.globals.mchId}` : '';
    // A hash a customer or a wallet gave: what else it can be (a new-user trial, F6, got no hint).
    const hash = /^(0x)?[0-9a-f]{64}$/i.test(q)
      ? `; a transaction sent moments ago may not be read yet (cryptopay summary says how far each chain is read), and one that pays no order's address, or on a chain this ledger does not watch, is not seen at all: look it up in the chain's explorer, then ${ctx.isRemote() ? "the service's operator records it on its ledger (order mark-paid)" : 'record it with cryptopay order mark-paid ORDER --tx-hash HASH'}`
      : '';
    throw new AppError('not_found', `nothing${scope} matches ${q}: no order has it as id, oid, uid, refund id, transaction hash, deposit address or payer's address, and no withdrawal as id or transaction hash${hash}`);
  }
  if (ctx.globals.json) return printJson(ctx, { orders: found.orders, withdrawals: found.withdrawals });
  const registry = found.withdrawals.length ? await commandRegistry(ctx, 'order find') : undefined;
  const head: Array<string | Column> = ['matched by', 'id', 'oid', 'uid', 'amount', 'status', 'paid', 'refunded', 'created'];
  const rows = [
    ...found.orders.map((o) => [o.matchedBy.map((b) => LABEL[b]).join(', '), o.id, o.oid, o.uid, `${o.amount} ${o.asset}`, o.status, o.paidAmount, o.refundedAmount, formatTime(o.createdAt)]),
    ...found.withdrawals.map((w) => [`${w.matchedBy.map((b) => LABEL[b]).join(', ')} (withdrawal)`, w.id, null, w.uid, amountIn(registry!, w), w.status, null, null, formatTime(w.createdAt)]),
  ];
  // Whose each row is, when they are of several merchants: after the id.
  merchantColumn([...found.orders, ...found.withdrawals], head, rows, 2);
  await printTable(ctx, head, rows);
  if (found.more) {
    // order list filters by uid; there is no list of what one address paid (an attacker review:
    // the hint named a uid for a payer's address).
    const all = found.orders.every((o) => o.matchedBy.includes('uid')) ? `see them all with cryptopay order list --uid ${shellQuote(q)}` : 'show more with --limit N (up to 1000)';
    ctx.io.stderr.write(`showing the newest ${found.orders.length} orders that match: narrow it with --mch-id, or ${all}\n`);
  }
}
