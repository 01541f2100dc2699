import type Database from 'better-sqlite3';
import { and, asc, desc, eq, gt, gte, inArray, isNotNull, isNull, lte, ne, or, sql } from 'drizzle-orm';
import type { ChainType } from '../core/types.js';
import { audit, type Q } from './ledger.js';
import { chainBlocks, chainCursors, chainPayments, orders, payments } from './schema.js';
import { txKey } from './tx-keys.js';

/**
 * The chain watcher's state in the ledger (src/chains/watch): cursor, lease, recent block
 * hashes and payments seen but not yet counted. Every function runs inside the caller's
 * transaction; the ones that move the cursor check that this process still holds the lease and
 * that nobody moved the cursor meanwhile, so two processes can never both count a range.
 */

export type CursorRow = typeof chainCursors.$inferSelect;
export type ChainPaymentRow = typeof chainPayments.$inferSelect;

/** Another process took the chain over (its lease expired here, or the cursor moved under us). */
export class LeaseLost extends Error {
  constructor(chainId: string) {
    super(`chain ${chainId}: another process holds the lease now; this one stops scanning it`);
    this.name = 'LeaseLost';
  }
}

export function readCursor(q: Q, chainId: string): CursorRow | undefined {
  return q.select().from(chainCursors).where(eq(chainCursors.chainId, chainId)).get();
}

/**
 * Creates the cursor on first sight (scanning starts at `startBlock`) and takes or renews the
 * lease when it is free, ours, or expired. Returns the cursor when this process holds it.
 */
export function takeLease(q: Q, a: { chainId: string; holder: string; now: number; ttlMs: number; startBlock: number }): CursorRow | undefined {
  q.insert(chainCursors).values({ chainId: a.chainId, nextBlock: a.startBlock, updatedAt: a.now }).onConflictDoNothing().run();
  // A row made by recordError before the node ever answered has no start yet.
  q.update(chainCursors).set({ nextBlock: a.startBlock }).where(and(eq(chainCursors.chainId, a.chainId), sql`${chainCursors.nextBlock} < 0`)).run();
  const taken = q
    .update(chainCursors)
    .set({ leaseHolder: a.holder, leaseExpiresAt: a.now + a.ttlMs })
    .where(and(eq(chainCursors.chainId, a.chainId), or(isNull(chainCursors.leaseHolder), eq(chainCursors.leaseHolder, a.holder), lte(chainCursors.leaseExpiresAt, a.now))))
    .returning()
    .get();
  return taken;
}

/** Gives the lease up at a clean stop, so another process need not wait for it to expire. */
export function releaseLease(q: Q, chainId: string, holder: string): void {
  q.update(chainCursors).set({ leaseHolder: null, leaseExpiresAt: null }).where(and(eq(chainCursors.chainId, chainId), eq(chainCursors.leaseHolder, holder))).run();
}

function assertHolder(q: Q, chainId: string, holder: string, now: number): CursorRow {
  const c = readCursor(q, chainId);
  if (!c || c.leaseHolder !== holder || (c.leaseExpiresAt ?? 0) <= now) throw new LeaseLost(chainId);
  return c;
}

const batchLookups = new WeakMap<Database.Database, { evm: Database.Statement; exact: Database.Statement }>();

/**
 * The orders the addresses were handed out for, for all the recipients of a range at once: one
 * statement joins the keys (a JSON array, read by json_each) with the address index, so a range
 * of 50,000 logs costs one call into SQLite instead of 50,000 (bench/RESULTS.md). The index is
 * on lower(address): EVM addresses are looked up as the node writes them (lower-case hex), so no
 * checksum is computed for the 99% of logs that pay nobody; TRON's base58check is case-sensitive,
 * found through the same index and then compared as written. The answer is keyed by the keys as
 * looked up (EVM ones lower-cased).
 */
export function ordersForAddresses(
  sqlite: Database.Database,
  chainType: ChainType,
  keys: Iterable<string>,
): Map<string, { orderId: string; asset: string; address: string }> {
  let st = batchLookups.get(sqlite);
  if (!st) {
    const cols = 'select j.value as k, a.order_id as orderId, o.asset as asset, a.address as address from json_each(?) j';
    st = {
      evm: sqlite.prepare(`${cols} join order_addresses a on lower(a.address) = j.value and a.chain_type = 'EVM' join orders o on o.id = a.order_id`),
      exact: sqlite.prepare(`${cols} join order_addresses a on lower(a.address) = lower(j.value) and a.address = j.value and a.chain_type = ? join orders o on o.id = a.order_id`),
    };
    batchLookups.set(sqlite, st);
  }
  const unique = new Set<string>();
  for (const k of keys) unique.add(chainType === 'EVM' ? k.toLowerCase() : k);
  const out = new Map<string, { orderId: string; asset: string; address: string }>();
  if (unique.size === 0) return out;
  // In the index's order (lower(address)): SQLite then descends to neighbouring keys, whose pages
  // its small cache still holds, instead of one random leaf of a 1M-address index per key. EVM
  // keys are lower-case already.
  const json = JSON.stringify(chainType === 'EVM' ? [...unique].sort() : byLowerCase([...unique]));
  const rows = (chainType === 'EVM' ? st.evm.all(json) : st.exact.all(json, chainType)) as { k: string; orderId: string; asset: string; address: string }[];
  for (const r of rows) out.set(r.k, { orderId: r.orderId, asset: r.asset, address: r.address });
  return out;
}

/** `keys` in the order of their lower case (each lowered once). */
function byLowerCase(keys: string[]): string[] {
  return keys.map((k) => ({ k, lower: k.toLowerCase() })).sort((a, b) => (a.lower < b.lower ? -1 : a.lower > b.lower ? 1 : 0)).map((x) => x.k);
}

const seenPrepared = new WeakMap<Database.Database, { again: Database.Statement; insert: Database.Statement; block: Database.Statement }>();
function seenStatements(sqlite: Database.Database) {
  let st = seenPrepared.get(sqlite);
  if (!st) {
    st = {
      again: sqlite.prepare(
        "select 1 from chain_payments where chain_id = ? and tx_hash = ? and status <> 'seen' and token = ? and to_address = ? and raw_amount = ? and (block_hash <> ? or log_index <> ?)",
      ),
      insert: sqlite.prepare(
        "insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at, from_address) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'seen', ?, ?) on conflict do nothing",
      ),
      // A range stores the hash of every block a payment is in (each of its 500 blocks on a busy token).
      block: sqlite.prepare('insert into chain_blocks (chain_id, number, hash) values (?, ?, ?) on conflict (chain_id, number) do update set hash = excluded.hash'),
    };
    seenPrepared.set(sqlite, st);
  }
  return st;
}

export interface SeenPayment {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  /** The block's timestamp, ms. */
  blockTime: number;
  orderId: string;
  token: string;
  toAddress: string;
  /** Whose tokens moved, in the ledger's form (EIP-55, base58check). */
  fromAddress: string;
  rawAmount: string;
  amount: bigint;
}

/**
 * Stores what blocks from..to held and moves the cursor past them, in one transaction. A log
 * already stored (a rescan, another process, a restart) is left as it is. A transfer already
 * decided (counted, held, returned, refused) at another place (a block that a deep reorg
 * replaced; or its new block, the row having followed it there with its old log index) is the
 * same transfer: it is not stored a second time. A transaction that makes the same transfer
 * twice has both rows stored together, so skipping one of them here never loses it.
 */
export function commitRange(
  q: Q,
  sqlite: Database.Database,
  a: {
    chainId: string; holder: string; from: number; to: number; head: number; now: number; blocks: { number: number; hash: string }[]; payments: SeenPayment[];
    /** The timestamp (ms) of block `to`, the range's last. */
    toTime: number;
    /** A development chain's: when the node was asked for its head (`head`), ms. */
    headReadAt?: number;
  },
): number {
  const c = assertHolder(q, a.chainId, a.holder, a.now);
  if (c.nextBlock !== a.from) throw new LeaseLost(a.chainId);
  let stored = 0;
  const st = seenStatements(sqlite);
  for (const p of a.payments) {
    if (st.again.get(a.chainId, p.txHash, p.token, p.toAddress, p.rawAmount, p.blockHash, p.logIndex)) continue;
    stored += st.insert.run(a.chainId, p.txHash, p.logIndex, p.blockNumber, p.blockHash, p.blockTime, p.orderId, p.token, p.toAddress, p.rawAmount, p.amount, a.now, p.fromAddress).changes;
  }
  for (const b of a.blocks) st.block.run(a.chainId, b.number, b.hash);
  const seenThrough = seenThroughAfter(c.seenThrough, a.toTime, a.to >= a.head ? a.headReadAt : undefined, a.now);
  q.update(chainCursors)
    .set({ nextBlock: a.to + 1, head: a.head, headAt: a.now, seenThrough, lastError: null, lastErrorAt: null, updatedAt: a.now })
    .where(eq(chainCursors.chainId, a.chainId))
    .run();
  return stored;
}

/**
 * How late after its timestamp a block may first be on the node at most (a proposer's clock and
 * the block's way to the node): once the watcher has read up to the head at time T, no block
 * stamped before T minus this can still come. Ethereum's are on time within a few seconds of
 * their 12 s slot, TRON's, BNB Smart Chain's and Polygon's within their 1-3 s.
 */
const BLOCK_ARRIVAL_SLACK_MS = 15_000;

/**
 * The cursor's seenThrough after a scan (docs/decisions.md, "order.expired waits for the chain"):
 * every block stamped at or before the last block read has been read. On a development chain,
 * which mines only on a transaction, a scan that reached the head the node named at `headReadAt`
 * has also read every block stamped before that minus the slack (no block is coming). Not on
 * any other chain: a node that is stalled, syncing or behind a load balancer names an old head
 * as a quiet chain would, and a live chain's last block is a few seconds old anyway. Never later
 * than now (a chain whose clock runs ahead of this one's), never earlier than before.
 */
function seenThroughAfter(before: number | null, lastTime: number | undefined, headReadAt: number | undefined, now: number): number | null {
  let t = before ?? -Infinity;
  if (lastTime !== undefined) t = Math.max(t, Math.min(lastTime, now));
  if (headReadAt !== undefined) t = Math.max(t, Math.min(headReadAt, now) - BLOCK_ARRIVAL_SLACK_MS);
  return Number.isFinite(t) ? t : null;
}

/** The head a tick saw, when it had nothing to scan (a development chain's asked for at `headReadAt`). */
export function noteHead(q: Q, chainId: string, holder: string, head: number, now: number, headReadAt?: number): void {
  const c = assertHolder(q, chainId, holder, now);
  const seenThrough = c.nextBlock > head && headReadAt !== undefined ? seenThroughAfter(c.seenThrough, undefined, headReadAt, now) : c.seenThrough;
  q.update(chainCursors).set({ head, headAt: now, seenThrough, lastError: null, lastErrorAt: null, updatedAt: now }).where(eq(chainCursors.chainId, chainId)).run();
}

/** Recent block hashes, newest first. */
export function recentBlocks(q: Q, chainId: string, limit: number, below?: number): { number: number; hash: string }[] {
  const where = below === undefined ? eq(chainBlocks.chainId, chainId) : and(eq(chainBlocks.chainId, chainId), sql`${chainBlocks.number} < ${below}`);
  return q.select({ number: chainBlocks.number, hash: chainBlocks.hash }).from(chainBlocks).where(where).orderBy(desc(chainBlocks.number)).limit(limit).all();
}

/** Forgets block hashes no reorg can reach any more. */
export function pruneBlocks(q: Q, chainId: string, below: number): void {
  q.delete(chainBlocks).where(and(eq(chainBlocks.chainId, chainId), sql`${chainBlocks.number} < ${below}`)).run();
}

/** Payments seen in blocks up to `maxBlock` and not yet counted, oldest first. */
export function duePayments(q: Q, chainId: string, maxBlock: number): ChainPaymentRow[] {
  return q
    .select()
    .from(chainPayments)
    .where(and(eq(chainPayments.chainId, chainId), eq(chainPayments.status, 'seen'), lte(chainPayments.blockNumber, maxBlock)))
    .orderBy(asc(chainPayments.blockNumber), asc(chainPayments.txHash), asc(chainPayments.logIndex))
    .all();
}

/** Payments seen in blocks from..maxBlock and not yet counted, oldest first (a range just stored). */
export function duePaymentsIn(q: Q, chainId: string, from: number, maxBlock: number): ChainPaymentRow[] {
  if (maxBlock < from) return [];
  return q
    .select()
    .from(chainPayments)
    .where(and(eq(chainPayments.chainId, chainId), eq(chainPayments.status, 'seen'), gte(chainPayments.blockNumber, from), lte(chainPayments.blockNumber, maxBlock)))
    .orderBy(asc(chainPayments.blockNumber), asc(chainPayments.txHash), asc(chainPayments.logIndex))
    .all();
}

/**
 * Payments past their confirmations (counted, held, returned or refused: decided, never rolled
 * back) above a block, for the reorg walk to check they were not orphaned.
 */
export function countedAbove(q: Q, chainId: string, block: number): ChainPaymentRow[] {
  return q.select().from(chainPayments).where(and(eq(chainPayments.chainId, chainId), ne(chainPayments.status, 'seen'), gt(chainPayments.blockNumber, block))).all();
}

/** Checks once, at the start of a counting transaction, that this process still holds the chain. */
export function holdsLease(q: Q, chainId: string, holder: string, now: number): void {
  assertHolder(q, chainId, holder, now);
}

const markStatements = new WeakMap<Database.Database, Database.Statement>();

/** Seen to counted, once: false when another transaction counted it first. Call holdsLease first. */
export function markCounted(sqlite: Database.Database, a: { chainId: string; txHash: string; logIndex: number; now: number }): boolean {
  let st = markStatements.get(sqlite);
  if (!st) {
    st = sqlite.prepare("update chain_payments set status = 'counted', counted_at = ? where chain_id = ? and tx_hash = ? and log_index = ? and status = 'seen'");
    markStatements.set(sqlite, st);
  }
  return st.run(a.now, a.chainId, a.txHash, a.logIndex).changes === 1;
}

/**
 * The chain no longer holds blocks after `fork`: their uncounted payments are dropped, their
 * hashes forgotten, and the cursor goes back to rescan from fork + 1. Counted payments stay.
 */
export function rollBack(q: Q, a: { chainId: string; holder: string; fork: number; now: number }): number {
  const c = assertHolder(q, a.chainId, a.holder, a.now);
  const dropped = q
    .delete(chainPayments)
    .where(and(eq(chainPayments.chainId, a.chainId), eq(chainPayments.status, 'seen'), gt(chainPayments.blockNumber, a.fork)))
    .run().changes;
  q.delete(chainBlocks).where(and(eq(chainBlocks.chainId, a.chainId), gt(chainBlocks.number, a.fork))).run();
  // The new blocks may be stamped before what was read of the old ones: how far in time the chain
  // is read is unknown until the rescan (the expiry sweep waits meanwhile).
  if (c.nextBlock > a.fork + 1) q.update(chainCursors).set({ nextBlock: a.fork + 1, seenThrough: null, updatedAt: a.now }).where(eq(chainCursors.chainId, a.chainId)).run();
  return dropped;
}

/** Kept even before the node ever answered (next_block -1: no start known yet). */
export function recordError(q: Q, chainId: string, message: string, now: number): void {
  const set = { lastError: message.slice(0, 500), lastErrorAt: now, updatedAt: now };
  q.insert(chainCursors).values({ chainId, nextBlock: -1, ...set }).onConflictDoUpdate({ target: chainCursors.chainId, set }).run();
}

/** A reorg replaced a block whose payments were already counted: kept in the cursor row and the audit log. */
export function reportDeepReorg(q: Q, a: { chainId: string; actor: string; now: number; message: string; payments: ChainPaymentRow[] }): void {
  q.update(chainCursors).set({ deepReorg: `${new Date(a.now).toISOString()} ${a.message}`.slice(0, 1000), updatedAt: a.now }).where(eq(chainCursors.chainId, a.chainId)).run();
  // What they credited stays, but nothing leaves on them until an operator has looked (reorg-holds.ts).
  for (const p of a.payments) {
    q.update(payments).set({ reorgedAt: a.now })
      .where(and(eq(payments.chainId, a.chainId), eq(payments.txKey, txKey(p.txHash)), eq(payments.logIndex, p.logIndex))).run();
  }
  // Each order's entry speaks of its own payments only: its merchant reads it (the signed log),
  // and the whole report names the first payment of all, as likely another merchant's (a review).
  auditByOrder(q, a, 'chain.deep_reorg', a.payments, (ps) => ({
    message: `a reorg deeper than the chain's confirmations replaced the block of ${ps.length === 1 ? '1 counted payment' : `${ps.length} counted payments`} of this order (first: tx ${ps[0]!.txHash} in block ${ps[0]!.blockNumber}); ${ps.length === 1 ? 'it stays' : 'they stay'} credited`,
    payments: ps.map((p) => ({ txHash: p.txHash, logIndex: p.logIndex, blockNumber: p.blockNumber, blockHash: p.blockHash })),
  }));
}

/**
 * Decided payments whose block a reorg replaced, their transfer mined again in another block
 * (src/chains/watch/mined-again.ts): each row follows its transfer to the new block, so a reorg
 * of that block is seen in turn, and each order's audit says from where to where; the ledger's
 * payment row moves with it (order show named the replaced block before). The row keeps
 * its log index (it names the payment in the ledger and in operators' commands); commitRange
 * knows the transfer at its new index as the same one.
 */
export function followMinedAgain(
  q: Q,
  a: { chainId: string; actor: string; now: number; moved: { payment: ChainPaymentRow; blockNumber: number; blockHash: string; logIndex: number; confirmations: number }[] },
): void {
  for (const m of a.moved) {
    q.update(chainPayments)
      .set({ blockNumber: m.blockNumber, blockHash: m.blockHash })
      .where(and(eq(chainPayments.chainId, a.chainId), eq(chainPayments.txHash, m.payment.txHash), eq(chainPayments.logIndex, m.payment.logIndex)))
      .run();
    // The ledger's payment too (order show named the replaced block): it is the same transfer.
    q.update(payments)
      .set({ blockNumber: m.blockNumber, blockHash: m.blockHash })
      .where(and(eq(payments.chainId, a.chainId), eq(payments.txKey, txKey(m.payment.txHash)), eq(payments.logIndex, m.payment.logIndex)))
      .run();
  }
  auditByOrder(q, a, 'chain.payment_mined_again', a.moved, (ms) => ({
    payments: ms.map((m) => ({
      txHash: m.payment.txHash, logIndex: m.payment.logIndex, blockNumber: m.payment.blockNumber, blockHash: m.payment.blockHash,
      nowInBlock: m.blockNumber, nowInBlockHash: m.blockHash, nowLogIndex: m.logIndex, confirmations: m.confirmations,
    })),
  }));
}

/** One audit entry per order the items (payments, or what wraps one) belong to. */
function auditByOrder<T extends ChainPaymentRow | { payment: ChainPaymentRow }>(
  q: Q, a: { chainId: string; actor: string; now: number }, action: string, items: T[], detail: (ofOrder: T[]) => Record<string, unknown>,
): void {
  const byOrder = new Map<string, T[]>();
  for (const it of items) {
    const orderId = 'payment' in it ? it.payment.orderId : it.orderId;
    byOrder.set(orderId, [...(byOrder.get(orderId) ?? []), it]);
  }
  const merchantOf = (id: string) => q.select({ m: orders.merchantId }).from(orders).where(eq(orders.id, id)).get()?.m ?? null;
  for (const [orderId, its] of byOrder) {
    audit(q, { at: a.now, actor: a.actor, action, merchantId: merchantOf(orderId), subjectType: 'order', subjectId: orderId, detail: { chainId: a.chainId, ...detail(its) } });
  }
}

/**
 * An operator has looked at a deep reorg's payments: the warning of `cryptopay chains` is
 * cleared, and the acknowledgement, with its reason and the report it clears, goes into the
 * audit log. Only the report the operator saw is cleared (a newer one stays). Nothing moves in
 * the ledger: the payments stay credited either way.
 */
export function acknowledgeDeepReorg(q: Q, a: { chainId: string; report: string; actor: string; now: number; reason: string }): boolean {
  const cleared = q
    .update(chainCursors)
    .set({ deepReorg: null, updatedAt: a.now })
    .where(and(eq(chainCursors.chainId, a.chainId), eq(chainCursors.deepReorg, a.report)))
    .run().changes;
  if (cleared !== 1) return false;
  // The operator has checked them: what they credited may leave again (reorg-holds.ts).
  q.update(payments).set({ reorgedAt: null }).where(and(eq(payments.chainId, a.chainId), isNotNull(payments.reorgedAt))).run();
  audit(q, {
    at: a.now, actor: a.actor, action: 'chain.deep_reorg_acknowledged', merchantId: null, subjectType: 'chain', subjectId: a.chainId,
    detail: { chainId: a.chainId, report: a.report, reason: a.reason },
  });
  return true;
}

export function allCursors(q: Q): CursorRow[] {
  return q.select().from(chainCursors).all();
}

/** Payments of these orders seen on chain, for `order show`. */
export function paymentsSeenFor(q: Q, orderIds: string[]): ChainPaymentRow[] {
  if (orderIds.length === 0) return [];
  // One order (the payment page, order show): a statement prepared once per connection.
  if (orderIds.length === 1) return seenForOne(q, orderIds[0]!);
  return q.select().from(chainPayments).where(inArray(chainPayments.orderId, orderIds)).orderBy(asc(chainPayments.blockNumber), asc(chainPayments.logIndex)).all();
}

/** A counted payment the ledger refused to record: kept as `refused`, with the reason in the audit log. */
export function refusePayment(q: Q, a: { row: ChainPaymentRow; actor: string; now: number; reason: string }): void {
  q.update(chainPayments).set({ status: 'refused' }).where(and(eq(chainPayments.chainId, a.row.chainId), eq(chainPayments.txHash, a.row.txHash), eq(chainPayments.logIndex, a.row.logIndex))).run();
  const m = q.select({ m: orders.merchantId }).from(orders).where(eq(orders.id, a.row.orderId)).get()?.m ?? null;
  audit(q, {
    at: a.now, actor: a.actor, action: 'order.payment_refused', merchantId: m, subjectType: 'order', subjectId: a.row.orderId,
    detail: { chainId: a.row.chainId, txHash: a.row.txHash, logIndex: a.row.logIndex, rawAmount: a.row.rawAmount, reason: a.reason },
  });
}

const deadlineStatements = new WeakMap<Database.Database, Database.Statement>();

/** What counting needs of a payment's order, prepared once per connection (it runs per payment). */
export function orderTerms(sqlite: Database.Database, orderId: string): { expiredAt: number; merchantId: string; asset: string } | undefined {
  let st = deadlineStatements.get(sqlite);
  if (!st) {
    st = sqlite.prepare('select expired_at as expiredAt, merchant_id as merchantId, asset from orders where id = ?');
    deadlineStatements.set(sqlite, st);
  }
  const row = st.get(orderId) as { expiredAt: number | bigint; merchantId: string; asset: string } | undefined;
  // The connection may read integers as bigint (safe integers for amounts); a time fits a number.
  return row && { ...row, expiredAt: Number(row.expiredAt) };
}

const holdStatements = new WeakMap<Database.Database, Database.Statement>();

/**
 * Seen to held, once (decisions §6b): a payment more than 24 hours after its order expired is
 * kept, not credited, and waits for an operator (src/store/held-payments.ts). Call holdsLease first.
 */
export function holdPayment(sqlite: Database.Database, q: Q, a: { row: ChainPaymentRow; actor: string; now: number; expiredAt: number; merchantId: string; amount: string }): boolean {
  let st = holdStatements.get(sqlite);
  if (!st) {
    st = sqlite.prepare("update chain_payments set status = 'held', counted_at = ? where chain_id = ? and tx_hash = ? and log_index = ? and status = 'seen'");
    holdStatements.set(sqlite, st);
  }
  if (st.run(a.now, a.row.chainId, a.row.txHash, a.row.logIndex).changes !== 1) return false;
  audit(q, {
    at: a.now, actor: a.actor, action: 'order.payment_held', merchantId: a.merchantId, subjectType: 'order', subjectId: a.row.orderId,
    detail: {
      chainId: a.row.chainId, txHash: a.row.txHash, logIndex: a.row.logIndex, amount: a.amount, rawAmount: a.row.rawAmount, token: a.row.token,
      expiredAt: a.expiredAt, reason: 'more than 24 h after the order expired: credit it or return it by hand (cryptopay order held)',
    },
  });
  return true;
}

const seenForStatements = new WeakMap<object, { all(p: { id: string }): ChainPaymentRow[] }>();

function seenForOne(q: Q, orderId: string): ChainPaymentRow[] {
  let st = seenForStatements.get(q);
  if (!st) {
    st = q.select().from(chainPayments).where(eq(chainPayments.orderId, sql.placeholder('id'))).orderBy(asc(chainPayments.blockNumber), asc(chainPayments.logIndex)).prepare();
    seenForStatements.set(q, st);
  }
  return st.all({ id: orderId });
}
