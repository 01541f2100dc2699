import { createHash } from 'node:crypto';
import { RpcError, type RpcClient, type RpcOutcome } from '../../../src/chains/watch/rpc.js';
import { TRANSFER_TOPIC } from '../../../src/chains/watch/logs.js';

/**
 * An in-memory chain behind the watcher's injected JSON-RPC client, for the logic tests that
 * need exact control of blocks and reorgs. The same behaviours run against a real anvil in
 * test/chains/watch/anvil-*.test.ts.
 */
export interface SimTransfer {
  token: string;
  from?: string;
  to: string;
  value: bigint;
  /** Same tx for several transfers: give the same label. */
  tx?: string;
  /** The transaction's hash, the same in whatever block it is mined (a reorg that mines it again). */
  hash?: string;
  /** Mined, but the transaction reverted: no log, a receipt with status 0. */
  reverted?: boolean;
}

interface Block {
  number: number;
  hash: string;
  parentHash: string;
  /** Seconds, as nodes give it. */
  timestamp: number;
  transfers: SimTransfer[];
}

const h32 = (s: string) => `0x${createHash('sha256').update(s).digest('hex')}`;
const topicOf = (addr: string) => `0x${'0'.repeat(24)}${addr.toLowerCase().replace(/^0x/, '')}`;

export class SimChain {
  blocks: Block[] = [];
  private salt = 0;
  /** eth_getLogs refuses ranges above this many blocks, as public nodes do. */
  maxRange = Infinity;
  /** Every call fails as if the node were down. */
  down = false;
  calls: string[] = [];
  /** The client says when an answer starts to arrive (BatchOptions.onAnswer), as the HTTP client does. */
  reportsAnswers = false;
  /** With reportsAnswers: how long the node works on a request, how long its answer's body takes to arrive, and how many eth_getLogs answers are arriving now. */
  workMs = 0;
  bodyMs = 0;
  logAnswersArriving = 0;
  /** The clock blocks are mined by (ms); the watcher tests set the harness's. */
  clock: () => number = () => Date.now();
  /**
   * eth_getLogs answers from these blocks instead (a load-balanced endpoint whose backend for
   * logs still has another fork than the one answering headers).
   */
  logsFrom?: Block[];
  /** The next this many eth_getLogs calls are refused by a rate limiter (code, message). */
  rateLimited = 0;
  rateLimitError: { code: number; message: string } = { code: -32005, message: 'limit exceeded' };
  /** Called before every call is answered: a test reorganises the chain in the middle of a tick. */
  onCall?: (method: string, params: any[]) => void;

  /** What eth_chainId answers: the chain this node is on. */
  chainId = 31337;
  /**
   * The node is this many blocks behind the chain (a node syncing, restarted, or one backend of a
   * load-balanced endpoint): its head is that much lower, and it knows nothing of the blocks above
   * it: no header, no logs, no receipt. `headersBehind`: only headers and receipts lag (another
   * backend of the endpoint than the one that answered eth_blockNumber).
   */
  behind = 0;
  headersBehind = 0;

  constructor(height = 10, clock?: () => number) {
    if (clock) this.clock = clock;
    for (let i = 0; i <= height; i++) this.mine([]);
  }

  get head(): number {
    return this.blocks.length - 1;
  }

  /** The newest block this node knows of (the head, or lower while it is behind). */
  private get known(): number {
    return this.head - this.behind;
  }

  mine(transfers: SimTransfer[] = []): number {
    const number = this.blocks.length;
    const parentHash = number === 0 ? h32('genesis-parent') : this.blocks[number - 1]!.hash;
    const timestamp = Math.floor(this.clock() / 1000);
    this.blocks.push({ number, hash: h32(`${parentHash}:${number}:${this.salt}:${timestamp}:${JSON.stringify(transfers, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`), parentHash, timestamp, transfers });
    return number;
  }

  mineEmpty(n: number): void {
    for (let i = 0; i < n; i++) this.mine([]);
  }

  /** Replaces every block from `from` on with new ones (a reorg); `replacement` holds their transfers. */
  reorg(from: number, replacement: SimTransfer[][]): void {
    this.salt++;
    this.blocks.length = from;
    for (const t of replacement) this.mine(t);
  }

  /** eth_getTransactionReceipt answers this instead, when set (a node on another fork). */
  receiptOverride?: (hash: string) => unknown;

  private logsOf(b: Block, withReverted = false) {
    return b.transfers.map((t, i) => ({
      address: t.token.toLowerCase(),
      topics: [TRANSFER_TOPIC, topicOf(t.from ?? '0x1111111111111111111111111111111111111111'), topicOf(t.to)],
      data: `0x${t.value.toString(16).padStart(64, '0')}`,
      blockNumber: `0x${b.number.toString(16)}`,
      blockHash: b.hash,
      transactionHash: t.hash ?? h32(`tx:${b.hash}:${t.tx ?? i}`),
      logIndex: `0x${i.toString(16)}`,
      removed: false,
      reverted: t.reverted === true,
    })).filter((l) => withReverted || !l.reverted).map(({ reverted: _r, ...l }) => l);
  }

  private receipt(hash: string): unknown {
    if (this.receiptOverride) return this.receiptOverride(hash);
    for (const b of this.blocks.slice(0, this.known - this.headersBehind + 1)) {
      const logs = this.logsOf(b, true).filter((l) => l.transactionHash === hash);
      if (logs.length === 0) continue;
      const reverted = b.transfers.some((t, i) => t.reverted && (t.hash ?? h32(`tx:${b.hash}:${t.tx ?? i}`)) === hash);
      return {
        transactionHash: hash, blockHash: b.hash, blockNumber: `0x${b.number.toString(16)}`, status: reverted ? '0x0' : '0x1',
        logs: reverted ? [] : logs,
      };
    }
    return null;
  }

  handle(method: string, params: any[]): unknown {
    this.calls.push(method);
    this.onCall?.(method, params);
    switch (method) {
      case 'eth_chainId':
        return `0x${this.chainId.toString(16)}`;
      case 'eth_blockNumber':
        return `0x${this.known.toString(16)}`;
      case 'eth_getBlockByNumber': {
        const n = Number.parseInt(String(params[0]).slice(2), 16);
        const b = n <= this.known - this.headersBehind ? this.blocks[n] : undefined;
        return b ? { number: `0x${n.toString(16)}`, hash: b.hash, parentHash: b.parentHash, timestamp: `0x${b.timestamp.toString(16)}` } : null;
      }
      case 'eth_getBlockByHash': {
        const b = this.blocks.slice(0, this.known - this.headersBehind + 1).find((x) => x.hash === String(params[0]).toLowerCase());
        return b ? { number: `0x${b.number.toString(16)}`, hash: b.hash, parentHash: b.parentHash, timestamp: `0x${b.timestamp.toString(16)}` } : null;
      }
      case 'eth_getLogs': {
        const f = params[0] as { fromBlock: string; toBlock: string; address: string[] };
        const from = Number.parseInt(f.fromBlock.slice(2), 16);
        const to = Number.parseInt(f.toBlock.slice(2), 16);
        if (this.rateLimited > 0) {
          this.rateLimited--;
          throw new RpcError('eth_getLogs', this.rateLimitError.code, this.rateLimitError.message);
        }
        if (to - from + 1 > this.maxRange) throw new RpcError('eth_getLogs', -32005, `block range is too large, max ${this.maxRange}`);
        const tokens = new Set(f.address.map((a) => a.toLowerCase()));
        return (this.logsFrom ?? this.blocks).slice(from, Math.min(to, this.known) + 1).flatMap((b) => this.logsOf(b)).filter((l) => tokens.has(l.address));
      }
      case 'eth_getTransactionReceipt':
        return this.receipt(String(params[0]));
      default:
        throw new RpcError(method, -32601, 'method not found');
    }
  }

  client(): RpcClient {
    const run = (method: string, params: unknown[]): RpcOutcome => {
      try {
        return { ok: true, result: this.handle(method, params as any[]) };
      } catch (e) {
        if (e instanceof RpcError) return { ok: false, error: e };
        throw e;
      }
    };
    return {
      url: 'http://127.0.0.1:1/sim',
      call: async (method, params) => {
        if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        const o = run(method, params);
        if (!o.ok) throw o.error;
        return o.result;
      },
      batch: async (calls, opts) => {
        if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        // As over HTTP, the answer comes after the caller has gone on (the node works workMs).
        if (this.reportsAnswers) await new Promise((r) => setTimeout(r, this.workMs));
        const out = calls.map((c) => run(c.method, c.params));
        if (this.reportsAnswers) {
          // The answer's status line is in; its body takes bodyMs more to arrive.
          const logs = calls.some((c) => c.method === 'eth_getLogs');
          if (logs) this.logAnswersArriving++;
          opts?.onAnswer?.();
          await new Promise((r) => setTimeout(r, this.bodyMs));
          if (logs) this.logAnswersArriving--;
        }
        return out;
      },
    };
  }
}
