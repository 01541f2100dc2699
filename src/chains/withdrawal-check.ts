/**
 * What the chain says about a withdrawal's payout transaction (decisions §6, issue #12): one
 * receipt read through the watcher's JSON-RPC client, compared with what the withdrawal pays.
 * Used by `withdraw confirm` (every way it arrives), by the watcher's tick for a confirmation
 * short of its depth, and by `withdraw verify`. TRON is read through its Ethereum-compatible
 * JSON-RPC, so the adapter converts addresses and hashes at the edge and the check is one path.
 */
import { formatAmount } from '../core/money.js';
import type { ChainType } from '../core/types.js';
import { adapterFor } from './watch/adapter.js';
import { decodeTransfer } from './watch/logs.js';
import { quantity, redactUrl, RpcTransportError, type RpcClient } from './watch/rpc.js';

/** What the withdrawal expects to find. */
export interface ExpectedPayout {
  chainType: ChainType;
  chainId: string;
  /** As the registry writes it (EIP-55 or base58check). */
  token: string;
  tokenSymbol: string;
  tokenDecimals: number;
  /** The ledger's form of the recipient. */
  to: string;
  /** In the token's own base units. */
  rawAmount: bigint;
  txHash: string;
  blockNumber: number;
  /** The chain's confirmations (decisions §6b). */
  confirmations: number;
}

/** One Transfer log of the transaction, in the forms an operator reads. */
export interface ObservedTransfer {
  token: string;
  to: string;
  rawAmount: string;
  /** Formatted with the token's decimals when it is the withdrawal's token; else null. */
  amount: string | null;
}

export interface ChainObservation {
  /** The chain knows the hash: mined (receipt) or waiting in the node's pool. */
  known: boolean;
  mined: boolean;
  succeeded: boolean | null;
  blockNumber: number | null;
  blockHash: string | null;
  head: number;
  /** head - block + 1; 0 when not mined. */
  confirmations: number;
  transfers: ObservedTransfer[];
}

export type Verdict =
  /** Everything matches; `deep` when the confirmations are reached. */
  | { kind: 'match'; deep: boolean }
  /** The chain does not have this transaction (never sent, or dropped by a reorg). */
  | { kind: 'unknown' }
  /** Known but not mined yet. */
  | { kind: 'unmined' }
  | { kind: 'mismatch'; differences: string[] };

export interface ChainCheck {
  expected: ExpectedPayout;
  observed: ChainObservation;
  verdict: Verdict;
  /** One sentence for the operator: what matches, or what differs. */
  message: string;
}

const HEX32 = /^0x[0-9a-fA-F]{64}$/;

/** The node's form of a hash: TRON writes 64 hex digits, its JSON-RPC wants them with 0x. */
const nodeHash = (h: string) => `0x${h.toLowerCase().replace(/^0x/, '')}`;

/** Reads the transaction's receipt and the head in one batch (and, when there is no receipt, whether the node's pool has it). */
export async function observeTransaction(rpc: RpcClient, e: Pick<ExpectedPayout, 'chainId' | 'chainType' | 'token' | 'tokenDecimals' | 'txHash'>): Promise<ChainObservation> {
  const adapter = adapterFor(e.chainType);
  const hash = nodeHash(e.txHash);
  const [receiptOut, headOut, chainOut] = await rpc.batch([
    { method: 'eth_getTransactionReceipt', params: [hash] },
    { method: 'eth_blockNumber', params: [] },
    { method: 'eth_chainId', params: [] },
  ]);
  if (!chainOut!.ok) throw chainOut!.error;
  // A node on another network would answer for another chain's transaction of the same hash
  // space: never trusted for this one (the chain is "cannot be reached", nothing changes).
  const onChain = quantity(chainOut!.result, 'eth_chainId');
  if (String(onChain) !== e.chainId) {
    throw new RpcTransportError(`the node at ${redactUrl(rpc.url)} is on chain ${onChain}, not on chain ${e.chainId}: the rpcUrl of chain ${e.chainId} in the chains config points at another network`);
  }
  if (!receiptOut!.ok) throw receiptOut!.error;
  if (!headOut!.ok) throw headOut!.error;
  const head = quantity(headOut!.result, 'eth_blockNumber');
  const receipt = receiptOut!.result as Record<string, unknown> | null;
  if (receipt === null || receipt === undefined) {
    const pooled = await rpc.call('eth_getTransactionByHash', [hash]);
    return { known: pooled !== null && pooled !== undefined, mined: false, succeeded: null, blockNumber: null, blockHash: null, head, confirmations: 0, transfers: [] };
  }
  if (typeof receipt !== 'object' || typeof receipt.blockHash !== 'string' || !HEX32.test(receipt.blockHash) || !Array.isArray(receipt.logs)) {
    throw new RpcTransportError('the node answered eth_getTransactionReceipt with something that is not a receipt');
  }
  const blockNumber = quantity(receipt.blockNumber, 'a receipt block number');
  // Pre-Byzantium receipts have no status; every chain cryptopay knows has it.
  const succeeded = receipt.status === undefined ? null : quantity(receipt.status, 'a receipt status') === 1;
  const ownToken = adapter.toNodeAddress(e.token);
  const transfers: ObservedTransfer[] = [];
  for (const raw of receipt.logs) {
    const t = decodeTransfer(raw);
    if (!t) continue;
    const own = t.token === ownToken;
    transfers.push({
      token: own ? e.token : adapter.fromNodeAddress(t.token.slice(2)),
      to: adapter.fromNodeAddress(t.to),
      rawAmount: t.value.toString(),
      amount: own ? formatAmount(t.value, e.tokenDecimals) : null,
    });
  }
  return {
    known: true, mined: true, succeeded, blockNumber, blockHash: receipt.blockHash.toLowerCase(), head,
    confirmations: Math.max(0, head - blockNumber + 1), transfers,
  };
}

/** Compares what the chain says with what the withdrawal pays; every difference is named. */
export function judge(e: ExpectedPayout, o: ChainObservation): ChainCheck {
  const tx = e.txHash;
  const pays = `this withdrawal pays ${formatAmount(e.rawAmount, e.tokenDecimals)} ${e.tokenSymbol} to ${e.to}`;
  if (!o.known) {
    return { expected: e, observed: o, verdict: { kind: 'unknown' }, message: `chain ${e.chainId} does not know transaction ${tx}` };
  }
  if (!o.mined) {
    return { expected: e, observed: o, verdict: { kind: 'unmined' }, message: `transaction ${tx} is not mined yet on chain ${e.chainId}: confirm it once it is in a block` };
  }
  const differences: string[] = [];
  if (o.succeeded === false) differences.push(`transaction ${tx} failed on chain (reverted) in block ${o.blockNumber}: it moved nothing`);
  if (o.blockNumber !== e.blockNumber) differences.push(`transaction ${tx} is in block ${o.blockNumber}, not in block ${e.blockNumber}`);
  const sameTo = (to: string) => (e.chainType === 'EVM' ? to.toLowerCase() === e.to.toLowerCase() : to === e.to);
  const sameToken = (t: string) => (e.chainType === 'EVM' ? t.toLowerCase() === e.token.toLowerCase() : t === e.token);
  const exact = o.transfers.some((t) => sameToken(t.token) && sameTo(t.to) && BigInt(t.rawAmount) === e.rawAmount);
  if (o.succeeded !== false && !exact) {
    const moved = o.transfers.length === 0
      ? `transaction ${tx} moved no token`
      : `transaction ${tx} moved ${o.transfers.map((t) => `${t.amount !== null ? `${t.amount} ${e.tokenSymbol}` : `${t.rawAmount} base units of token ${t.token}`} to ${t.to}`).join(', ')}`;
    differences.push(`${moved}; ${pays} (token ${e.token})`);
  }
  if (differences.length) return { expected: e, observed: o, verdict: { kind: 'mismatch', differences }, message: differences.join('; ') };
  const deep = o.confirmations >= e.confirmations;
  // "3 of 1 confirmations" read as a miscount: at depth, the count and what is needed.
  const depth = deep ? `${o.confirmations} confirmations (${e.confirmations} needed)` : `${o.confirmations} of ${e.confirmations} confirmations`;
  return {
    expected: e, observed: o, verdict: { kind: 'match', deep },
    message: `transaction ${tx} pays ${formatAmount(e.rawAmount, e.tokenDecimals)} ${e.tokenSymbol} to ${e.to} in block ${e.blockNumber}, ${depth}${deep ? '' : ': waiting for the rest'}`,
  };
}
