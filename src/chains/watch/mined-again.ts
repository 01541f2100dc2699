/**
 * A reorg that replaces the block of a payment already decided (counted, held, returned,
 * refused) does not by itself take the payment away: nodes put the replaced blocks'
 * transactions back in their pool, and the new blocks usually hold the same signed transaction
 * again. Before the watcher calls such a reorg a loss (DEEP REORG), it asks the node for each
 * transaction's receipt: a transfer still on the chain is followed to its new place
 * (docs/decisions.md, "A counted payment is final").
 */
import type { ChainPaymentRow } from '../../store/chain-state.js';
import type { TokenInfo } from '../registry.js';
import type { ChainAdapter } from './adapter.js';
import { isRateLimited, nodeTxHash, parseReceipt, type BlockHeader, type Receipt } from './logs.js';
import { quantity, type RpcClient } from './rpc.js';

/** A decided payment whose transfer the node has again, in a block of its chain. */
export interface MinedAgain {
  payment: ChainPaymentRow;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  /** Of the new block, against the head read with the receipts. */
  confirmations: number;
}

/** A batch a provider may cap: a few dozen receipts at a time. */
const RECEIPTS_PER_BATCH = 50;

/**
 * Splits `replaced` (decided payments whose block is no longer the chain's) into those whose
 * transfer is on the chain again and those that are gone. On the chain again means: the
 * transaction's receipt says it succeeded, in a block whose header, read by number, has the
 * receipt's hash (not an answer from another fork), and it holds a Transfer log of the same
 * token, to the same address, of the same raw amount. Each log answers for one payment only,
 * so a transaction that paid the same address the same amount twice is found twice only if it
 * still does. A node that cannot tell (no receipt, an error for that call), or whose answer
 * comes from the replaced fork, leaves the payment gone: the alarm is raised rather than missed.
 * A rate limiter's answer, or one that is not a receipt, fails the tick, which is tried again
 * after a pause.
 */
export async function findMinedAgain(a: {
  rpc: RpcClient;
  adapter: ChainAdapter;
  tokenByNode: ReadonlyMap<string, TokenInfo>;
  replaced: ChainPaymentRow[];
  /** The hashes the caller just read of blocks by number (the replaced blocks' numbers among them). */
  readJustNow: ReadonlyMap<number, string>;
  headers: (numbers: number[]) => Promise<(BlockHeader | null)[]>;
}): Promise<{ found: MinedAgain[]; gone: ChainPaymentRow[] }> {
  if (a.replaced.length === 0) return { found: [], gone: [] };
  const hashes = [...new Set(a.replaced.map((p) => p.txHash))];
  const head = quantity(await a.rpc.call('eth_blockNumber', []), 'eth_blockNumber');
  const receipts = new Map<string, Receipt>();
  for (let i = 0; i < hashes.length; i += RECEIPTS_PER_BATCH) {
    const chunk = hashes.slice(i, i + RECEIPTS_PER_BATCH);
    const out = await a.rpc.batch(chunk.map((h) => ({ method: 'eth_getTransactionReceipt', params: [nodeTxHash(h)] })));
    for (const [j, o] of out.entries()) {
      if (!o.ok) {
        if (isRateLimited(o.error)) throw o.error;
        continue;
      }
      const r = parseReceipt(o.result);
      if (r && r.succeeded !== false) receipts.set(chunk[j]!, r);
    }
  }
  const numbers = [...new Set([...receipts.values()].map((r) => r.blockNumber))];
  const current = await a.headers(numbers);
  const canonical = new Map(numbers.map((n, i) => [n, current[i]?.hash]));
  const used = new Set<Receipt['transfers'][number]>();
  const found: MinedAgain[] = [];
  const gone: ChainPaymentRow[] = [];
  for (const p of a.replaced) {
    const r = receipts.get(p.txHash);
    // An answer from the fork just seen replaced (a lagging backend behind a load balancer, its
    // receipt and header consistent with each other) names the replaced block, or a block the
    // caller has just read with another hash: not believed, the payment counts as gone.
    const stale = r !== undefined && (r.blockHash === p.blockHash.toLowerCase() || (a.readJustNow.has(r.blockNumber) && a.readJustNow.get(r.blockNumber) !== r.blockHash));
    const to = a.adapter.toNodeAddress(p.toAddress).slice(2);
    const log = r && !stale && canonical.get(r.blockNumber) === r.blockHash
      ? r.transfers.find((t) => !used.has(t) && a.tokenByNode.get(t.token)?.address === p.token && t.to === to && t.value.toString() === p.rawAmount)
      : undefined;
    if (!r || !log) {
      gone.push(p);
      continue;
    }
    used.add(log);
    found.push({ payment: p, blockNumber: r.blockNumber, blockHash: r.blockHash, logIndex: log.logIndex, confirmations: Math.max(0, head - r.blockNumber + 1) });
  }
  return { found, gone };
}
