import { ASSETS } from '../../core/assets.js';
import { isAppError } from '../../core/errors.js';
import { formatAmount } from '../../core/money.js';
import { pastLateWindow } from '../../core/state.js';
import type { Ledger } from '../../store/db.js';
import { groupCommit } from '../../store/group-commit.js';
import type { Q } from '../../store/ledger.js';
import * as state from '../../store/chain-state.js';
import type { PaymentRecord, RecordedPayment } from '../../store/payments.js';
import type { ChainInfo, TokenInfo } from '../registry.js';
import { adapterFor } from './adapter.js';
import { createRangeScanner, NodeBehind, NodesDisagree, parseHeader, type BlockHeader, type RangeScanner, type TransferLog } from './logs.js';
import { findMinedAgain } from './mined-again.js';
import { settlePayouts } from './payouts.js';
import { hexQuantity, quantity, redactUrl, RpcTransportError, type RpcClient } from './rpc.js';

/** Records one payment in the ledger, inside the caller's transaction (the ledger's recordPayment). */
export type PaymentSink = (tx: Q, p: PaymentRecord, ctx: { now: number; actor: string }) => unknown;

export interface WatcherDeps {
  chain: ChainInfo;
  /** The registry's tokens on this chain. */
  tokens: TokenInfo[];
  rpc: RpcClient;
  ledger: Ledger;
  record: PaymentSink;
  /** Who this process is, in the lease row: host, pid and a random tag. */
  holder: string;
  now: () => number;
  /** A line for the operator (stderr of serve or watch). */
  log: (line: string) => void;
  leaseMs?: number;
  /** How long one tick scans before it counts and renews its lease. */
  tickBudgetMs?: number;
  initialSpan?: number;
  maxSpan?: number;
  targetLogs?: number;
  /** After every range stored: the next block to scan and the head (the progress bar of watch). */
  onProgress?: (nextBlock: number, head: number) => void;
}

export interface TickResult {
  /** Another process holds the chain. */
  leasedBy?: string;
  head?: number;
  nextBlock?: number;
  caughtUp: boolean;
  counted: number;
}

/** Block hashes kept below the confirmation depth, so a reorg a little deeper is still walked back. */
const KEEP_EXTRA = 64;

/**
 * One chain's watcher (style.md "The watcher"): a tick takes the lease, checks that the block it
 * scanned last is still on the chain (else walks back to the fork and rolls back what is not
 * counted), scans new blocks for Transfer logs to addresses the ledger handed out, and counts
 * the payments whose confirmations are reached. Everything it knows lives in the ledger, so a
 * restart, even kill -9 between two steps, resumes where the last commit left off.
 */
export class ChainWatcher {
  private readonly scanner: RangeScanner;
  private readonly tokenByNode = new Map<string, TokenInfo>();
  private readonly nodeTokens: string[];
  private readonly adapter;
  private readonly actor: string;
  readonly leaseMs: number;

  constructor(private readonly d: WatcherDeps) {
    this.adapter = adapterFor(d.chain.chainType);
    for (const t of d.tokens) this.tokenByNode.set(this.adapter.toNodeAddress(t.address), t);
    this.nodeTokens = [...this.tokenByNode.keys()];
    if (this.nodeTokens.length === 0) throw new Error(`chain ${d.chain.chainId} has no token to watch`);
    this.scanner = createRangeScanner(d.rpc, { initialSpan: d.initialSpan, maxSpan: d.maxSpan, targetLogs: d.targetLogs });
    this.actor = `chain:${d.chain.chainId}`;
    this.leaseMs = d.leaseMs ?? Math.max(5_000, 5 * (d.chain.pollIntervalMs ?? 2_000));
  }

  get chainId(): string {
    return this.d.chain.chainId;
  }

  /** The node said it is on this watcher's chain (eth_chainId); asked again after any failure. */
  private onItsChain = false;

  /**
   * Before anything is scanned: the node must be on the chain the config names. An rpcUrl that
   * points at another network (a test chain, another mainnet) would have its transfers credited
   * as this chain's. A failure of any kind asks again on the next tick (the runner retries).
   */
  private async checkChainId(): Promise<void> {
    const { chain } = this.d;
    const answered = quantity(await this.d.rpc.call('eth_chainId', []), 'eth_chainId');
    if (String(answered) !== chain.chainId) {
      throw new RpcTransportError(
        `the node at ${redactUrl(this.d.rpc.url)} is on chain ${answered}, not on chain ${chain.chainId} (${chain.name}): the rpcUrl of chain ${chain.chainId} in the chains config points at another network; nothing is scanned until it does not`,
      );
    }
    this.onItsChain = true;
  }

  private write<T>(fn: (q: Q) => T): Promise<T> {
    return groupCommit(this.d.ledger.sqlite).submit(() => fn(this.d.ledger.db));
  }

  async tick(): Promise<TickResult> {
    try {
      if (!this.onItsChain) await this.checkChainId();
      return await this.scan();
    } catch (e) {
      // The node failed: it may come back as another one (a changed DNS name, a load balancer).
      this.onItsChain = false;
      throw e;
    }
  }

  private async scan(): Promise<TickResult> {
    const { chain } = this.d;
    // A development chain (serve --dev's anvil) mines only on a transaction: read up to its head,
    // it is read up to this moment (less the slack; asked before the node answers, whose head is
    // then this moment's or a later one). Any other chain is read up to its last block's time
    // only: a node that is stalled or behind names an old head as readily as a quiet chain would
    // (src/store/chain-state.ts, seenThroughAfter).
    const headReadAt = chain.development ? this.d.now() : undefined;
    const head = quantity(await this.d.rpc.call('eth_blockNumber', []), 'eth_blockNumber');
    const cursor = await this.write((q) =>
      state.takeLease(q, { chainId: chain.chainId, holder: this.d.holder, now: this.d.now(), ttlMs: this.leaseMs, startBlock: chain.startBlock ?? head }),
    );
    if (!cursor) {
      const c = state.readCursor(this.d.ledger.db, chain.chainId);
      return { leasedBy: c?.leaseHolder ?? undefined, caughtUp: true, counted: 0 };
    }
    await this.checkTip(head);
    let next = state.readCursor(this.d.ledger.db, chain.chainId)!.nextBlock;
    const deadline = this.d.now() + (this.d.tickBudgetMs ?? 2_000);
    if (next > head) await this.write((q) => state.noteHead(q, chain.chainId, this.d.holder, head, this.d.now(), headReadAt));
    // Ranges are fetched ahead, so that the node works while this process does, and at most one
    // beyond the range being read: the next range is asked for when the node starts answering the
    // one this loop waits for (it has done its work on it), or, with a client that does not say
    // when, once that range's payment block headers are asked for (a node may answer nothing
    // else while it works on an eth_getLogs, as anvil does, and those headers would wait for it).
    // A range fetched ahead is judged only after the range before it is committed, exactly as if
    // it had been fetched then: its first block must continue the chain stored so far.
    type Ahead = { from: number; result: ReturnType<RangeScanner['fetch']>; answered?: number; next?: Ahead };
    let waiting: Ahead | undefined;
    const fetchFrom = (from: number): Ahead | undefined => {
      if (from > head || this.d.now() >= deadline) return undefined;
      const f: Ahead = { from, result: undefined! };
      f.result = this.scanner.fetch(from, head, this.nodeTokens, (end) => {
        f.answered = end;
        if (f === waiting) f.next ??= fetchFrom(end + 1);
      });
      // A commit that fails leaves this answer unread: its error must not go unhandled.
      f.result.catch(() => {});
      return f;
    };
    let ahead = fetchFrom(next);
    let counted = 0;
    while (ahead) {
      // An answer that began while the range before it was committed is read by now, or nearly:
      // its successor waits for the headers of its payment blocks (see above).
      waiting = ahead.answered === undefined ? ahead : undefined;
      const r = await ahead.result;
      waiting = undefined;
      // Fetched on the guess that this range ends where it was asked to (a node that calls a
      // range too large answers a shorter one): used only if it starts right after it.
      const guess = ahead.next;
      ahead = undefined;
      // The node no longer has the block it just called its head: a reorg shortened the chain.
      if (!r.tip || !r.first) break;
      // The range must continue the chain scanned so far: a reorg between two ranges (even of
      // one tick) replaced blocks already passed, and a payment only on the new fork would
      // otherwise never be scanned. Walk back to the fork and rescan from there.
      const [before] = state.recentBlocks(this.d.ledger.db, chain.chainId, 1, next);
      if (before && before.number === next - 1 && before.hash !== r.first.parentHash) {
        await this.walkBack(next);
        next = state.readCursor(this.d.ledger.db, chain.chainId)!.nextBlock;
        ahead = fetchFrom(next);
        continue;
      }
      counted += await this.commit(next, r.to, { head, headReadAt }, r.logs, r.first, r.tip, () => {
        ahead = guess?.from === r.to + 1 ? guess : fetchFrom(r.to + 1);
      });
      next = r.to + 1;
      this.d.onProgress?.(next, head);
    }
    counted += await this.countDue(head);
    await this.settleWithdrawals();
    if (next > head) {
      await this.write((q) => state.pruneBlocks(q, chain.chainId, head - chain.confirmations - KEEP_EXTRA));
    }
    return { head, nextBlock: next, caughtUp: next > head, counted };
  }

  /** Stores a range; answers how many of its payments were counted with it. */
  private async commit(
    from: number, to: number, { head, headReadAt }: { head: number; headReadAt: number | undefined }, logs: TransferLog[], first: BlockHeader, tip: BlockHeader, fetchNext: () => void,
  ): Promise<number> {
    const { chain } = this.d;
    const payments: state.SeenPayment[] = [];
    const known = new Map<number, BlockHeader>([[first.number, first], [tip.number, tip]]);
    // Every recipient of the range looked up in one statement (99% of them pay nobody).
    const keyOf = (log: TransferLog) => {
      const k = this.adapter.lookupKey(log.to);
      return chain.chainType === 'EVM' ? k.toLowerCase() : k;
    };
    const mine = logs.filter((log) => this.tokenByNode.has(log.token));
    const keys = mine.map(keyOf);
    const owners = state.ordersForAddresses(this.d.ledger.sqlite, chain.chainType, keys);
    for (const [i, log] of mine.entries()) {
      const token = this.tokenByNode.get(log.token)!;
      const order = owners.get(keys[i]!);
      if (!order) continue;
      const to = order.address;
      const amount = credited(log.value, token.decimals, ASSETS[order.asset]?.decimals ?? token.decimals);
      // Rounded down to nothing (dust of an 18-decimal token), or beyond what a ledger amount can hold.
      if (amount <= 0n || amount > MAX_CREDIT) {
        if (amount > MAX_CREDIT) this.d.log(`chain ${chain.chainId}: transfer ${log.txHash} log ${log.logIndex} of ${log.value} is too large to credit; ignored`);
        continue;
      }
      payments.push({
        txHash: this.adapter.txHash(log.txHash), logIndex: log.logIndex, blockNumber: log.blockNumber, blockHash: log.blockHash,
        blockTime: 0, orderId: order.orderId, token: token.address, toAddress: to, fromAddress: this.adapter.fromNodeAddress(log.from), rawAmount: log.value.toString(), amount,
      });
    }
    // A payment's block header gives its time (late and held are judged by it, decisions §6b)
    // and proves the logs came from the chain the headers describe.
    const missing = [...new Set(payments.map((p) => p.blockNumber))].filter((n) => !known.has(n));
    const reading = this.headers(missing);
    fetchNext();
    const fetched = await reading;
    for (const [i, n] of missing.entries()) {
      const h = fetched[i];
      if (!h) throw new NodesDisagree(`block ${n} of a payment is not on the node's chain`);
      known.set(n, h);
    }
    for (const p of payments) {
      const h = known.get(p.blockNumber)!;
      if (h.hash !== p.blockHash) throw new NodesDisagree(`a log in block ${p.blockNumber} has hash ${p.blockHash}, the block ${h.hash}`);
      p.blockTime = h.timestamp;
    }
    // Payments whose block is already deep enough (a catch-up: all of them) are counted in the
    // same transaction. Their block's header was read after their log and carries the log's
    // hash (checked above): what countDue's second read of it would establish a moment later.
    const dueTo = Math.min(to, head - chain.confirmations + 1);
    return this.write((q) => {
      const now = this.d.now();
      state.commitRange(q, this.d.ledger.sqlite, {
        chainId: chain.chainId, holder: this.d.holder, from, to, head, now, toTime: tip.timestamp, headReadAt,
        blocks: [...known.values()].map((h) => ({ number: h.number, hash: h.hash })), payments,
      });
      if (payments.length === 0) return 0;
      const due = state.duePaymentsIn(q, chain.chainId, from, dueTo).filter((p) => known.get(p.blockNumber)?.hash === p.blockHash);
      return this.countRows(q, due, (n) => known.get(n)?.timestamp, now);
    });
  }

  private async headers(numbers: number[]): Promise<(BlockHeader | null)[]> {
    if (numbers.length === 0) return [];
    const out = await this.d.rpc.batch(numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [hexQuantity(n), false] })));
    return out.map((o, i) => {
      if (!o.ok) throw o.error;
      return parseHeader(o.result, `block ${numbers[i]}`);
    });
  }

  /**
   * The newest block we scanned must still be on the chain; else walk back to the fork. A node
   * that does not have it (its head is below it, or it answers no header for it) is behind, not
   * reorganised: NodeBehind, and nothing is judged until it has the block again. A chain that
   * really lost blocks is judged then, once it is that long again.
   */
  private async checkTip(head: number): Promise<void> {
    const [tip] = state.recentBlocks(this.d.ledger.db, this.d.chain.chainId, 1);
    if (!tip) return;
    if (head < tip.number) throw new NodeBehind(`its head is block ${head}; block ${tip.number} was scanned`);
    const [now] = await this.headers([tip.number]);
    if (!now) throw new NodeBehind(`it has no block ${tip.number}, which was scanned`);
    if (now.hash === tip.hash) return;
    await this.walkBack(tip.number + 1);
  }

  /** Headers of blocks the node must have (at or below its head): one it lacks is NodeBehind. */
  private async knownHeaders(numbers: number[]): Promise<BlockHeader[]> {
    const out = await this.headers(numbers);
    return out.map((h, i) => {
      if (!h) throw new NodeBehind(`it has no block ${numbers[i]}, which was scanned`);
      return h;
    });
  }

  /**
   * Compares stored hashes below `below`, newest first, with the chain's, a page at a time: the
   * newest that still matches is the fork. Everything after it is rolled back and rescanned.
   */
  private async walkBack(below: number): Promise<void> {
    const { chain } = this.d;
    let fork: number | undefined;
    let lowest = below;
    for (let page = below; fork === undefined; ) {
      const stored = state.recentBlocks(this.d.ledger.db, chain.chainId, 32, page);
      if (stored.length === 0) break;
      const current = await this.knownHeaders(stored.map((b) => b.number));
      for (let i = 0; i < stored.length; i++) {
        if (current[i]!.hash === stored[i]!.hash) {
          fork = stored[i]!.number;
          break;
        }
        lowest = stored[i]!.number;
      }
      page = stored[stored.length - 1]!.number;
    }
    // No stored block matches: the reorg is deeper than the hashes kept. Where it forked is
    // unknown, so rescan from as deep as a reorg is ever watched (rescans count nothing twice).
    fork ??= Math.max(-1, lowest - 1 - (chain.confirmations + KEEP_EXTRA));
    await this.rollBack(fork);
  }

  private async rollBack(fork: number): Promise<void> {
    const { chain } = this.d;
    const counted = state.countedAbove(this.d.ledger.db, chain.chainId, fork);
    // A counted payment is final: it is never taken back. If its block is gone and its transfer
    // is not on the chain again, say so loudly.
    // A block the node does not have is not judged replaced: a node behind is waited for.
    const heads = await this.knownHeaders([...new Set(counted.map((p) => p.blockNumber))]);
    const byNumber = new Map(heads.map((h) => [h.number, h.hash]));
    const replaced = counted.filter((p) => byNumber.get(p.blockNumber) !== p.blockHash);
    const { found, gone: orphaned } = await findMinedAgain({
      rpc: this.d.rpc, adapter: this.adapter, tokenByNode: this.tokenByNode, replaced, readJustNow: byNumber, headers: (numbers) => this.headers(numbers),
    });
    const dropped = await this.write((q) => {
      const now = this.d.now();
      const n = state.rollBack(q, { chainId: chain.chainId, holder: this.d.holder, fork, now });
      if (found.length) state.followMinedAgain(q, { chainId: chain.chainId, actor: this.actor, now, moved: found });
      if (orphaned.length) {
        const message = `reorg deeper than ${chain.confirmations} confirmations: ${orphaned.length} counted payment(s) in replaced blocks (first: tx ${orphaned[0]!.txHash} in block ${orphaned[0]!.blockNumber}); they stay credited, check them by hand`;
        state.reportDeepReorg(q, { chainId: chain.chainId, actor: this.actor, now, message, payments: orphaned });
      }
      return n;
    });
    this.d.log(`chain ${chain.chainId}: reorg, rescanning from block ${fork + 1}${dropped ? `; ${dropped} unconfirmed payment(s) dropped until seen again` : ''}`);
    if (found.length) {
      const f = found[0]!;
      this.d.log(
        `chain ${chain.chainId}: the reorg replaced the block of ${found.length} counted payment(s), each mined again in the new chain (first: tx ${f.payment.txHash}, block ${f.payment.blockNumber} -> ${f.blockNumber}, ${f.confirmations} confirmation${f.confirmations === 1 ? '' : 's'}); nothing to do`,
      );
    }
    if (orphaned.length) {
      this.d.log(`chain ${chain.chainId}: DEEP REORG: ${orphaned.length} counted payment(s) were in blocks the chain replaced; they stay credited (see cryptopay chains and the audit log)`);
    }
  }

  /** Counts the payments whose block is confirmations - 1 blocks under the head, if their block is still the chain's. */
  private async countDue(head: number): Promise<number> {
    const { chain } = this.d;
    const due = state.duePayments(this.d.ledger.db, chain.chainId, head - chain.confirmations + 1);
    if (due.length === 0) return 0;
    const numbers = [...new Set(due.map((p) => p.blockNumber))];
    const current = await this.knownHeaders(numbers);
    const hashOf = new Map(numbers.map((n, i) => [n, current[i]!.hash]));
    const timeOf = new Map(numbers.map((n, i) => [n, current[i]!.timestamp]));
    const gone = due.filter((p) => hashOf.get(p.blockNumber) !== p.blockHash);
    if (gone.length) {
      await this.walkBack(Math.min(...gone.map((p) => p.blockNumber)));
      return 0;
    }
    return this.write((q) => {
      const now = this.d.now();
      state.holdsLease(q, chain.chainId, this.d.holder, now);
      return this.countRows(q, due, (n) => timeOf.get(n), now);
    });
  }

  /**
   * Counts payments whose block was just checked to be still the chain's, at their depth,
   * inside the caller's transaction (which checked the lease).
   */
  private countRows(q: Q, due: state.ChainPaymentRow[], timeOf: (block: number) => number | undefined, now: number): number {
    const { chain } = this.d;
    const sqlite = this.d.ledger.sqlite;
    let n = 0;
    for (const p of due) {
      const o = state.orderTerms(sqlite, p.orderId);
      // When the payment arrived on chain, not when it is counted: a watcher that was down for
      // a day must not hold (or call late) a payment made while the order was open. A block
      // time ahead of this clock counts as now. Rows seen before block times were stored
      // take it from the header just read.
      const arrived = Math.min(now, p.blockTime ?? timeOf(p.blockNumber) ?? now);
      if (o && pastLateWindow(o.expiredAt, arrived)) {
        const amount = formatAmount(p.amount, ASSETS[o.asset]?.decimals ?? 6);
        if (state.holdPayment(sqlite, q, { row: p, actor: this.actor, now, expiredAt: o.expiredAt, merchantId: o.merchantId, amount })) {
          this.d.log(`chain ${chain.chainId}: payment tx ${p.txHash} log ${p.logIndex} of ${amount} to order ${p.orderId} came more than 24 h after it expired: held for an operator (cryptopay order held)`);
        }
        continue;
      }
      if (!state.markCounted(sqlite, { chainId: chain.chainId, txHash: p.txHash, logIndex: p.logIndex, now })) continue;
      // One payment the ledger refuses (its transaction already confirms a withdrawal) must
      // not hold up the others: it is set aside with the reason, for an operator.
      sqlite.exec('SAVEPOINT chain_payment');
      try {
        const r = this.d.record(q, {
          orderId: p.orderId, txHash: p.txHash, logIndex: p.logIndex, amount: p.amount, rawAmount: p.rawAmount,
          chainType: chain.chainType, chainId: chain.chainId, token: p.token, blockNumber: p.blockNumber, blockHash: p.blockHash, blockTime: arrived, source: 'chain',
          testMoney: chain.development === true,
        }, { now, actor: this.actor });
        const byHand = (r as RecordedPayment | undefined)?.recordedByHand;
        if (byHand?.onChain !== undefined && byHand.onChain !== byHand.amount) {
          const d = ASSETS[o?.asset ?? '']?.decimals ?? 6;
          this.d.log(`chain ${chain.chainId}: payment tx ${p.txHash} to order ${p.orderId} was recorded by hand as ${formatAmount(byHand.amount, d)}; the chain moved ${formatAmount(byHand.onChain, d)}: settle the difference with cryptopay balance adjust (nothing was credited now)`);
        }
        sqlite.exec('RELEASE chain_payment');
        n++;
      } catch (e) {
        if (!isAppError(e) || !sqlite.inTransaction) throw e;
        sqlite.exec('ROLLBACK TO chain_payment');
        sqlite.exec('RELEASE chain_payment');
        state.refusePayment(q, { row: p, actor: this.actor, now, reason: e.message });
        this.d.log(`chain ${chain.chainId}: payment tx ${p.txHash} log ${p.logIndex} to order ${p.orderId} refused by the ledger: ${e.message}`);
      }
    }
    return n;
  }

  /** Withdrawals waiting for their payout's confirmations (src/chains/watch/payouts.ts). */
  private settleWithdrawals(): Promise<void> {
    return settlePayouts({
      chain: this.d.chain, rpc: this.d.rpc, ledger: this.d.ledger, actor: this.actor, now: this.d.now, log: this.d.log,
      tokenOf: (token) => this.tokenByNode.get(this.adapter.toNodeAddress(token)), write: (fn) => this.write(fn),
    });
  }

  async recordError(message: string): Promise<void> {
    await this.write((q) => state.recordError(q, this.d.chain.chainId, message, this.d.now()));
  }

  async release(): Promise<void> {
    await this.write((q) => state.releaseLease(q, this.d.chain.chainId, this.d.holder));
  }
}

/** Below 2^62, so the ledger's sums stay inside SQLite's 64-bit integers. */
const MAX_CREDIT = 1n << 62n;

/** Decisions §6b: a token with more decimals than the asset is credited rounded down. */
export function credited(raw: bigint, tokenDecimals: number, assetDecimals: number): bigint {
  if (tokenDecimals >= assetDecimals) return raw / 10n ** BigInt(tokenDecimals - assetDecimals);
  return raw * 10n ** BigInt(assetDecimals - tokenDecimals);
}

export { RpcTransportError };
