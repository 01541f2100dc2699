import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { MAX_ORDER_AHEAD } from '../core/duration.js';
import { conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount, parseAmount } from '../core/money.js';
import type { CreateOrderRequest } from '../core/schemas.js';
import { readStatus } from '../core/state.js';
import type { Addresses, ChainType, Order, OrderDetail, OrderStatus, Payment } from '../core/types.js';
import type { Q } from './ledger.js';
import { findMerchant, type MerchantRow } from './merchants.js';
import { orders } from './schema.js';
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
  if (req.notifyUrl && !s.allowPrivateCallbacks) h.checkNotifyUrl(req.notifyUrl);
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const decimals = decimalsOf(m.asset);
    const amount = parseAmount(req.amount, decimals);
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
      ).filter(([, a, b]) => a !== b).map(([k]) => k);
      if (differs.length) {
        throw conflict(`oid ${req.oid} is already used by order ${existing.id} with a different ${differs.join(', ')}`);
      }
      return orderView(s, existing, now);
    }
    const expiredAt = req.expiredAt ?? now + m.orderLifetimeMs;
    if (expiredAt <= now) throw invalid('expiredAt must lie in the future');
    if (expiredAt > now + MAX_ORDER_AHEAD) throw invalid('expiredAt must be at most 7 days ahead');
    const id = s.randomId('ord');
    s.stmts().insertOrder.run({
      id, merchantId: m.id, oid: req.oid, uid: req.uid, asset: m.asset, amount,
      memo: req.memo ?? null, expiredAt, notifyUrl: req.notifyUrl ?? null, redirectUrl: req.redirectUrl ?? null,
      logo: req.logo ?? null, createdAt: now,
    });
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
  const o = s.stmts().status.get({ id });
  if (!o) throw notFound('Order not found');
  return readStatus(o.status, o.expiredAt, s.now());
}

export function getOrder(s: StoreCtx, id: string, mchId?: string): OrderDetail {
  const found = s.stmts().orderById.get({ id });
  const o = found && (!mchId || found.merchantId === mchId) ? found : undefined;
  if (!o) throw notFound('Order not found');
  return orderDetail(s, o);
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
    mchId: o.merchantId, asset: o.asset, memo: o.memo, notifyUrl: o.notifyUrl, redirectUrl: o.redirectUrl, logo: o.logo,
    paidAmount: formatAmount(o.paidAmount, d), refundedAmount: formatAmount(o.refundedAmount, d), paidAt: o.paidAt,
    late: o.late, createdAt: o.createdAt, payments: pays,
  };
}

export function listOrders(s: StoreCtx, filter: { mchId?: string; status?: OrderStatus; uid?: string; limit?: number }): OrderDetail[] {
  const now = s.now();
  const where: SQL[] = [];
  if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
  if (filter.uid) where.push(eq(orders.uid, filter.uid));
  if (filter.status === 'EXPIRED') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} < ${now}`)!);
  else if (filter.status === 'PENDING_PAY') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} >= ${now}`)!);
  else if (filter.status) where.push(eq(orders.status, filter.status));
  const rows = s.db.select().from(orders).where(and(...where)).orderBy(desc(orders.createdAt), desc(orders.id)).limit(filter.limit ?? 50).all();
  return rows.map((o) => orderDetail(s, o));
}
