import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { ASSETS } from '../../core/assets.js';
import { formatAmount, parseAmount, parseLedgerAmount } from '../../core/money.js';
import type { OrderDetail } from '../../core/types.js';
import type { RefundDone } from '../../store/local-service.js';
import { confirmChange, need } from '../common.js';
import { formatTime, printJson, printRecord, type Cell } from '../output.js';

/**
 * `refund --id ID | --oid OID (--amount A | --rest)`. The question shows what the refund does to
 * the order and to the user's balance, every amount with its asset; the answer names the refund's
 * own id and the order as it stands after it (issue #15 item 3).
 */
export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<void> {
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  let id = text(opts.id);
  const oid = text(opts.oid);
  const rest = opts.rest === true;
  if (rest && opts.amount !== undefined) throw usage('give either --amount or --rest (what remains to refund), not both');
  if (!id && !oid) {
    if (!ctx.io.interactive) throw usage('refund needs --id or --oid');
    id = await ctx.prompter.input('Order id');
  }
  const remark = text(opts.remark);
  // Locally the order is read first: for --rest, and to show what will happen.
  const local = ctx.isRemote() ? undefined : await ctx.local('refund');
  if (rest && !local) throw usage('--rest reads the order on the local ledger: on a remote, give --amount');
  const order = local ? await local.findOrderDetail(ctx.globals.mchId ?? local.resolveMerchantId(), id, oid).catch((e) => (rest ? Promise.reject(e) : undefined)) : undefined;
  const amount = rest ? restOf(order!) : await need(ctx, text(opts.amount), 'amount', 'Amount to refund');
  const summary: [string, Cell][] = order && local ? await preview(order, amount, remark, (uid) => local.balance(uid, { mchId: order.mchId, asset: order.asset })) : [['order', id ?? `oid ${oid}`], ['refund', amount], ['remark', remark]];
  await confirmChange(ctx, 'Refund', summary.filter(([, v]) => v !== undefined));
  const input = { mchId: ctx.globals.mchId, id, oid, amount, remark };
  if (!local) {
    const result = await (await ctx.service()).refund(input);
    if (ctx.globals.json) return printJson(ctx, result);
    return printRecord(ctx, [['order', `${result.id} (oid ${result.oid})`], ['amount', result.amount], ['remark', result.remark], ['time', formatTime(result.refundTime)]]);
  }
  const done = await local.refundWithId(input);
  if (ctx.globals.json) return printJson(ctx, done);
  await printRefund(ctx, done);
}

/** What is left to refund of a paid order: all it was paid, less what was refunded. */
function restOf(o: OrderDetail): string {
  if (o.status !== 'PAID') throw new AppError('conflict', `order status is not Paid (it is ${o.status})`);
  const d = ASSETS[o.asset]?.decimals ?? 6;
  return formatAmount(parseLedgerAmount(o.paidAmount, d) - parseLedgerAmount(o.refundedAmount, d), d);
}

/** The question's rows: the order and the user's balance before -> after. */
async function preview(o: OrderDetail, amount: string, remark: string | undefined, balance: (uid: string) => Promise<{ available: string }>): Promise<[string, Cell][]> {
  const d = ASSETS[o.asset]?.decimals ?? 6;
  const rows: [string, Cell][] = [['order', `${o.id} (oid ${o.oid}), ${o.status}`]];
  let units: bigint;
  try {
    units = parseAmount(amount, d);
  } catch {
    // The refund itself refuses it, with its own message.
    return [...rows, ['refund', amount], ['remark', remark]];
  }
  const paid = parseLedgerAmount(o.paidAmount, d);
  const refunded = parseLedgerAmount(o.refundedAmount, d);
  const after = refunded + units;
  const available = parseLedgerAmount((await balance(o.uid)).available, d);
  const f = (v: bigint) => formatAmount(v, d);
  rows.push(
    ['refund', `${amount} ${o.asset}`],
    ['refunded', `${f(refunded)} -> ${f(after)} ${o.asset} of ${f(paid)} ${o.asset} paid`],
    ['status', `${o.status} -> ${o.status === 'PAID' && after >= paid ? 'REFUNDED' : o.status}`],
    ['user', available >= units ? `${o.uid}: available ${f(available)} -> ${f(available - units)} ${o.asset}` : `${o.uid}: available ${f(available)} ${o.asset}, less than the refund (it will be refused)`],
    ['remark', remark],
  );
  return rows;
}

async function printRefund(ctx: Context, r: RefundDone): Promise<void> {
  const d = ASSETS[r.asset]?.decimals ?? 6;
  const left = parseLedgerAmount(r.paidAmount, d) - parseLedgerAmount(r.refundedAmount, d);
  await printRecord(ctx, [
    ['refund', r.refundId],
    ['order', `${r.id} (oid ${r.oid})`],
    ['amount', `${r.amount} ${r.asset}`],
    ['order status', r.orderStatus],
    ['paid', `${r.paidAmount} ${r.asset}`],
    ['refunded', `${r.refundedAmount} ${r.asset}${left > 0n ? ` (${formatAmount(left, d)} ${r.asset} left to refund)` : ''}`],
    ['remark', r.remark],
    ['time', formatTime(r.refundTime)],
  ]);
}
