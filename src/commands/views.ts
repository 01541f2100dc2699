import type { Context } from '../context.js';
import type { ListedWithdrawal, Order, OrderDetail, Withdrawal } from '../core/types.js';
import type { MerchantView } from '../store/local-service.js';
import type { OnChainPayment } from '../chains/watch/seen.js';
import { formatTime, printJson, printRecord, type Cell } from './output.js';
import { amountIn, commandRegistry } from './withdraw/asset.js';

/** `asset`: what the amount is in, for the interface's order record, which does not say; `after`: rows shown after the record's. */
export async function printOrder(ctx: Context, o: Order | (OrderDetail & { onChain?: OnChainPayment[] }), asset?: string, after: [string, Cell][] = []): Promise<void> {
  if (ctx.globals.json) return printJson(ctx, o);
  const d = 'mchId' in o ? o : undefined;
  const shownAsset = d?.asset ?? asset;
  const pairs: [string, Cell][] = [
    ['id', o.id],
    ['oid', o.oid],
    ['uid', o.uid],
    ['amount', shownAsset ? `${o.amount} ${shownAsset}` : o.amount],
    ['status', o.status],
    ['expires', formatTime(o.expiredAt)],
    ['EVM address', o.addresses.EVM],
    ['TRON address', o.addresses.TRON],
  ];
  if (o.payUrl) pairs.push(['pay url', o.payUrl]);
  if (d) {
    pairs.push(
      ['merchant', d.mchId],
      ['paid', `${d.paidAmount} ${d.asset}`],
      ['refunded', `${d.refundedAmount} ${d.asset}`],
      ['paid at', formatTime(d.paidAt)],
      ['late', d.late ? 'yes' : 'no'],
      ['memo', d.memo],
      ['notify url', d.notifyUrl],
      ['redirect url', d.redirectUrl],
      ['logo', d.logo],
      ['created', formatTime(d.createdAt)],
    );
    // Who paid, where the watcher saw the transfer: where a refund goes back to.
    const payer = (txHash: string) => d.onChain?.find((c) => c.txHash === txHash && c.from)?.from;
    for (const p of d.payments) {
      const from = payer(p.txHash);
      pairs.push(['payment', `${p.amount} tx ${p.txHash}${from ? ` from ${from}` : ''}${p.late ? ' (late)' : ''}`]);
    }
    // Counted ones are listed above as payments; these wait for their confirmations, or for an
    // operator (held), or were refused or sent back.
    for (const p of d.onChain ?? []) {
      if (p.status === 'seen') pairs.push(['seen', `${p.amount} tx ${p.txHash} log ${p.logIndex} block ${p.blockNumber}${p.from ? ` from ${p.from}` : ''}: ${p.confirmations} of ${p.required || '?'} confirmations`]);
      else if (p.status === 'held') pairs.push(['held', `${p.amount} tx ${p.txHash} log ${p.logIndex}${p.from ? ` from ${p.from}` : ''}: more than 24 h after the order expired, not credited (cryptopay order credit-held or return-held)`]);
      else if (p.status === 'returned') pairs.push(['returned', `${p.amount} tx ${p.txHash} log ${p.logIndex}: held, then sent back (see cryptopay log --order ${o.id})`]);
      else if (p.status === 'refused') pairs.push(['refused', `${p.amount} tx ${p.txHash} log ${p.logIndex}: refused by the ledger (see cryptopay log --order ${o.id})`]);
    }
  }
  await printRecord(ctx, [...pairs, ...after]);
}

export async function printWithdrawal(ctx: Context, w: Withdrawal | ListedWithdrawal): Promise<void> {
  if (ctx.globals.json) return printJson(ctx, w);
  const registry = await commandRegistry(ctx, 'withdraw');
  let asset = 'asset' in w ? w.asset : undefined;
  if (asset === undefined && !registry.findToken(w.chainId, w.token)) {
    // An operation's answer (the interface's record, no asset) on a chain only the remote knows:
    // its extension read names the asset. Bare if that read fails; the operation is done.
    asset = await (await ctx.service()).getWithdrawal(w.id, ctx.globals.mchId).then((d) => d.asset, () => undefined);
  }
  await printRecord(ctx, [
    ['id', w.id],
    ['uid', w.uid],
    ['amount', amountIn(registry, { ...w, asset })],
    ['to', w.to],
    ['chain', `${w.chainType} ${w.chainId}`],
    ['token', w.token],
    ['status', w.status],
    ['tx hash', w.txHash],
    ['block', w.blockNumber],
    ['remark', w.remark],
    ...verificationRows(w),
    ['created', formatTime(w.createdAt)],
    ['updated', formatTime(w.updatedAt)],
  ]);
}

/** How the confirmation was trusted (withdraw show): verified on chain, waiting for depth, or not verified and why. */
function verificationRows(w: Withdrawal & { verification?: string | null; verificationNote?: string | null }): [string, Cell][] {
  if (w.verification === undefined) return [];
  const label =
    w.verification === 'verified' ? 'verified on chain'
    : w.verification === 'confirming' ? 'matches on chain; waiting for its confirmations (the watcher confirms it)'
    : w.verification === 'unverified' ? 'NOT verified on chain'
    : null;
  const rows: [string, Cell][] = [['verification', label]];
  if (w.verificationNote) rows.push([w.verification === 'unverified' ? 'why' : 'note', w.verificationNote]);
  return rows;
}

/** A merchant's payout wallets as rows, one per chain type (merchant show, merchant payout-wallet). */
export function payoutWalletRows(w: Record<'EVM' | 'TRON', string[]>): [string, string][] {
  return (['EVM', 'TRON'] as const).map((t) => [`${t} payout wallets`, w[t].length ? w[t].join(', ') : 'none: the sender is not checked']);
}

export async function printMerchant(ctx: Context, m: MerchantView & { payoutWallets?: Record<'EVM' | 'TRON', string[]> }): Promise<void> {
  if (ctx.globals.json) return printJson(ctx, m);
  await printRecord(ctx, [
    ['mchId', m.mchId],
    ['name', m.name],
    ['asset', m.asset],
    ['order lifetime', m.orderLifetime],
    ['rate limit', m.rateLimit === 0 ? 'none' : `${m.rateLimit}/min`],
    ['EVM xpub', m.evmXpub],
    ['TRON xpub', m.tronXpub],
    ['addresses issued', `EVM ${m.addressesIssued.EVM}, TRON ${m.addressesIssued.TRON}`],
    ...(m.payoutWallets ? payoutWalletRows(m.payoutWallets) : []),
    ['created', formatTime(m.createdAt)],
    ['secret rotated', formatTime(m.secretRotatedAt)],
  ]);
}
