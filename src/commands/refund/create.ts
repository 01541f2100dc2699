import type { Context } from '../../context.js';
import { AppError, isAppError, usage } from '../../core/errors.js';
import { ASSETS } from '../../core/assets.js';
import { formatAmount, parseAmount, parseLedgerAmount, sameAmount } from '../../core/money.js';
import type { RefundRequest } from '../../core/schemas.js';
import type { OperatorService } from '../../core/service.js';
import type { OrderDetail, RefundDone, RefundView } from '../../core/types.js';
import { applyRefund } from '../../core/state.js';
import { asking, checked, confirmChange, isNotFound, need } from '../common.js';
import { findHint, orderByRef } from '../order/ref.js';
import { actForOwner } from '../owner.js';
import { formatTime, printJson, printRecord, type Cell } from '../output.js';
import { shellQuote } from '../shell-quote.js';

/**
 * `refund --id ID | --oid OID (--amount A | --rest)`. The question shows what the refund does to
 * the order and to the user's balance, every amount with its asset; the answer names the refund's
 * own id and the order as it stands after it (issue #15 item 3), locally and on a remote alike.
 */
export async function run(ctx: Context, given: Record<string, string | boolean | undefined>): Promise<void> {
  let opts = given;
  try {
    // Neither flag, on a terminal: the order is asked for, and the answer may be its id or its oid
    // (an operator trial typed an oid and got a bare "Order not found", where --id explains).
    if (opts.id === undefined && opts.oid === undefined && ctx.io.interactive) opts = { ...opts, ...(await askedOrder(ctx)) };
    await refund(ctx, opts);
  } catch (e) {
    throw await notFoundSaysWhy(ctx, e, opts);
  }
}

/**
 * "Order not found" says what to type instead (not under --json, where it stays the interface's
 * words): an oid given as --id names its order and --oid; an unknown oid points to order find.
 */
async function notFoundSaysWhy(ctx: Context, e: unknown, opts: Record<string, string | boolean | undefined>): Promise<unknown> {
  if (!ctx.globals.json && isAppError(e) && e.kind === 'conflict' && /^order status is not Paid \(it is /.test(e.message)) return notPaidSaysWhere(ctx, e, opts);
  if (!ctx.globals.json && isAppError(e) && e.kind === 'conflict' && /^insufficient balance: /.test(e.message)) return shortSaysWhatIsLeft(ctx, e, opts);
  if (ctx.globals.json || !isNotFound(e) || (e as Error).message !== 'Order not found') return e;
  if (typeof opts.id === 'string') {
    const byOid = await (await ctx.service()).showOrder({ mchId: ctx.globals.mchId, oid: opts.id }).catch(() => undefined);
    return new AppError('not_found', byOid
      ? `Order not found: ${opts.id} is not an order id but the oid of order ${byOid.id}: give it as --oid ${opts.id}`
      : `Order not found: no order has the id ${opts.id} ${findHint(opts.id)}`);
  }
  if (typeof opts.oid === 'string') return new AppError('not_found', `Order not found: no order has the oid ${opts.oid} ${findHint(opts.oid)}`);
  return e;
}

/**
 * An order not Paid is not refunded (the interface's words stay the message), but what of it
 * arrived is the user's: said where it is and how it goes back (a new-user trial: 49.5 of 50
 * arrived, the order expired, and support did not know what to do with the money).
 */
async function notPaidSaysWhere(ctx: Context, e: AppError, opts: Record<string, string | boolean | undefined>): Promise<AppError> {
  const o = await orderNamedBy(ctx, opts).catch(() => undefined);
  if (!o) return e;
  const d = ASSETS[o.asset]?.decimals ?? 6;
  const paid = parseLedgerAmount(o.paidAmount, d) - parseLedgerAmount(o.refundedAmount, d);
  if (paid <= 0n) return e;
  const due = parseLedgerAmount(o.amount, d) - parseLedgerAmount(o.paidAmount, d);
  const rest = o.status === 'PENDING_PAY' && due > 0n ? `, or the rest paid (${formatAmount(due, d)} ${o.asset}) makes the order PAID` : '';
  return new AppError(e.kind, e.message, {
    hint: `${formatAmount(paid, d)} ${o.asset} of it arrived and is in user ${o.uid}'s available balance (cryptopay balance ${o.uid}); an order that is not Paid is not refunded: pay it back with cryptopay withdraw apply --uid ${o.uid} --amount ${formatAmount(paid, d)} --to ADDRESS${rest}`,
  });
}

/**
 * A refund the user's balance does not cover says how much can be refunded now and where the rest
 * went (a new-user trial: the user had withdrawn the money, and support was left with the bare
 * refusal).
 */
async function shortSaysWhatIsLeft(ctx: Context, e: AppError, opts: Record<string, string | boolean | undefined>): Promise<AppError> {
  try {
    const o = await orderNamedBy(ctx, opts);
    if (!o) return e;
    const b = await (await ctx.service()).balance(o.uid, { mchId: o.mchId, asset: o.asset });
    const d = ASSETS[o.asset]?.decimals ?? 6;
    const available = formatAmount(parseLedgerAmount(b.available, d), d);
    const now = available !== '0' ? `refund at most ${available} ${o.asset} now (--amount ${available}); ` : 'nothing of it can be refunded now; ';
    return new AppError(e.kind, e.message, { hint: `${now}what else user ${o.uid} had was withdrawn or refunded, or is held by withdrawals (cryptopay withdraw list --uid ${shellQuote(o.uid)})` });
  } catch {
    // What cannot be read adds nothing to the refusal.
    return e;
  }
}

/** The order --id or --oid names, for what a refusal adds; undefined when neither was given. */
async function orderNamedBy(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<OrderDetail | undefined> {
  const ref = typeof opts.id === 'string' ? { id: opts.id } : typeof opts.oid === 'string' ? { oid: opts.oid } : undefined;
  return ref && (await ctx.service()).showOrder({ mchId: ctx.globals.mchId, ...ref });
}

async function refund(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<void> {
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  for (const flag of ['id', 'oid', 'amount', 'remark']) checked(text(opts[flag]), flag);
  const id = text(opts.id);
  const oid = text(opts.oid);
  const rest = opts.rest === true;
  if (rest && opts.amount !== undefined) throw usage('give either --amount or --rest (what remains to refund), not both');
  if (!id && !oid) throw usage('refund needs --id or --oid');
  const remark = text(opts.remark);
  const repeat = opts.repeat === true;
  await actForOwner(ctx, id !== undefined ? { orderId: id } : { oid });
  const service = await ctx.service();
  // The order is read for --rest, for the question, and to look for a refund this one repeats.
  // An order that is not there is refused before anything is asked (a mistyped id must not get a
  // question it can only fail after), as is a read the refund would fail the same way (a secret or
  // a remote refused); another failure to read it leaves the refusal to the refund itself, unless
  // --rest needs the order, or --yes the look for a repeat (its refusal is then the read's: an id
  // and an oid that name different orders, say).
  // --rest is never a repeat: after a first one the order is REFUNDED and the refund refuses it.
  const lookForRepeat = !repeat && !rest;
  const yesLooks = ctx.globals.yes && lookForRepeat;
  const order = rest || asking(ctx) || yesLooks
    ? await service.showOrder({ mchId: ctx.globals.mchId, id, oid }).catch((e) => (rest || yesLooks || isNotFound(e) || refusesAll(e) ? Promise.reject(e) : undefined))
    : undefined;
  const amount = rest ? restOf(order!) : await need(ctx, text(opts.amount), 'amount', 'Amount to refund');
  // A refund of the same amount on the order within 10 minutes (the shell's up-arrow, a retry
  // after a slow answer) is asked about on a terminal and refused under --yes unless --repeat
  // says it is meant: a refund is final, and a new-user trial ran one three times with --yes.
  // Only of a Paid order: another is refused by the refund itself, in the interface's words.
  // Under --yes, where nothing else would stop a repeat, a look that fails refuses too.
  const twin = order?.status === 'PAID' && lookForRepeat
    ? await repeatOf(service, { mchId: order.mchId, id: order.id, amount, at: ctx.now() }).catch((e) => {
        if (!ctx.globals.yes) return undefined;
        throw new AppError('unavailable', `could not read the order's refunds (${(e as Error).message}) to look for a repeated refund, so nothing was done; run it again, or with --repeat to refund without looking`);
      })
    : undefined;
  const agoMs = twin && ctx.now() - twin.refundTime;
  if (twin && ctx.globals.yes) throw new AppError('conflict', repeatRefusal({ ...twin, asset: order!.asset, orderId: order!.id, agoMs: agoMs! }));
  // The question's rows; under --yes there is no question, and the refund itself refuses what it must.
  const summary: [string, Cell][] = !asking(ctx) ? [] : order
    ? await preview(order, amount, remark, (uid) => service.balance(uid, { mchId: order.mchId, asset: order.asset }))
    : [['order', id ?? `oid ${oid}`], ['refund', amount], ['remark', remark]];
  if (twin) summary.push(['REPEAT?', `refund ${twin.refundId} of the same ${twin.amount} ${order!.asset} was made ${agoText(agoMs!)}: a refund is final`]);
  await confirmChange(ctx, 'Refund', summary.filter(([, v]) => v !== undefined));
  const input: RefundRequest = { mchId: ctx.globals.mchId, id, oid, amount, remark };
  // Under --yes the look is made again inside the refund's transaction on a local ledger: copies
  // run at the same moment all looked before any wrote (an operator trial refunded twice so).
  // A remote's refund is the interface's, which has no such look: there the one above is all.
  const notARepeat = yesLooks && order?.status === 'PAID'
    ? { withinMs: REPEAT_WINDOW_MS, refusal: repeatRefusal }
    : undefined;
  const done = ctx.isRemote() ? await remoteRefund(service, input) : await (await ctx.local('refund')).refundWithId(input, notARepeat);
  if (ctx.globals.json) printJson(ctx, done);
  else await printRefund(ctx, done);
}

/** The order typed at the prompt, as an id when one has it, else as an oid when one has that. */
async function askedOrder(ctx: Context): Promise<{ id: string }> {
  const typed = (await need(ctx, undefined, 'id', 'Order (its id or oid)')).trim();
  checked(typed, 'id');
  // As order show takes it (id first, then oid); none: the refund's own not-found says why.
  const order = await orderByRef(ctx, typed).catch((e) => (isNotFound(e) ? undefined : Promise.reject(e)));
  return { id: order?.id ?? typed };
}

/** A refusal of the signature or of the remote itself, which the refund would get too. */
const refusesAll = (e: unknown): boolean => isAppError(e) && (e.kind === 'unauthorized' || e.kind === 'unavailable');

/**
 * How long ago a refund was made. The look before the refund reads the time of a remote, whose
 * clock may be ahead of this one: a refund "in the future" reads as the same distance ago.
 */
const agoText = (ms: number): string => `${Math.round(Math.abs(ms) / 1000)} s ago`;

/** Under --yes, the refusal of a refund that repeats one moments ago (both looks word it so). */
const repeatRefusal = (r: { refundId: string; amount: string; asset: string; orderId: string; agoMs: number }): string =>
  `refund ${r.refundId} of the same ${r.amount} ${r.asset} was made on order ${r.orderId} ${agoText(r.agoMs)}: this one looks like a repeat, so nothing was done (a refund is final); if a second refund of ${r.amount} ${r.asset} is meant, run it again with --repeat`;

/** How far back a refund of the same amount on the same order reads as a repeat. */
const REPEAT_WINDOW_MS = 10 * 60_000;

/**
 * A refund of the same amount on the order made within 10 minutes of `at`, if any (either way: a
 * remote's clock may be ahead of this one's). Rejects when the list cannot be read.
 */
async function repeatOf(service: OperatorService, a: { mchId: string; id: string; amount: string; at: number }): Promise<RefundView | undefined> {
  const earlier = await service.listRefunds({ mchId: a.mchId, orderId: a.id, limit: 20 });
  return earlier.find((r) => sameAmount(r.amount, a.amount) && Math.abs(a.at - r.refundTime) <= REPEAT_WINDOW_MS);
}

/**
 * On a remote the interface answers the refund alone: its own id and the order after it are read
 * back through the extension reads (the refund is the one of that order at that time and amount).
 */
async function remoteRefund(service: OperatorService, input: RefundRequest): Promise<RefundDone> {
  const r = await service.refund(input);
  const [order, refunds] = await Promise.all([
    service.showOrder({ mchId: input.mchId, id: r.id }),
    service.listRefunds({ mchId: input.mchId, orderId: r.id, limit: 20 }),
  ]);
  const own = refunds.find((x) => x.refundTime === r.refundTime && x.amount === r.amount);
  return {
    refundId: own?.refundId ?? '', mchId: order.mchId, ...r, asset: order.asset,
    orderStatus: order.status === 'REFUNDED' ? 'REFUNDED' : 'PAID', paidAmount: order.paidAmount, refundedAmount: order.refundedAmount,
  };
}

/** What is left to refund of a paid order: all it was paid, less what was refunded. */
function restOf(o: OrderDetail): string {
  if (o.status !== 'PAID') throw new AppError('conflict', `order status is not Paid (it is ${o.status})`);
  const d = ASSETS[o.asset]?.decimals ?? 6;
  return formatAmount(parseLedgerAmount(o.paidAmount, d) - parseLedgerAmount(o.refundedAmount, d), d);
}

/** The question's rows: the order and the user's balance before -> after. */
async function preview(o: OrderDetail, amount: string, remark: string | undefined, balance: (uid: string) => Promise<{ available: string; held?: string }>): Promise<[string, Cell][]> {
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
  // What the refund would refuse (not paid, more than was paid or remains) is refused now, in
  // its words, instead of a question whose answer can only fail: the question shows only what
  // can happen. The refund checks it all again, on the state it then finds.
  applyRefund({ status: o.status, paid, refunded, amount: units, decimals: d });
  const after = refunded + units;
  const b = await balance(o.uid);
  const available = parseLedgerAmount(b.available, d);
  const f = (v: bigint) => formatAmount(v, d);
  if (available < units) {
    const heldUnits = parseLedgerAmount(b.held ?? '0', d);
    const held = heldUnits > 0n ? ` (and ${f(heldUnits)} ${o.asset} held by pending withdrawals)` : '';
    throw new AppError('conflict', `insufficient balance: user ${o.uid} has ${f(available)} ${o.asset} available${held}, ${f(units)} needed`);
  }
  rows.push(
    ['refund', `${amount} ${o.asset}`],
    ['refunded', `${f(refunded)} -> ${f(after)} ${o.asset} of ${f(paid)} ${o.asset} paid`],
    ['status', `${o.status} -> ${o.status === 'PAID' && after >= paid ? 'REFUNDED' : o.status}`],
    ['user', `${o.uid}: available ${f(available)} -> ${f(available - units)} ${o.asset}`],
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
    // A refund moves no coins (a new-user trial: support told a customer it was sent).
    ['on chain', 'nothing sent: a refund is an entry in the ledger; the merchant pays the customer back'],
  ]);
}
