import { RpcError, RpcTransportError, hexQuantity, quantity, type RpcClient } from './rpc.js';

/** keccak256("Transfer(address,address,uint256)"), the topic of every ERC-20 and TRC-20 transfer. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A Transfer log as the node spells it, checked: token as 0x + 40 lower-case hex, from and to as 40 hex digits without 0x. */
export interface TransferLog {
  token: string;
  from: string;
  to: string;
  value: bigint;
  blockNumber: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
}

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const HEX20 = /^0x[0-9a-fA-F]{40}$/;

/**
 * A log that is not a well-formed Transfer (another event with the same topic count, an
 * ERC-721 transfer whose id sits in a topic) yields undefined: it is not a token payment.
 */
export function decodeTransfer(raw: unknown): TransferLog | undefined {
  if (typeof raw !== 'object' || raw === null) throw new RpcTransportError('the node answered eth_getLogs with a log that is not an object');
  const l = raw as Record<string, unknown>;
  const topics = l.topics;
  if (!Array.isArray(topics) || topics[0]?.toString().toLowerCase() !== TRANSFER_TOPIC) return undefined;
  if (l.removed === true) return undefined;
  if (topics.length !== 3 || typeof l.data !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(l.data)) return undefined;
  const [, fromT, toT] = topics as string[];
  if (!HEX32.test(fromT!) || !HEX32.test(toT!)) return undefined;
  // An address topic is the 20 bytes left-padded with zeros; other bits set means not an address.
  if (!/^0x0{24}/.test(fromT!) || !/^0x0{24}/.test(toT!)) return undefined;
  if (typeof l.address !== 'string' || !HEX20.test(l.address)) throw new RpcTransportError('the node answered eth_getLogs with a log without a valid address');
  if (typeof l.blockHash !== 'string' || !HEX32.test(l.blockHash)) throw new RpcTransportError('the node answered eth_getLogs with a log without a block hash');
  if (typeof l.transactionHash !== 'string' || !HEX32.test(l.transactionHash)) throw new RpcTransportError('the node answered eth_getLogs with a log without a transaction hash');
  return {
    token: l.address.toLowerCase(),
    from: fromT!.slice(26).toLowerCase(),
    to: toT!.slice(26).toLowerCase(),
    value: BigInt(l.data),
    blockNumber: quantity(l.blockNumber, 'a log block number'),
    blockHash: l.blockHash.toLowerCase(),
    txHash: l.transactionHash.toLowerCase(),
    logIndex: quantity(l.logIndex, 'a log index'),
  };
}

/** A transaction hash as a node's JSON-RPC takes it: TRON writes 64 hex digits, the node wants them with 0x. */
export const nodeTxHash = (h: string) => `0x${h.toLowerCase().replace(/^0x/, '')}`;

/** A node's receipt, checked: where the transaction was mined, whether it succeeded, its Transfer logs. */
export interface Receipt {
  blockNumber: number;
  blockHash: string;
  /** null on a receipt without a status (pre-Byzantium; no chain cryptopay knows). */
  succeeded: boolean | null;
  transfers: TransferLog[];
}

/**
 * An eth_getTransactionReceipt answer: null when the node has no receipt (not mined, or not
 * known); an answer that is not a receipt is a transport error (the tick or check is tried again).
 */
export function parseReceipt(raw: unknown): Receipt | null {
  if (raw === null || raw === undefined) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r !== 'object' || typeof r.blockHash !== 'string' || !HEX32.test(r.blockHash) || !Array.isArray(r.logs)) {
    throw new RpcTransportError('the node answered eth_getTransactionReceipt with something that is not a receipt');
  }
  const transfers: TransferLog[] = [];
  for (const l of r.logs) {
    const t = decodeTransfer(l);
    if (t) transfers.push(t);
  }
  return {
    blockNumber: quantity(r.blockNumber, 'a receipt block number'),
    blockHash: r.blockHash.toLowerCase(),
    succeeded: r.status === undefined ? null : quantity(r.status, 'a receipt status') === 1,
    transfers,
  };
}

/**
 * A rate limiter's answer: HTTP 429 passed on as an error, Infura's -32005 "daily request count
 * exceeded, request rate limited", Alchemy's "compute units per second capacity", QuickNode's
 * "request limit reached", and a bare -32005 "limit exceeded" (EIP-1474's name for the code,
 * which rate limiters use with no other word). The node asks to slow down: a smaller range
 * would only send more requests, so the watcher backs off instead.
 */
export function isRateLimited(e: unknown): boolean {
  if (!(e instanceof RpcError)) return false;
  if (e.code === 429) return true;
  const m = e.rpcMessage.trim();
  if (/rate[- ]?limit|too many requests|request (count|limit)|requests? per (second|minute)|compute units|capacity|quota|throttl|credits/i.test(m)) return true;
  return e.code === -32005 && /^(request )?limit (exceeded|reached)\.?$/i.test(m);
}

/**
 * The answers nodes give when a range holds too many blocks or logs: geth's "query returned
 * more than 10000 results", Infura's -32005 with that text, Alchemy's "block range" and "Log
 * response size exceeded", BSC's "exceed maximum block range", TRON's "exceed max block range".
 * A rate limit (isRateLimited) is not one, whatever its code; anything else is a real failure.
 */
export function isRangeTooLarge(e: unknown): boolean {
  if (!(e instanceof RpcError)) return false;
  if (isRateLimited(e)) return false;
  if (e.code === -32005) return true;
  return /range|too (many|large|big)|more than \d+|exceed|response size|timeout/i.test(e.rpcMessage);
}

export interface RangeScanner {
  /** How many blocks the next request asks for. */
  readonly span: number;
  /**
   * The Transfer logs of `tokens` (0x-hex) in blocks from..to (inclusive), fetched together with
   * the headers of the first and last block covered; the span shrinks while the node calls the
   * range too large, and the blocks actually covered are returned. Logs in the first or last
   * block that do not carry that block's hash came from another fork than the headers (a
   * load-balanced endpoint whose backends disagree, or a reorg between the calls): NodesDisagree.
   */
  fetch(
    from: number,
    to: number,
    tokens: string[],
    /** The node has started answering the request for from..end (the client's onAnswer). */
    onAnswer?: (end: number) => void,
  ): Promise<{ to: number; logs: TransferLog[]; first: BlockHeader | null; tip: BlockHeader | null }>;
}

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Milliseconds since the epoch (the node gives seconds). */
  timestamp: number;
}

/**
 * The node's answers belong to different forks: its logs and its headers disagree on a block's
 * hash. Nothing is stored from such an answer; the watcher tries again after a pause.
 */
export class NodesDisagree extends RpcTransportError {
  constructor(what: string) {
    super(`the node's answers come from different forks (${what}); nothing stored, trying again`);
    this.name = 'NodesDisagree';
  }
}

/**
 * The node does not have blocks this watcher already scanned: its head is below them, or it
 * answers no header for one (a node syncing or restarted, or a load-balanced endpoint's slower
 * backend). That is not a reorg: nothing is concluded or changed until it has them again, when
 * their hashes are compared as usual (an outside review saw a node 4 blocks behind for seconds
 * taken for a deep reorg of a counted payment). The watcher tries again after a pause.
 */
export class NodeBehind extends RpcTransportError {
  constructor(what: string) {
    super(`the node is behind the blocks already scanned (${what}); nothing changed, waiting for it to catch up`);
    this.name = 'NodeBehind';
  }
}

/**
 * A block's time in milliseconds. Ethereum nodes (and TRON's /jsonrpc) give seconds; a value
 * too large to be seconds (after the year 5000) is taken as milliseconds already.
 */
export function blockTimeMs(v: unknown, what: string): number {
  const t = quantity(v, what);
  return t > 1e11 ? t : t * 1000;
}

export function parseHeader(raw: unknown, what: string): BlockHeader | null {
  if (raw === null) return null;
  const b = raw as { number?: unknown; hash?: unknown; parentHash?: unknown; timestamp?: unknown } | undefined;
  if (typeof b !== 'object' || typeof b.hash !== 'string' || !HEX32.test(b.hash) || typeof b.parentHash !== 'string' || !HEX32.test(b.parentHash)) {
    throw new RpcTransportError(`the node answered ${what} with something that is not a block`);
  }
  return {
    number: quantity(b.number, `${what} number`), hash: b.hash.toLowerCase(), parentHash: b.parentHash.toLowerCase(),
    timestamp: blockTimeMs(b.timestamp, `${what} timestamp`),
  };
}

/**
 * A log as the RPC client hands it over when it reads an answer one log at a time: decoded (or
 * undefined, not a transfer), or the error decoding it raised, thrown where the scanner reads
 * that log, as when the whole answer is decoded after it is parsed.
 */
class ReadLog {
  constructor(
    readonly log: TransferLog | undefined,
    readonly error?: unknown,
  ) {}
}

function readLog(raw: unknown): ReadLog {
  try {
    return new ReadLog(decodeTransfer(raw));
  } catch (e) {
    return new ReadLog(undefined, e);
  }
}

export function createRangeScanner(rpc: RpcClient, opts: { initialSpan?: number; maxSpan?: number; targetLogs?: number } = {}): RangeScanner {
  const maxSpan = opts.maxSpan ?? 2000;
  // A range's logs arrive as one JSON text: a busy token's 2,000 blocks can be 100 MB. The span
  // is sized so that one answer holds about this many logs, which bounds serve's memory.
  const targetLogs = opts.targetLogs ?? 5000;
  // Small at first: the first answer of a busy chain must not be the biggest.
  let span = Math.min(opts.initialSpan ?? 50, maxSpan);
  let good = 0;
  // Whether the node accepted the last range asked for: only then is the next one worth asking
  // for before this one is read (onAnswer); while the span shrinks, such a guess is mostly refused.
  let accepted = true;
  return {
    get span() {
      return span;
    },
    async fetch(from, to, tokens, onAnswer) {
      for (;;) {
        const end = Math.min(to, from + span - 1);
        // Each log is decoded as it is read: the answer (thousands of logs) is never one tree of objects.
        const [logsOut, firstOut, tipOut] = await rpc.batch(
          [
            { method: 'eth_getLogs', params: [{ fromBlock: hexQuantity(from), toBlock: hexQuantity(end), address: tokens, topics: [TRANSFER_TOPIC] }] },
            { method: 'eth_getBlockByNumber', params: [hexQuantity(from), false] },
            { method: 'eth_getBlockByNumber', params: [hexQuantity(end), false] },
          ],
          { element: readLog, onAnswer: onAnswer && accepted ? () => onAnswer(end) : undefined },
        );
        if (!logsOut!.ok) {
          if (isRangeTooLarge(logsOut!.error) && span > 1) {
            span = Math.max(1, Math.floor(span / 2));
            good = 0;
            accepted = false;
            continue;
          }
          throw logsOut!.error;
        }
        if (!tipOut!.ok) throw tipOut!.error;
        if (!firstOut!.ok) throw firstOut!.error;
        if (!Array.isArray(logsOut!.result)) throw new RpcTransportError('the node answered eth_getLogs with something that is not a list');
        accepted = true;
        const logs: TransferLog[] = [];
        for (const raw of logsOut!.result) {
          if (raw instanceof ReadLog && raw.error !== undefined) throw raw.error;
          const t = raw instanceof ReadLog ? raw.log : decodeTransfer(raw);
          if (t && t.blockNumber >= from && t.blockNumber <= end) logs.push(t);
        }
        if (logs.length > targetLogs) {
          span = Math.max(1, Math.floor(((end - from + 1) * targetLogs) / logs.length));
          good = 0;
        } else if (end - from + 1 === span && ++good >= 4 && span < maxSpan && logs.length * 2 <= targetLogs) {
          // Grow back slowly after the node accepted a few ranges of this size.
          span = Math.min(maxSpan, span * 2);
          good = 0;
        }
        const first = parseHeader(firstOut!.result, `block ${from}`);
        const tip = parseHeader(tipOut!.result, `block ${end}`);
        for (const h of [first, tip]) {
          if (!h) continue;
          const other = logs.find((l) => l.blockNumber === h.number && l.blockHash !== h.hash);
          if (other) throw new NodesDisagree(`a log in block ${h.number} has hash ${other.blockHash}, the block ${h.hash}`);
        }
        return { to: end, logs, first, tip };
      }
    },
  };
}
