import type { Context } from '../../context.js';
import { orderByRef } from '../order/ref.js';
import { ASSETS } from '../../core/assets.js';
import { AppError, usage } from '../../core/errors.js';
import { LATE_WINDOW_MS } from '../../core/state.js';
import { amountDue, formatAmount, parseAmount, toTokenUnits } from '../../core/money.js';
import type { OrderDetail, OrderStatus } from '../../core/types.js';
import { printJson, printRecord } from '../output.js';
import { checked } from '../common.js';
import { fundedAccount, sentRows } from './from.js';

interface PayOptions {
  amount?: string;
  from?: string;
  wait?: string | boolean;
}

/** `cryptopay dev pay <id>`: pays an order on the development chain of `serve --dev`. */
export async function run(ctx: Context, opts: PayOptions, id: string): Promise<void> {
  const from = fundedAccount(opts.from);
  checked(opts.amount, 'amount');
  const waitSeconds = opts.wait === undefined || opts.wait === false ? undefined : opts.wait === true ? 60 : Number(opts.wait);
  if (waitSeconds !== undefined && (!/^\d{1,4}$/.test(String(opts.wait === true ? 60 : opts.wait)) || waitSeconds < 1)) {
    throw usage('--wait takes a number of seconds from 1 to 9999');
  }

  const service = await ctx.local('dev pay');
  // By id or oid, as order show and order status take it.
  const order = await orderByRef(ctx, id);
  const registry = await service.registry();
  const chain = registry.chains().find((c) => c.development && c.chainType === 'EVM');
  if (!chain) throw new AppError('conflict', 'this ledger has no development chain: start cryptopay serve --dev on it first (dev pay never sends on a real chain)');
  if (!chain.rpcUrl) throw new AppError('unavailable', `the development chain ${chain.chainId} is not running: start cryptopay serve --dev on this ledger`);
  const token = registry.tokens().find((t) => t.chainId === chain.chainId && t.asset === order.asset);
  if (!token) throw new AppError('conflict', `the development chain has no ${order.asset} token: restart cryptopay serve --dev to deploy it`);
  const to = order.addresses.EVM;
  if (!to) throw new AppError('conflict', `order ${order.id} has no EVM address (its merchant has no EVM wallet)`);
  // The watcher refuses test money for any other merchant (decisions, "The public test wallet is
  // test money only"): said before anything is sent, not after.
  const { onPublicTestWallet } = await import('../../store/payments.js');
  if (!onPublicTestWallet(service.ledger.db, order.mchId, 'EVM')) {
    throw new AppError(
      'conflict',
      `order ${order.id} is merchant ${order.mchId}'s, whose EVM wallet is not the public test wallet: the development chain's test token, which anyone can mint, pays only orders of serve --dev's merchant (the watcher would refuse it); nothing was sent. To try payments on chain, use serve --dev's merchant (cryptopay merchant list names it); to record this order's payment made elsewhere: cryptopay order mark-paid ${order.id} --tx-hash HASH`,
    );
  }

  const assetDecimals = ASSETS[order.asset]!.decimals;
  let units: bigint;
  if (opts.amount !== undefined) {
    units = parseAmount(opts.amount, Math.min(assetDecimals, token.decimals));
  } else {
    const left = amountDue(order, assetDecimals);
    if ((order.status !== 'PENDING_PAY' && order.status !== 'EXPIRED') || left <= 0n) {
      throw new AppError('conflict', `order ${order.id} is ${order.status}: nothing left to pay (give --amount to send more anyway)`);
    }
    units = left;
  }
  const onChain = toTokenUnits(units, assetDecimals, token.decimals);

  // Sent anyway (trying a late payment is what a developer may want), but said first: the
  // watcher judges it by its block's time (docs/decisions.md, "Late and held").
  const now = ctx.now();
  if (order.status === 'EXPIRED') {
    const when = new Date(order.expiredAt).toISOString();
    ctx.io.stderr.write(
      now > order.expiredAt + LATE_WINDOW_MS
        ? `order ${order.id} expired at ${when}, more than 24 hours ago: the watcher will hold this payment, uncredited, for an operator to decide (cryptopay order held)\n`
        : `order ${order.id} expired at ${when}: this payment arrives late; the watcher counts it as late (late: true in order show and in the order.paid callback)\n`,
    );
  }
  const { sendTestTokens } = await import('../../chains/sandbox/dev-pay.js');
  const sent = await sendTestTokens({ rpcUrl: chain.rpcUrl, chainId: Number(chain.chainId), token: token.address, to, units: onChain, from });
  const result = {
    order: order.id,
    chainId: chain.chainId,
    token: token.address,
    from: sent.from,
    to,
    amount: formatAmount(units, assetDecimals),
    asset: order.asset,
    txHash: sent.txHash,
    blockNumber: sent.blockNumber,
    minted: formatAmount(sent.minted, token.decimals),
    status: order.status as OrderStatus,
  };

  if (waitSeconds !== undefined) {
    // Until the watcher has decided this transaction's transfer (counted, held or refused), or
    // the order reads PAID whoever paid it: a partial payment is counted as soon as one that
    // completes the order, and waiting on for PAID would only end in a timeout.
    const deadline = Date.now() + waitSeconds * 1000;
    let decided: string[] = [];
    let after: OrderDetail;
    for (;;) {
      const mine = (await service.paymentsOnChain(order.id)).filter((p) => p.txHash === sent.txHash);
      if (mine.length > 0 && mine.every((p) => p.status !== 'seen')) decided = mine.map((p) => p.status);
      after = await service.getOrder(order.id);
      if (decided.length > 0 || after.status === 'PAID' || after.status === 'REFUNDED' || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    result.status = after.status;
    await print(ctx, result);
    if (decided.length === 0 && (after.status === 'PAID' || after.status === 'REFUNDED')) return;
    if (decided.length === 0) {
      throw new AppError(
        'conflict',
        `sent in ${sent.txHash}, but its payment was not counted within ${waitSeconds} s (order ${order.id} is ${after.status}): the chain watcher of serve --dev counts payments; is serve --dev running on this ledger?`,
      );
    }
    if (!decided.includes('counted')) {
      // A refused payment of test money can only be sent back: credit-held refuses it.
      const how = decided.includes('refused') ? 'send it back with cryptopay order return-held' : 'decide it with cryptopay order credit-held or return-held';
      throw new AppError(
        'conflict',
        `sent in ${sent.txHash}, but the watcher ${decided[0]} the payment instead of counting it (order ${order.id} is ${after.status}): cryptopay order show ${order.id} says why; ${how}`,
      );
    }
    if (after.status !== 'PAID' && after.status !== 'REFUNDED' && !ctx.globals.json) {
      const due = parseAmount(after.amount, assetDecimals) - parseAmount(after.paidAmount, assetDecimals);
      ctx.io.stderr.write(`counted: ${after.paidAmount} of ${after.amount} ${order.asset} paid${due > 0n ? `, ${formatAmount(due, assetDecimals)} still due` : ''}\n`);
    }
    return;
  }
  await print(ctx, result);
  // The status above is the one before the transfer: say what happens next, off stdout.
  if (!ctx.globals.json) {
    ctx.io.stderr.write(`serve --dev's chain watcher credits it after ${chain.confirmations} confirmation${chain.confirmations === 1 ? '' : 's'}; add --wait to wait until the order reads PAID\n`);
  }
}

async function print(ctx: Context, r: Parameters<typeof sentRows>[0] & { order: string; status: string }): Promise<void> {
  if (ctx.globals.json) return printJson(ctx, r);
  await printRecord(ctx, [['order', r.order], ...sentRows(r), ['status', r.status]]);
}
