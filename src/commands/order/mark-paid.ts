import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { ASSETS } from '../../core/assets.js';
import { amountDue, formatAmount } from '../../core/money.js';
import type { ChainType } from '../../core/types.js';
import { checked, confirmChange, credited, need } from '../common.js';
import { printOrder } from '../views.js';
import { orderByRef } from './ref.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, id: string): Promise<void> {
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
    ? { chainType: (opts.chainType?.toUpperCase() as ChainType | undefined) ?? null }
    : paymentChain(await service.registry(), { chainType: opts.chainType?.toUpperCase(), chainId: opts.chainId, token: opts.token });
  // The hash in its chain's form (a TRON one loses a 0x): a usage error naming the option.
  const txHash = asUsage(() => hashOnChain(given, chain.chainType ?? undefined, '--tx-hash'));
  // By id or oid, as order show and order status take it.
  const order = await orderByRef(ctx, id);
  // Without --amount: what is still due. An order paid in full has none (it would credit the user
  // again): the amount must then be given.
  const decimals = ASSETS[order.asset]!.decimals;
  const due = amountDue(order, decimals);
  if (opts.amount === undefined && due <= 0n) throw usage(nothingDue(order.id, order.status, '--amount'));
  const amount = opts.amount ?? formatAmount(due, decimals);
  const before = await service.balance(order.uid, { mchId: order.mchId, asset: order.asset });
  await confirmChange(ctx, 'Record a payment', [
    ['order', `${order.id} (oid ${order.oid}, ${order.status})`],
    ['order amount', `${order.amount} ${order.asset}, paid so far ${order.paidAmount} ${order.asset}${due > 0n ? `, ${formatAmount(due, decimals)} due` : ', nothing due'}`],
    ['payment', `${amount} ${order.asset} in tx ${txHash}`],
    ['user', `${order.uid}: available ${credited(before.available, amount, order.asset)}`],
  ]);
  const updated = await service.markPaid({
    id: order.id,
    txHash,
    // What the question showed: the amount, and with a default one what was paid so far, so a
    // payment recorded meanwhile is refused rather than credited on top.
    amount,
    ...(opts.amount === undefined ? { paidBefore: order.paidAmount } : {}),
    chainType: opts.chainType?.toUpperCase(),
    chainId: opts.chainId,
    token: opts.token,
  });
  await printOrder(ctx, updated);
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
