/**
 * Whether a withdrawal already looks paid out on chain: a transfer of its amount of its token (or
 * less by a fee, down to 90%) to its address, from anyone but that address, mined after it was
 * requested; or a transaction whose transfers there add up to that. Asked before a withdrawal is rejected (a
 * new-user trial paid one out by hand, then rejected it: the hold went back to the user, who was
 * paid twice) and before `dev pay-out` sends (a double click sent twice). Read with the token's
 * Transfer logs to the address (eth_getLogs with a topic filter, which TRON's JSON-RPC serves
 * too) from the first block mined at or after the request, found by its headers' times.
 */
import { PAYOUT_CLOCK_SKEW_MS, type ChainType } from '../core/types.js';
import { adapterFor } from './watch/adapter.js';
import { decodeTransfer, isRangeTooLarge, parseHeader, TRANSFER_TOPIC } from './watch/logs.js';
import { hexQuantity, quantity, redactUrl, RpcTransportError, type RpcClient } from './watch/rpc.js';

export interface PayoutSought {
  chainType: ChainType;
  chainId: string;
  /** As the registry writes it. */
  token: string;
  /** The ledger's form of the recipient. */
  to: string;
  /** In the token's own base units. */
  rawAmount: bigint;
  /** When the withdrawal was requested (ms): a transfer mined before cannot be its payout. */
  requestedAt: number;
}

export interface FoundPayout {
  /** In the form the chain's users write it (TRON: 64 hex digits). */
  txHash: string;
  blockNumber: number;
  /** Whose tokens moved (the ledger's form of each sender of its transfers to the recipient, in the order of its logs). */
  senders: string[];
  /** How many transfers to the recipient the transaction made. */
  parts: number;
  /**
   * What the transaction moved to the recipient in all, in the token's base units: the amount,
   * less by a fee (at least FEE_FLOOR of it), or more when one of its transfers alone is that.
   */
  rawAmount: bigint;
}

/**
 * A transfer of less than the amount still reads as its payout down to this share of it (a wallet
 * or an exchange that takes its fee off what it sends: a new-user trial paid 0.95 for 1, confirm
 * refused it as another amount, and the reject then returned the whole hold).
 */
export const FEE_FLOOR = { num: 9n, den: 10n };

/** The least a transfer of `rawAmount` less a fee may be and still read as its payout. */
export const feeFloor = (rawAmount: bigint) => (rawAmount * FEE_FLOOR.num + FEE_FLOOR.den - 1n) / FEE_FLOOR.den;

export interface PayoutSearch {
  found: FoundPayout[];
  /** The blocks looked at (none when no block was mined since the request: from > to). */
  fromBlock: number;
  toBlock: number;
}

/** More blocks than this since the request are not searched: the caller says the chain cannot be read for it. */
export const MAX_SEARCH_BLOCKS = 2_000_000;

/** Headers asked for in one batch while the first block after the request is looked for. */
const PROBES = 8;

/**
 * The transfers that could be the withdrawal's payout, oldest first. Throws RpcTransportError or
 * RpcError when the node cannot say (down, another network, a malformed answer, too many blocks):
 * the caller decides nothing then.
 */
export async function findPayouts(rpc: RpcClient, e: PayoutSought, opts: { span?: number; maxBlocks?: number } = {}): Promise<PayoutSearch> {
  const adapter = adapterFor(e.chainType);
  const [headOut, chainOut] = await rpc.batch([{ method: 'eth_blockNumber', params: [] }, { method: 'eth_chainId', params: [] }]);
  if (!chainOut!.ok) throw chainOut!.error;
  if (!headOut!.ok) throw headOut!.error;
  const onChain = quantity(chainOut!.result, 'eth_chainId');
  if (String(onChain) !== e.chainId) {
    throw new RpcTransportError(`the node at ${redactUrl(rpc.url)} is on chain ${onChain}, not on chain ${e.chainId}: the rpcUrl of chain ${e.chainId} in the chains config points at another network`);
  }
  const head = quantity(headOut!.result, 'eth_blockNumber');
  const fromBlock = await firstBlockAtOrAfter(rpc, e.requestedAt - PAYOUT_CLOCK_SKEW_MS, head);
  const maxBlocks = opts.maxBlocks ?? MAX_SEARCH_BLOCKS;
  if (head - fromBlock + 1 > maxBlocks) {
    throw new RpcTransportError(`${head - fromBlock + 1} blocks were mined on chain ${e.chainId} since the withdrawal was requested, more than the ${maxBlocks} searched for its payout`);
  }
  const token = adapter.toNodeAddress(e.token);
  const to = adapter.toNodeAddress(e.to).slice(2);
  const least = feeFloor(e.rawAmount);
  const found = new Map<string, FoundPayout>();
  let span = opts.span ?? 10_000;
  for (let from = fromBlock; from <= head; ) {
    const end = Math.min(head, from + span - 1);
    let logs: unknown;
    try {
      logs = await rpc.call('eth_getLogs', [{ fromBlock: hexQuantity(from), toBlock: hexQuantity(end), address: token, topics: [TRANSFER_TOPIC, null, `0x${'0'.repeat(24)}${to}`] }]);
    } catch (err) {
      if (isRangeTooLarge(err) && span > 1) {
        span = Math.max(1, Math.floor(span / 2));
        continue;
      }
      throw err;
    }
    if (!Array.isArray(logs)) throw new RpcTransportError('the node answered eth_getLogs with something that is not a list');
    // A transaction's transfers to the payee in all, as confirm reads "exactly that amount"
    // (withdrawal-check.ts): a payout split in parts (0.5 + 0.5 in one batch) paid the user too,
    // and one that moved more in all is named with what it moved in all.
    const inAll = new Map<string, { blockNumber: number; senders: string[]; raw: bigint; value: bigint; logs: Set<number>; single: boolean }>();
    for (const raw of logs) {
      const t = decodeTransfer(raw);
      // The amount, or less by a fee, of someone else's tokens (the payee's own moved to itself
      // pay nothing), from anyone: a payout from a wallet the merchant has not named yet has
      // paid the user all the same (a new-user trial's was refused by confirm, then rejected).
      if (!t || t.token !== token || t.to !== to || t.from === to) continue;
      if (t.blockNumber < from || t.blockNumber > end) continue;
      const sum = inAll.get(t.txHash) ?? { blockNumber: t.blockNumber, senders: [], raw: 0n, value: 0n, logs: new Set<number>(), single: false };
      const sender = adapter.fromNodeAddress(t.from);
      if (!sum.senders.includes(sender)) sum.senders.push(sender);
      sum.raw += t.value;
      // A log the node answered twice counts once in what is shown; some nodes number every log
      // 0, so the sum as answered is asked too.
      if (!sum.logs.has(t.logIndex)) {
        sum.logs.add(t.logIndex);
        sum.value += t.value;
      }
      if (t.value <= e.rawAmount && t.value >= least) sum.single = true;
      inAll.set(t.txHash, sum);
    }
    const inRange = (v: bigint) => v <= e.rawAmount && v >= least;
    for (const [hash, sum] of inAll) {
      if ((sum.single || inRange(sum.value) || inRange(sum.raw)) && !found.has(hash)) {
        found.set(hash, { txHash: adapter.txHash(hash), blockNumber: sum.blockNumber, senders: sum.senders, parts: sum.logs.size, rawAmount: sum.value });
      }
    }
    from = end + 1;
  }
  return { found: [...found.values()].sort((a, b) => a.blockNumber - b.blockNumber), fromBlock, toBlock: head };
}

/**
 * The first block whose time is at or after `timeMs` (head + 1 when none is), by the times of its
 * headers, which never go back: a search of PROBES headers per batch, about seven batches for a
 * chain of 20 million blocks.
 */
export async function firstBlockAtOrAfter(rpc: RpcClient, timeMs: number, head: number): Promise<number> {
  // Invariant: every block below lo is before timeMs; hi is at or after it (or head + 1).
  let lo = 0;
  let hi = head + 1;
  while (lo < hi) {
    const step = Math.max(1, Math.ceil((hi - lo) / (PROBES + 1)));
    const at: number[] = [];
    for (let n = lo + step - 1; n < hi && at.length < PROBES; n += step) at.push(n);
    if (at.length === 0) at.push(lo);
    const outs = await rpc.batch(at.map((n) => ({ method: 'eth_getBlockByNumber', params: [hexQuantity(n), false] })));
    let nextLo = lo;
    let nextHi = hi;
    for (let i = 0; i < at.length; i++) {
      const out = outs[i]!;
      if (!out.ok) throw out.error;
      const header = parseHeader(out.result, `block ${at[i]}`);
      if (header === null) throw new RpcTransportError(`the node has no block ${at[i]}, below its head ${head}`);
      if (header.timestamp < timeMs) nextLo = at[i]! + 1;
      else {
        nextHi = at[i]!;
        break;
      }
    }
    lo = nextLo;
    hi = nextHi;
  }
  return lo;
}
