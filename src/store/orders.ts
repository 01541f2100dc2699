import { and, asc, desc, eq, gte, inArray, isNotNull, lt, sql, type SQL } from 'drizzle-orm';
import { inwardUrlsAllowed } from './inward-urls.js';
import { MAX_ORDER_AHEAD } from '../core/duration.js';
import { AppError, conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount, parseAmount } from '../core/money.js';
import type { CreateOrderRequest } from '../core/schemas.js';
import { readStatus } from '../core/state.js';
import type { Addresses, ChainType, FindResult, MatchedBy, Order, OrderDetail, OrderStatus, PayPageOrder, Payment, ListedWithdrawal } from '../core/types.js';
import { Lru } from '../core/lru.js';
import { shownUrl } from '../core/shown-url.js';
import type { Ledger } from './db.js';
import type { Q } from './ledger.js';
import { addressMatch } from './address-match.js';
import { findMerchant, type MerchantRow } from './merchants.js';
import { afterCursor, pageOf, type Page } from './paging.js';
import { chainCursors, chainPayments, merchants, orderAddresses, orders, payments, refunds, withdrawals } from './schema.js';
import { txKey } from './tx-keys.js';
import { listedWithdrawal } from './withdrawals.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

export type OrderRow = typeof orders.$inferSelect;

/**
 * What creating an order needs (zod and the deriver, not ethers), loaded on first use and then
 * kept: a dynamic import per request, even of a loaded module, was ~7% of what serve allocated.
 */
let orderDeps: typeof import('./order-deps.js') | undefined;

export async function createOrder(s: StoreCtx, input: CreateOrderRequest): Promise<Order> {
  const h = (orderDeps ??= await import('./order-deps.js'));
  const req = h.parseInput(h.createOrderSchema, input);
  if ((req.notifyUrl || req.logo) && !inwardUrlsAllowed(s, req.mchId)) {
    if (req.notifyUrl) h.checkNotifyUrl(req.notifyUrl, 'notifyUrl', h.privateHint(s.privateSwitch));
    if (req.logo) h.checkLogoUrl(req.logo, s.privateSwitch);
  }
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const decimals = decimalsOf(m.asset);
    const amount = parseAmount(req.amount, decimals);
    const expiredAt = req.expiredAt ?? now + m.orderLifetimeMs;
    const expiryOk = expiredAt > now && expiredAt <= now + MAX_ORDER_AHEAD;
    // A new oid is the common case: the order is inserted at once, and the unique index on
    // (merchant, oid) says whether the oid was taken (the insert then changes nothing), instead
    // of a lookup before every insert. A taken oid, or an expiry that is refused unless the oid
    // names an existing order with that expiry, goes the way it always went.
    let id: string | undefined;
    if (expiryOk) {
      id = s.randomId('ord');
      const inserted = s.stmts().insertOrder.run({
        id, merchantId: m.id, oid: req.oid, uid: req.uid, asset: m.asset, amount,
        memo: req.memo ?? null, expiredAt, notifyUrl: req.notifyUrl ?? null, redirectUrl: req.redirectUrl ?? null,
        logo: req.logo ?? null, createdAt: now,
      });
      if (inserted.changes === 0) id = undefined;
    }
    if (id === undefined) {
      const existing = s.stmts().orderByOid.get({ merchantId: m.id, oid: req.oid });
      if (existing) {
        const differs = (
          [
            ['uid', existing.uid, req.uid],
            ['amount', existing.amount, amount],
            ['memo', existing.memo, req.memo ?? null],
            ['notifyUrl', existing.notifyUrl, req.notifyUrl ?? null],
            ['redirectUrl', existing.redirectUrl, req.redirectUrl ?? null],
            ['logo', existing.logo, req.logo ?? null],
            ['expiredAt', existing.expiredAt, req.expiredAt ?? existing.expiredAt],
          ] as const
        ).filter(([, a, b]) => a !== b).map(([k, a, b]) => {
          if (a === null) return `${k} (this request has one; the order has none)`;
          if (b === null) return `${k} (the order has one; this request has none)`;
          // The two values where they are short and say nothing private (a URL may carry credentials, a memo anything).
          if (k === 'amount') return `amount (the order's ${formatAmount(a as bigint, decimals)}, this request's ${formatAmount(b as bigint, decimals)})`;
          if (k === 'uid') return `uid (the order's ${String(a)}, this request's ${String(b)})`;
          return k;
        });
        if (differs.length) {
          throw conflict(`oid ${req.oid} is already used by order ${existing.id} with a different ${differs.join(', ')}`);
        }
        return orderView(s, existing, now);
      }
      if (expiredAt <= now) {
        // Seconds are the common mistake (an integration trial): said, with what they would be.
        const seconds = expiredAt > now / 1000 - 86_400 && expiredAt < now / 100;
        throw invalid(seconds
          ? `expiredAt must lie in the future: it is in milliseconds, and ${expiredAt} is ${new Date(expiredAt).toISOString()}; as seconds it would be ${new Date(expiredAt * 1000).toISOString()} (send ${expiredAt * 1000})`
          : 'expiredAt must lie in the future');
      }
      if (expiredAt > now + MAX_ORDER_AHEAD) throw invalid('expiredAt must be at most 7 days ahead');
      // Refused by the primary key: a random id of 128 bits met another (not to be expected).
      throw new AppError('internal', 'a new order id collided with an existing one; try again');
    }
    const addresses = allocateAddresses(s, m, id, h.deriveAddress);
    return { id, oid: req.oid, uid: req.uid, amount: formatAmount(amount, decimals), status: 'PENDING_PAY', expiredAt, addresses };
  });
}

/** A fresh address per chain type; the index counter moves inside the same transaction. */
function allocateAddresses(s: StoreCtx, m: MerchantRow, orderId: string, deriveAddress: (chain: ChainType, xpub: string, index: number) => string): Addresses {
  const addresses: Addresses = {};
  const next = { EVM: m.evmNextIndex, TRON: m.tronNextIndex };
  const st = s.stmts();
  for (const chain of ['EVM', 'TRON'] as const) {
    const xpub = chain === 'EVM' ? m.evmXpub : m.tronXpub;
    if (!xpub) continue;
    let index = next[chain];
    // An address already given out (the unique index says so) is skipped, never shared.
    for (;;) {
      const address = deriveAddress(chain, xpub, index);
      if (st.insertAddress.run({ orderId, chainType: chain, address, index }).changes === 1) {
        addresses[chain] = address;
        break;
      }
      index++;
    }
    next[chain] = index + 1;
  }
  // Both counters in one statement.
  st.setNextIndices.run({ evm: next.EVM, tron: next.TRON, id: m.id });
  return addresses;
}

function addressesOf(s: StoreCtx, orderId: string): Addresses {
  const out: Addresses = {};
  for (const a of s.stmts().addresses.all({ id: orderId })) out[a.chainType as ChainType] = a.address;
  return out;
}

function orderView(s: StoreCtx, o: OrderRow, now: number): Order {
  return {
    id: o.id, oid: o.oid, uid: o.uid, amount: formatAmount(o.amount, decimalsOf(o.asset)),
    status: readStatus(o.status, o.expiredAt, now), expiredAt: o.expiredAt, addresses: addressesOf(s, o.id),
  };
}

export function getAddresses(s: StoreCtx, id: string): Addresses {
  // Every order has at least one address (a merchant needs a wallet), so none means no order.
  const addresses = addressesOf(s, id);
  if (Object.keys(addresses).length === 0) throw notFound('Not found');
  return addresses;
}

export function getOrderStatus(s: StoreCtx, id: string): OrderStatus {
  const row = s.stmts().status.get(id);
  if (!row) throw notFound('Order not found');
  return readStatus(row[0], Number(row[1]), s.now());
}

export function getOrder(s: StoreCtx, id: string, mchId?: string): OrderDetail {
  const found = s.stmts().orderById.get({ id });
  const o = found && (!mchId || found.merchantId === mchId) ? found : undefined;
  if (!o) throw notFound('Order not found');
  return orderDetail(s, o);
}

/**
 * The last page read of the orders asked for lately, per ledger: its row as one text (the
 * payPageVersion statement) and what was made of it.
 */
const pageReads = new WeakMap<Ledger, Lru<string, { version: string; order: PayPageOrder }>>();

/**
 * What the payment page shows of an order (src/server/pay-page-data.ts), in one statement. An
 * order asked for again whose row reads exactly as before (every column, as one text) and whose
 * status at this moment is the same gives the very same object, so that the page made of it is
 * found without building anything; any change to what the page shows gives a new one.
 */
export function payPageOrder(s: StoreCtx, id: string): PayPageOrder {
  let reads = pageReads.get(s.ledger);
  if (!reads) pageReads.set(s.ledger, (reads = new Lru(64)));
  const last = reads.get(id);
  if (last) {
    const v = s.stmts().payPageVersion.get(id);
    if (!v) throw notFound('Order not found');
    if (v[0] === last.version && readStatus(v[1], Number(v[2]), s.now()) === last.order.status) return last.order;
  }
  const o = s.stmts().payPageOrder.get(id);
  if (!o) throw notFound('Order not found');
  const d = decimalsOf(o[4]);
  const expiredAt = Number(o[8]);
  const addresses: Addresses = {};
  if (o[12] !== null) addresses.EVM = o[12];
  if (o[13] !== null) addresses.TRON = o[13];
  // Frozen: it is handed out again to later requests, so no caller may change it.
  const order: PayPageOrder = Object.freeze({
    id: o[0], oid: o[1], mchId: o[2], merchantName: o[3], asset: o[4], amount: formatAmount(o[5], d), paidAmount: formatAmount(o[6], d),
    status: readStatus(o[7], expiredAt, s.now()), expiredAt, memo: o[9], logo: o[10], redirectUrl: o[11], addresses: Object.freeze(addresses),
    seenOnChain: o[14] !== 0n, testWallet: o[15] === 1n,
  });
  // The row and its text come from one statement: the same state of the ledger.
  reads.set(id, { version: o[16], order });
  return order;
}

/** An order of the merchant by id or by oid (as a refund names it); both given must agree. */
export function findOrder(q: Q, merchantId: string, id?: string, oid?: string): OrderRow {
  const byId = id ? q.select().from(orders).where(and(eq(orders.id, id), eq(orders.merchantId, merchantId))).get() : undefined;
  if (id && !byId) throw notFound('Order not found');
  if (byId && oid && byId.oid !== oid) throw invalid(`id ${id} and oid ${oid} name different orders`);
  const o = byId ?? q.select().from(orders).where(and(eq(orders.oid, oid!), eq(orders.merchantId, merchantId))).get();
  if (!o) throw notFound('Order not found');
  return o;
}

export function orderDetail(s: StoreCtx, o: OrderRow): OrderDetail {
  const d = decimalsOf(o.asset);
  const pays: Payment[] = s.stmts().paymentsOf.all({ id: o.id }).map((p) => ({
    txHash: p.txHash, amount: formatAmount(p.amount, d), chainType: p.chainType as ChainType | null, chainId: p.chainId,
    token: p.token, late: p.late, source: p.source as 'manual' | 'chain', createdAt: p.createdAt,
  }));
  return {
    ...orderView(s, o, s.now()),
    mchId: o.merchantId, asset: o.asset, memo: o.memo, notifyUrl: o.notifyUrl === null ? null : shownUrl(o.notifyUrl), redirectUrl: o.redirectUrl, logo: o.logo,
    paidAmount: formatAmount(o.paidAmount, d), refundedAmount: formatAmount(o.refundedAmount, d), paidAt: o.paidAt,
    late: o.late, createdAt: o.createdAt, payments: pays,
  };
}

/** What `order list` filters on; `since` inclusive and `until` exclusive, on the creation time. */
export interface OrderFilter {
  mchId?: string;
  status?: OrderStatus;
  uid?: string;
  oid?: string;
  since?: number;
  until?: number;
}

function orderWhere(filter: OrderFilter, now: number): SQL[] {
  const where: SQL[] = [];
  if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
  if (filter.uid) where.push(eq(orders.uid, filter.uid));
  if (filter.oid) where.push(eq(orders.oid, filter.oid));
  if (filter.since !== undefined) where.push(gte(orders.createdAt, filter.since));
  if (filter.until !== undefined) where.push(lt(orders.createdAt, filter.until));
  if (filter.status === 'EXPIRED') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} < ${now}`)!);
  else if (filter.status === 'PENDING_PAY') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} >= ${now}`)!);
  else if (filter.status) where.push(eq(orders.status, filter.status));
  return where;
}

export function listOrders(s: StoreCtx, filter: OrderFilter & { limit?: number }): OrderDetail[] {
  const rows = s.db.select().from(orders).where(and(...orderWhere(filter, s.now()))).orderBy(desc(orders.createdAt), desc(orders.id)).limit(filter.limit ?? 50).all();
  return rows.map((o) => orderDetail(s, o));
}

/** A page of `order list`, with the count of all that match (src/store/paging.ts). */
export function pageOrders(s: StoreCtx, filter: OrderFilter & { limit?: number; cursor?: string }): Page<OrderDetail> {
  const where = orderWhere(filter, s.now());
  const limit = filter.limit ?? 50;
  const count = (extra?: SQL) => Number(s.db.select({ n: sql<bigint>`count(*)` }).from(orders).where(and(...where, extra)).get()?.n ?? 0);
  // Only the merchant's own rows: another merchant's id answers as one that does not exist.
  const { after, before } = afterCursor(filter.cursor, 'an order', (cursor) => s.db.select({ time: orders.createdAt, id: orders.id }).from(orders)
      .where(and(eq(orders.id, cursor), filter.mchId ? eq(orders.merchantId, filter.mchId) : undefined)).get(), orders.createdAt, orders.id, count);
  const rows = s.db.select().from(orders).where(and(...where, after)).orderBy(desc(orders.createdAt), desc(orders.id)).limit(limit + 1).all();
  return pageOf(rows, limit, count(), before, (o) => o.id, (o) => orderDetail(s, o));
}

/**
 * The order an operator names by its id or by its merchant's oid (`order show|status`, `log
 * --order`). The id wins; an oid needs its merchant: `mchId`, else the one merchant whose orders
 * have that oid. Several merchants with that oid is ambiguous: a usage error naming them.
 */
export function resolveOrderRef(s: StoreCtx, ref: string, mchId?: string): OrderRow {
  const byId = s.db.select().from(orders).where(mchId ? and(eq(orders.id, ref), eq(orders.merchantId, mchId)) : eq(orders.id, ref)).get();
  if (byId) return byId;
  const found = ordersByOid(s, ref, mchId);
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw notFound('Order not found');
  throw oidOfSeveral(ref, found);
}

/** An oid several merchants use, named with each merchant's order: the operator says which. */
export function oidOfSeveral(oid: string, found: { merchantId: string; id: string }[]): AppError {
  return new AppError('usage', `oid ${oid} names orders of ${found.length} merchants (${found.map((o) => `${o.merchantId}: ${o.id}`).join(', ')}): pass --mch-id to say which`);
}

/** The orders with this oid: of `mchId`, else of every merchant (one index lookup per merchant). */
export function ordersByOid(s: StoreCtx, oid: string, mchId?: string): OrderRow[] {
  const ids = mchId ? [mchId] : s.db.select({ id: merchants.id }).from(merchants).orderBy(asc(merchants.seq)).all().map((m) => m.id);
  return ids.flatMap((merchantId) => s.stmts().orderByOid.all({ merchantId, oid }));
}


/**
 * `order find`: every order whose id, oid, uid, payment transaction (recorded, or seen on chain
 * and not yet counted) or deposit address is `q`, newest first, at most `limit`; and the
 * withdrawals whose payout transaction it is. A hash is matched by its key (any case, with or
 * without 0x); an EVM address in any case.
 */
export function findOrders(s: StoreCtx, q: string, opts: { mchId?: string; limit?: number }): FindResult {
  const limit = opts.limit ?? 50;
  const hits = new Map<string, Set<MatchedBy>>();
  const hit = (id: string, by: MatchedBy) => (hits.get(id) ?? hits.set(id, new Set()).get(id)!).add(by);
  const scope = (c: SQL) => (opts.mchId ? and(c, eq(orders.merchantId, opts.mchId))! : c);
  const ids = (rows: { id: string }[], by: MatchedBy) => rows.forEach((r) => hit(r.id, by));

  ids(s.db.select({ id: orders.id }).from(orders).where(scope(eq(orders.id, q))).all(), 'id');
  ids(ordersByOid(s, q, opts.mchId), 'oid');
  const merchantIds = opts.mchId ? [opts.mchId] : s.db.select({ id: merchants.id }).from(merchants).all().map((m) => m.id);
  for (const merchantId of merchantIds) {
    ids(s.db.select({ id: orders.id }).from(orders).where(and(eq(orders.merchantId, merchantId), eq(orders.uid, q))).orderBy(desc(orders.createdAt)).limit(limit + 1).all(), 'uid');
  }
  // A refund's id names its order; a withdrawal's id, the withdrawal (support is handed either).
  ids(s.db.select({ id: refunds.orderId }).from(refunds).innerJoin(orders, eq(orders.id, refunds.orderId)).where(scope(eq(refunds.id, q))).all(), 'refund');
  const withdrawalHits: (ListedWithdrawal & { mchId: string; matchedBy: MatchedBy[] })[] = [];
  /** The merchant's withdrawals where `c` holds, each listed as matched by `by`. */
  const withdrawalsWhere = (c: SQL, by: MatchedBy) => {
    for (const w of s.db.select().from(withdrawals).where(and(c, opts.mchId ? eq(withdrawals.merchantId, opts.mchId) : undefined)).all()) {
      withdrawalHits.push({ ...listedWithdrawal(w), mchId: w.merchantId, matchedBy: [by] });
    }
  };
  withdrawalsWhere(eq(withdrawals.id, q), 'id');
  if (/^(0x)?[0-9a-f]{64}$/i.test(q)) {
    const key = txKey(q);
    const spellings = [key, `0x${key}`];
    ids(s.db.select({ id: payments.orderId }).from(payments).innerJoin(orders, eq(orders.id, payments.orderId)).where(scope(eq(payments.txKey, key))).all(), 'txHash');
    // Seen on chain but not counted (waiting for confirmations, held, refused): by chain, so the
    // lookup uses the primary key's (chain, transaction) prefix.
    for (const { chainId } of s.db.select({ chainId: chainCursors.chainId }).from(chainCursors).all()) {
      ids(
        s.db.select({ id: chainPayments.orderId }).from(chainPayments).innerJoin(orders, eq(orders.id, chainPayments.orderId))
          .where(scope(and(eq(chainPayments.chainId, chainId), inArray(chainPayments.txHash, spellings))!)).all(),
        'txHash',
      );
    }
    withdrawalsWhere(inArray(withdrawals.txHash, spellings), 'txHash');
  }
  // An EVM address without its 0x is taken, as a hash is (an operator trial found nothing so).
  const a = /^[0-9a-f]{40}$/i.test(q) ? `0x${q}` : q;
  const addressOf: ChainType | undefined = /^0x[0-9a-f]{40}$/i.test(a) ? 'EVM' : /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(a) ? 'TRON' : undefined;
  if (addressOf) {
    ids(s.db.select({ id: orderAddresses.orderId }).from(orderAddresses).innerJoin(orders, eq(orders.id, orderAddresses.orderId)).where(scope(addressMatch(addressOf, a))).all(), 'address');
    // The wallet a payment came from, as the watcher saw it: what a customer names ("I paid
    // from 0x…"). Index chain_payments_from (0017), walked newest first; TRON's base58check
    // exactly as written. At most the page's orders: an exchange's hot wallet pays a busy
    // merchant's orders all day (an attacker review: 40,000 of them failed the read back).
    const from = sql`lower(${chainPayments.fromAddress}) = ${a.toLowerCase()}`;
    ids(s.db.selectDistinct({ id: chainPayments.orderId }).from(chainPayments).innerJoin(orders, eq(orders.id, chainPayments.orderId))
      .where(scope(and(isNotNull(chainPayments.fromAddress), from, addressOf === 'TRON' ? eq(chainPayments.fromAddress, a) : undefined)!))
      .orderBy(sql.raw('"chain_payments".rowid desc')).limit(limit + 1).all(), 'payer');
  }
  // What the ledger itself gave out or saw (an id, an address, a transaction) before what a
  // merchant named (an oid, a uid), then newest first: a merchant can name an order after another
  // merchant's deposit address, which an attacker review listed first under it.
  const own = (id: string) => (['id', 'refund', 'txHash', 'address', 'payer'] as MatchedBy[]).some((b) => hits.get(id)!.has(b));
  const rows = hits.size
    ? s.db.select().from(orders).where(inArray(orders.id, [...hits.keys()])).orderBy(desc(orders.createdAt), desc(orders.id)).all().sort((a, b) => Number(own(b.id)) - Number(own(a.id)))
    : [];
  const order: MatchedBy[] = ['id', 'refund', 'oid', 'uid', 'txHash', 'address', 'payer'];
  return {
    orders: rows.slice(0, limit).map((o) => ({ ...orderDetail(s, o), matchedBy: order.filter((b) => hits.get(o.id)!.has(b)) })),
    withdrawals: withdrawalHits,
    more: rows.length > limit,
  };
}
