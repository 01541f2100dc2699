/**
 * What the chain says about a withdrawal's payout transaction (decisions §6, issue #12): one
 * receipt read through the watcher's JSON-RPC client, compared with what the withdrawal pays.
 * Used by `withdraw confirm` (every way it arrives), by the watcher's tick for a confirmation
 * short of its depth, and by `withdraw verify`. TRON is read through its Ethereum-compatible
 * JSON-RPC, so the adapter converts addresses and hashes at the edge and the check is one path.
 */
import { formatAmount } from '../core/money.js';
import { PAYOUT_CLOCK_SKEW_MS, type ChainType } from '../core/types.js';
import { adapterFor } from './watch/adapter.js';
import { decodeTransfer, nodeTxHash, parseHeader, parseReceipt, TRANSFER_TOPIC } from './watch/logs.js';
import { hexQuantity, quantity, redactUrl, RpcTransportError, type RpcClient } from './watch/rpc.js';
import { sameAddress } from '../core/words.js';

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
  /** When the withdrawal was requested (ms): its payout cannot be mined before (decisions §6). */
  requestedAt: number;
  /** The merchant's payout wallets on this chain type (ledger form): when any, the payout's tokens come from one of them. */
  payoutWallets: string[];
}

/** One Transfer log of the transaction, in the forms an operator reads. */
export interface ObservedTransfer {
  token: string;
  /** Whose tokens moved (the log's `from`, not who sent the transaction). */
  from: string;
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
  /** The block's timestamp, in milliseconds; null when not mined. */
  blockTime: number | null;
  head: number;
  /** head - block + 1; 0 when not mined. */
  confirmations: number;
  transfers: ObservedTransfer[];
  /**
   * Who sent it and with which nonce, when the node knows the transaction (EVM; a TRON node
   * answers no nonce): whether it can still be mined once a reorg took it away. Not shown.
   */
  sender?: { from: string; nonce: number | null };
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


/** Reads the transaction's receipt and the head in one batch (and, when there is no receipt, whether the node's pool has it). */
export async function observeTransaction(rpc: RpcClient, e: Pick<ExpectedPayout, 'chainId' | 'chainType' | 'token' | 'tokenDecimals' | 'txHash'>): Promise<ChainObservation> {
  const adapter = adapterFor(e.chainType);
  const hash = nodeTxHash(e.txHash);
  const [receiptOut, headOut, chainOut, txOut] = await rpc.batch([
    { method: 'eth_getTransactionReceipt', params: [hash] },
    { method: 'eth_blockNumber', params: [] },
    { method: 'eth_chainId', params: [] },
    { method: 'eth_getTransactionByHash', params: [hash] },
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
  if (!txOut!.ok) throw txOut!.error;
  const head = quantity(headOut!.result, 'eth_blockNumber');
  const sender = senderOf(txOut!.result);
  const receipt = parseReceipt(receiptOut!.result);
  if (receipt === null) {
    const pooled = txOut!.result;
    return {
      known: pooled !== null && pooled !== undefined, mined: false, succeeded: null, blockNumber: null, blockHash: null, blockTime: null, head, confirmations: 0, transfers: [],
      ...(sender ? { sender } : {}),
    };
  }
  const { blockNumber, succeeded } = receipt;
  const blockTime = await blockTimeOf(rpc, blockNumber, receipt.blockHash);
  const ownToken = adapter.toNodeAddress(e.token);
  const transfers: ObservedTransfer[] = receipt.transfers.map((t) => {
    const own = t.token === ownToken;
    return {
      token: own ? e.token : adapter.fromNodeAddress(t.token.slice(2)),
      from: adapter.fromNodeAddress(t.from),
      to: adapter.fromNodeAddress(t.to),
      rawAmount: t.value.toString(),
      amount: own ? formatAmount(t.value, e.tokenDecimals) : null,
    };
  });
  return {
    known: true, mined: true, succeeded, blockNumber, blockHash: receipt.blockHash, blockTime, head,
    confirmations: Math.max(0, head - blockNumber + 1), transfers, ...(sender ? { sender } : {}),
  };
}

/**
 * The time of the block a receipt names, in milliseconds, read as the watcher reads headers
 * (eth_getBlockByNumber, parseHeader: seconds, or java-tron's milliseconds). A block at that
 * height that is not the receipt's (a reorg between the two reads) is the node's answer changing
 * under us: the chain could not be read, and nothing is decided. A time past the year 275760 is
 * not a time (it could not even be printed).
 */
async function blockTimeOf(rpc: RpcClient, blockNumber: number, blockHash: string): Promise<number> {
  const header = parseHeader(await rpc.call('eth_getBlockByNumber', [hexQuantity(blockNumber), false]), 'eth_getBlockByNumber');
  if (header === null || header.hash !== blockHash) {
    throw new RpcTransportError(`the node's block ${blockNumber} is not the block ${blockHash} its receipt named (a reorg while it was read)`);
  }
  if (header.timestamp > MAX_TIME_MS) throw new RpcTransportError(`the node answered block ${blockNumber}'s time with ${header.timestamp}, which is not a time`);
  return header.timestamp;
}

/** The largest time a Date holds. */
const MAX_TIME_MS = 8.64e15;

/** The sender and nonce of a node's transaction object; undefined when it has none to read. */
function senderOf(tx: unknown): ChainObservation['sender'] {
  if (tx === null || typeof tx !== 'object') return undefined;
  const t = tx as Record<string, unknown>;
  if (typeof t.from !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(t.from)) return undefined;
  let nonce: number | null = null;
  try {
    nonce = quantity(t.nonce, 'a transaction nonce');
  } catch {
    // None to read (a TRON node): whether it can come back is then judged without it.
  }
  return { from: t.from.toLowerCase(), nonce };
}

/**
 * Whether the sender's nonce is used, in a block `depth` deep, by a transaction: an EVM
 * account's transactions are mined in nonce order, each nonce once, so one out of the chain with
 * that nonce can then never be mined.
 */
export async function nonceUsedAtDepth(rpc: RpcClient, sender: { from: string; nonce: number }, head: number, depth: number): Promise<boolean> {
  const at = head - depth + 1;
  if (at < 0) return false;
  return quantity(await rpc.call('eth_getTransactionCount', [sender.from, hexQuantity(at)]), 'eth_getTransactionCount') > sender.nonce;
}

/**
 * The transaction of `sender` at `nonce` that moved the payout's token to its recipient, mined in
 * blocks `from`..`to`: looked for among the token's Transfer logs to the recipient (any sender in
 * the log: a batch contract moves the token too), each candidate's sender and nonce read with its
 * receipt. Logs are what a full node keeps; no state of older blocks is asked for. `none` when
 * there is no such transaction in those blocks; `unknown` when the node could not say (an error,
 * a rate limit, a malformed answer): the caller asks again later and decides nothing meanwhile (a
 * review found a rate limit here taken as "none", and the withdrawal dropped, though the
 * replacement had paid it).
 */
export async function replacementOf(
  rpc: RpcClient,
  e: Pick<ExpectedPayout, 'chainId' | 'chainType' | 'token' | 'tokenDecimals' | 'to'>,
  sender: { from: string; nonce: number },
  blocks: { from: number; to: number },
): Promise<{ hash: string; observed: ChainObservation } | 'none' | 'unknown'> {
  if (e.chainType !== 'EVM') return 'none';
  try {
    const recipient = `0x${'0'.repeat(24)}${e.to.slice(2).toLowerCase()}`;
    const logs = await rpc.call('eth_getLogs', [{ fromBlock: hexQuantity(Math.max(0, blocks.from)), toBlock: hexQuantity(blocks.to), address: e.token.toLowerCase(), topics: [TRANSFER_TOPIC, null, recipient] }]);
    if (!Array.isArray(logs)) return 'unknown';
    // Checked as the watcher checks every log (a malformed one throws: 'unknown' below).
    const hashes = new Set(logs.map(decodeTransfer).flatMap((t) => (t ? [t.txHash] : [])));
    for (const hash of hashes) {
      const observed = await observeTransaction(rpc, { ...e, txHash: hash });
      if (observed.sender && observed.sender.from === sender.from.toLowerCase() && observed.sender.nonce === sender.nonce) return { hash, observed };
    }
    return 'none';
  } catch {
    return 'unknown';
  }
}

/** A TRON transaction expires at most 24 h after it is made: past that, one out of the chain stays out. */
export const TRON_MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/**
 * What becomes of a confirming withdrawal whose transaction a reorg took out of the chain:
 * `gone` when it can never be mined again (EVM: its nonce used `depth` blocks deep; TRON, which
 * has no nonce: lost 24 h ago and unknown to the node), with the reason for the operator.
 */
export function lostPayoutFate(a: {
  chainType: ChainType; depth: number; known: boolean; lostAt: number | null; now: number; nonce: number | null; nonceUsedAtDepth: boolean;
}): { gone: boolean; why: string } {
  if (a.chainType === 'TRON') {
    return a.lostAt !== null && a.now - a.lostAt >= TRON_MAX_EXPIRATION_MS && !a.known
      ? { gone: true, why: 'a reorg took it away more than 24 h ago and a TRON transaction expires within 24 h: it can never be mined' }
      : { gone: false, why: 'a TRON transaction can be mined until it expires, 24 h at most' };
  }
  if (a.nonce === null) return { gone: false, why: 'its nonce is not known, so it is waited for until it is mined again' };
  return a.nonceUsedAtDepth
    ? { gone: true, why: `a reorg took it away, and its sender's nonce ${a.nonce} is used by another transaction ${a.depth} blocks deep: it can never be mined` }
    : { gone: false, why: `its sender's nonce ${a.nonce} is not used by another transaction yet` };
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
  // Token, payee and amount say what moved, not when: an older transfer of the same amount to the
  // same address (the user's deposit from elsewhere, a hash copied from the wrong line) is not the payout.
  if (o.blockTime !== null && o.blockTime < e.requestedAt - PAYOUT_CLOCK_SKEW_MS) {
    differences.push(`transaction ${tx} was mined at ${new Date(o.blockTime).toISOString()}, before this withdrawal was requested at ${new Date(e.requestedAt).toISOString()}: it cannot be its payout`);
  }
  const same = (a: string, b: string) => sameAddress(e.chainType, a, b);
  const sameTo = (to: string) => same(to, e.to);
  const sameToken = (t: string) => same(t, e.token);
  const paysIt = (t: ObservedTransfer) => sameToken(t.token) && sameTo(t.to) && BigInt(t.rawAmount) === e.rawAmount;
  // A payout moves someone else's tokens to the recipient: the payee's own tokens moved to itself
  // (an attacker review: its transfer to itself was confirmed, verified) pay nothing. Read in the
  // Transfer log (whose tokens moved), not from who sent the transaction: a contract wallet's
  // transfer to itself is sent by its owner, and a payout the recipient pulls (transferFrom,
  // a claim) is sent by the recipient.
  // A merchant that names its payout wallets: the tokens come from one of them (a payee's second
  // wallet, another merchant's payout of the same amount to the same address, match otherwise).
  const fromWallet = (t: ObservedTransfer) => e.payoutWallets.length === 0 || e.payoutWallets.some((w) => same(w, t.from));
  // "Exactly that amount of that token to that address" is what the transaction moved there in
  // all, whoever's tokens: a batch of [1, 1] to the payee moved 2, not the 1 withdrawn (an
  // outsider's trial: it confirmed a withdrawal of 1, and the other 1 was left unaccounted for,
  // since the hash can confirm nothing else); parts that add up to the amount pay it. With payout
  // wallets named, every part must come from one of them. Transfers to other addresses in the
  // same transaction are not counted.
  const toPayee = o.transfers.filter((t) => sameToken(t.token) && sameTo(t.to) && !sameTo(t.from));
  const inAll = toPayee.reduce((sum, t) => sum + BigInt(t.rawAmount), 0n);
  const foreign = toPayee.find((t) => !fromWallet(t));
  if (o.succeeded !== false && (toPayee.length === 0 || inAll !== e.rawAmount || foreign)) {
    const own = o.transfers.find((t) => paysIt(t) && sameTo(t.from));
    const moved = o.transfers.length === 0
      ? `transaction ${tx} moved no token`
      : `transaction ${tx} moved ${o.transfers.map((t) => `${t.amount !== null ? `${t.amount} ${e.tokenSymbol}` : `${t.rawAmount} base units of token ${t.token}`} to ${t.to}`).join(', ')}`;
    const amount = (raw: bigint) => `${formatAmount(raw, e.tokenDecimals)} ${e.tokenSymbol}`;
    differences.push(
      toPayee.length === 0 && own ? `transaction ${tx} moved ${own.amount ?? own.rawAmount} ${e.tokenSymbol} from ${own.from} to itself: the recipient's own tokens, not a payout`
      : inAll === e.rawAmount && foreign ? `transaction ${tx} moved ${foreign.amount ?? foreign.rawAmount} ${e.tokenSymbol} from ${foreign.from}, which is not a payout wallet of this merchant (${e.payoutWallets.join(', ')}): it is not the merchant's payout`
      : toPayee.length > 1 ? `transaction ${tx} moved ${amount(inAll)} in all to ${e.to}, in ${toPayee.length} transfers (${toPayee.map((t) => `${amount(BigInt(t.rawAmount))} from ${t.from}`).join(', ')}); ${pays}`
      : `${moved}; ${pays} (token ${e.token})`,
    );
  }
  if (differences.length) return { expected: e, observed: o, verdict: { kind: 'mismatch', differences }, message: differences.join('; ') };
  const deep = o.confirmations >= e.confirmations;
  // "3 of 1 confirmations" read as a miscount: at depth, the count and what is needed.
  const depth = deep ? `${o.confirmations} confirmation${o.confirmations === 1 ? '' : 's'} (${e.confirmations} needed)` : `${o.confirmations} of ${e.confirmations} confirmations`;
  return {
    expected: e, observed: o, verdict: { kind: 'match', deep },
    message: `transaction ${tx} pays ${formatAmount(e.rawAmount, e.tokenDecimals)} ${e.tokenSymbol} to ${e.to} in block ${e.blockNumber}, ${depth}${deep ? '' : ': waiting for the rest'}`,
  };
}
