import { ASSETS } from '../../core/assets.js';
import { formatAmount } from '../../core/money.js';
import { paymentsSeenFor, readCursor } from '../../store/chain-state.js';
import type { Q } from '../../store/ledger.js';
import type { Registry } from '../registry.js';
import type { OnChainPayment } from '../../core/types.js';

export type { OnChainPayment };

/** An order's payments as the watcher saw them, with "k of n" confirmations against the last head. */
export function onChainPayments(q: Q, registry: Registry, orderId: string): OnChainPayment[] {
  const heads = new Map<string, number | null>();
  return paymentsSeenFor(q, [orderId]).map((p) => {
    if (!heads.has(p.chainId)) heads.set(p.chainId, readCursor(q, p.chainId)?.head ?? null);
    const head = heads.get(p.chainId) ?? p.blockNumber;
    let required = 0;
    try {
      required = registry.chain(p.chainId).confirmations;
    } catch {
      // A chain since removed from the config: its depth is unknown.
    }
    const asset = ASSETS[registry.tokens().find((t) => t.chainId === p.chainId && t.address === p.token)?.asset ?? 'USDT'];
    return {
      chainId: p.chainId, txHash: p.txHash, logIndex: p.logIndex, blockNumber: p.blockNumber, token: p.token,
      amount: formatAmount(p.amount, asset?.decimals ?? 6), rawAmount: p.rawAmount, status: p.status,
      confirmations: Math.max(0, Math.min(required || Infinity, head - p.blockNumber + 1)), required, blockTime: p.blockTime ?? null, from: p.fromAddress ?? null,
    };
  });
}
