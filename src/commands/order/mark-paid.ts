import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { ASSETS } from '../../core/assets.js';
import { amountDue, formatAmount, parseAmount } from '../../core/money.js';
import type { ChainType } from '../../core/types.js';
import { asking, checked, confirmChange, credited, need } from '../common.js';
import { printOrder } from '../views.js';
import { orderByRef } from './ref.js';

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>, id: string): Promise<void> {
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  const unverified = opts.unverified === true;
  const reason = text(opts.reason)?.trim();
  if (unverified && !reason) throw usage('--unverified needs --reason TEXT: why the chain is not read (kept in the audit log)');
  if (!unverified && opts.reason !== undefined) throw usage('--reason goes with --unverified');
  await record(ctx, { txHash: text(opts.txHash), amount: text(opts.amount), chainType: text(opts.chainType), chainId: text(opts.chainId), token: text(opts.token) }, id, unverified ? reason : undefined);
}

async function record(ctx: Context, opts: Record<string, string | undefined>, id: string, unverified: string | undefined): Promise<void> {
  checked(opts.txHash, 'tx-hash');
  checked(opts.amount, 'amount');
  checked(opts.chainType, 'chain-type');
  checked(opts.chainId, 'chain-id');
  checked(opts.token, 'token');
  if (opts.token !== undefined && opts.chainId === undefined) throw usage('--token needs --chain-id: the chain the token is on');
  const given = await need(ctx, opts.txHash, 'tx-hash', 'Transaction hash of the payment');
  const service = await ctx.local('order mark-paid');
  const { hashOnChain, nothingDue, paymentChain } = await import('../../store/payments.js');
  // The chain and token as the ledger knows them, before the question (markPaid asks again).
  const chain = opts.chainId === undefined
    ? { chainType: (opts.chainType?.toUpperCase() as ChainType | undefined) ?? null, chainId: null, token: null }
    : paymentChain(await service.registry(), { chainType: opts.chainType?.toUpperCase(), chainId: opts.chainId, token: opts.token });
  // The hash in its chain's form (a TRON one loses a 0x): a usage error naming the option.
  const txHash = asUsage(() => hashOnChain(given, chain.chainType ?? undefined, '--tx-hash'));
  // By id or oid, as order show and order status take it.
  const order = await orderByRef(ctx, id);
  // Without --amount: what is still due. An order paid in full has none (it would credit the user
  // again): the amount must then be given.
  const decimals = ASSETS[order.asset]!.decimals;
  const due = amountDue(order, decimals);
  // On a chain with an rpcUrl, what the transaction paid into this order, read there (refused,
  // nothing asked, when it paid nothing of it): the amount to record, unless --unverified.
  const said = chain.chainId !== null && unverified === undefined
    ? await service.paymentOnChain({ id: order.id, txHash, chainId: chain.chainId, ...(chain.token ? { token: chain.token } : {}), ...(opts.amount !== undefined ? { amount: opts.amount } : {}) })
    : null;
  if (!said && opts.amount === undefined && due <= 0n) throw usage(nothingDue(order.id, order.status, '--amount'));
  const amount = said?.amount ?? opts.amount ?? formatAmount(due, decimals);
  const over = parseAmount(amount, decimals) - (due > 0n ? due : 0n);
  // No chain named while the ledger reads some: a mistyped hash is not caught, and the watcher
  // counts the real transfer on top (a new-user trial: 6 paid on a 3 order). Said in the question and after.
  const watched = chain.chainId === null && unverified === undefined
    ? (await service.registry()).chains().filter((c) => c.rpcUrl && (chain.chainType === null || c.chainType === chain.chainType)).map((c) => `${c.chainId} (${c.name})`)
    : [];
  // Under --yes there is no question to say so: refused, with the two ways on (an operator trial
  // recorded a made-up hash, the real transfer was counted on top, and the user withdrew both).
  if (watched.length && !asking(ctx)) {
    const first = watched[0]!.split(' ')[0];
    const how = ctx.globals.yes ? 'order mark-paid --yes without --chain-id' : 'order mark-paid without --chain-id, with no terminal to ask,';
    throw usage(`${how} would record a transaction nobody read, while the watcher reads chain ${watched.join(', chain ')}: give --chain-id ${first} to read it there first (or the chain it was paid on), or --unverified --reason TEXT to record it unread; nothing was changed`);
  }
  const unchecked = watched.length
    ? `not given: not checked; the watcher reads chain ${watched.join(', chain ')}: if it was paid there, give --chain-id to check it (a wrong hash recorded here, the real transfer is counted on top)`
    : 'not given: not checked';
  const before = await service.balance(order.uid, { mchId: order.mchId, asset: order.asset });
  await confirmChange(ctx, 'Record a payment', [
    ['order', `${order.id} (oid ${order.oid}, ${order.status})`],
    ['order amount', `${order.amount} ${order.asset}, paid so far ${order.paidAmount} ${order.asset}${due > 0n ? `, ${formatAmount(due, decimals)} due` : ', nothing due'}`],
    ['payment', `${amount} ${order.asset} in tx ${txHash}${chain.chainId !== null ? ` on chain ${chain.chainId}` : ''}${over > 0n ? ` (${formatAmount(over, decimals)} more than is due: an overpayment, credited to the user)` : ''}`],
    ['chain', said ? `read: it paid ${said.amount} ${order.asset} to the order's address (${said.confirmations} confirmations)` : unverified !== undefined ? `NOT read (--unverified): ${unverified}` : chain.chainId === null ? unchecked : `chain ${chain.chainId} has no rpcUrl: not checked`],
    ['user', `${order.uid}: available ${credited(before.available, amount, order.asset)}`],
  ]);
  const updated = await service.markPaid({
    id: order.id,
    txHash,
    // What the question showed: the amount, and with a default one what was paid so far, so a
    // payment recorded meanwhile is refused rather than credited on top.
    amount,
    ...(opts.amount === undefined && !said ? { paidBefore: order.paidAmount } : {}),
    chainType: opts.chainType?.toUpperCase(),
    chainId: opts.chainId,
    token: opts.token,
    ...(unverified !== undefined ? { unverified } : {}),
  });
  await printOrder(ctx, updated);
  if (watched.length) ctx.io.stderr.write(`warning: recorded without --chain-id, not checked on chain; the watcher reads chain ${watched.join(', chain ')}: had the hash been wrong, the real transfer is counted on top when it is seen\n`);
}

/** An input refusal of the ledger's rules, as a usage error (exit 2): the option is wrong, not the state. */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError && e.kind === 'invalid') throw usage(e.message);
    throw e;
  }
}
