import { and, desc, eq, gte, sql, type SQL } from 'drizzle-orm';
import { refuseReorgedOrder } from './reorg-holds.js';
import { conflict, invalid } from '../core/errors.js';
import { formatAmount, parseAmount, plainAmountParts } from '../core/money.js';
import type { RefundRequest } from '../core/schemas.js';
import { applyRefund, readStatus } from '../core/state.js';
import type { RefundDone, RefundView } from '../core/types.js';
import { accountId, audit, postTransfer } from './ledger.js';
import { findMerchant } from './merchants.js';
import { findOrder } from './orders.js';
import { orderRefundedEvent } from './outbox.js';
import { afterCursor, pageOf, type Page } from './paging.js';
import { orders, refunds } from './schema.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

export type { RefundView };

export type { RefundDone };

const heavy = () => import('./heavy.js');

/**
 * A refund that must not repeat one made moments ago (the CLI under --yes: src/commands/refund/
 * create.ts looks first, and this looks again inside the transaction, so that copies run at the
 * same moment, which all looked before any wrote, refund once: an operator trial).
 */
export interface NotARepeat {
  /** A refund of the same amount on the order within this long before is a repeat. */
  withinMs: number;
  /** The refusal, from that refund (`agoMs` is never negative: a clock stepped back reads 0). */
  refusal: (earlier: { refundId: string; amount: string; asset: string; orderId: string; agoMs: number }) => string;
}

export async function refund(s: StoreCtx, input: RefundRequest, notARepeat?: NotARepeat): Promise<RefundDone> {
  const h = await heavy();
  const req = h.parseInput(h.refundSchema, input);
  if (!req.id && !req.oid) throw invalid('id or oid is required');
  // An amount that is no decimal at all is refused as such before the order is looked for (its
  // places are checked against the order's asset below): "1e3" is not an "Order not found".
  plainAmountParts(req.amount);
  return s.write((tx) => {
    // Read under the write lock: a copy that waited for it sees the refund made meanwhile as
    // made before this one, and its own refundTime is when it was made.
    const now = s.now();
    const m = findMerchant(s, tx, req.mchId);
    const o = findOrder(tx, m.id, req.id, req.oid);
    const d = decimalsOf(o.asset);
    const amount = parseAmount(req.amount, d);
    const next = applyRefund({ status: readStatus(o.status, o.expiredAt, now), paid: o.paidAmount, refunded: o.refundedAmount, amount, decimals: d });
    refuseReorgedOrder(tx, o.id);
    if (notARepeat) {
      const earlier = tx.select({ id: refunds.id, createdAt: refunds.createdAt }).from(refunds)
        .where(and(eq(refunds.orderId, o.id), eq(refunds.amount, amount), gte(refunds.createdAt, now - notARepeat.withinMs)))
        .orderBy(desc(refunds.createdAt)).limit(1).get();
      if (earlier) throw conflict(notARepeat.refusal({ refundId: earlier.id, amount: formatAmount(amount, d), asset: o.asset, orderId: o.id, agoMs: Math.max(0, now - earlier.createdAt) }));
    }
    const transferId = postTransfer(tx, {
      merchantId: m.id, asset: o.asset, amount, kind: 'refund', ref: o.id, now, decimals: d,
      debit: accountId(tx, { merchantId: m.id, asset: o.asset, kind: 'user', uid: o.uid }),
      credit: accountId(tx, { merchantId: m.id, asset: o.asset, kind: 'refunds' }),
    });
    const refundId = s.randomId('rf');
    const remark = req.remark ?? '';
    tx.insert(refunds).values({ id: refundId, orderId: o.id, merchantId: m.id, amount, remark, transferId, createdAt: now }).run();
    tx.update(orders).set({ refundedAmount: next.refunded, status: next.status }).where(eq(orders.id, o.id)).run();
    orderRefundedEvent(tx, o, { refundId, amount, refundedAmount: next.refunded, status: next.status, remark, refundTime: now });
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'order.refunded', merchantId: m.id, subjectType: 'order', subjectId: o.id,
      detail: { refundId, amount: formatAmount(amount, d), refundedTotal: formatAmount(next.refunded, d), paid: formatAmount(o.paidAmount, d), statusAfter: next.status, remark },
    });
    return {
      refundId, mchId: m.id, id: o.id, oid: o.oid, amount: formatAmount(amount, d), status: 'REFUNDED' as const, remark, refundTime: now,
      asset: o.asset, orderStatus: next.status as 'PAID' | 'REFUNDED', paidAmount: formatAmount(o.paidAmount, d), refundedAmount: formatAmount(next.refunded, d),
    };
  });
}

export function listRefunds(s: StoreCtx, filter: { orderId?: string; mchId?: string; limit?: number }): RefundView[] {
  return pageRefunds(s, filter, false).items;
}

/** A page of `refund list`, newest first, with the count of all that match (src/store/paging.ts). */
export function pageRefunds(s: StoreCtx, filter: { orderId?: string; mchId?: string; limit?: number; cursor?: string }, counted = true): Page<RefundView> {
  const where: SQL[] = [];
  if (filter.orderId) where.push(eq(refunds.orderId, filter.orderId));
  if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
  const limit = filter.limit ?? 50;
  const count = (extra?: SQL) =>
    counted ? Number(s.db.select({ n: sql<bigint>`count(*)` }).from(refunds).innerJoin(orders, eq(orders.id, refunds.orderId)).where(and(...where, extra)).get()?.n ?? 0) : 0;
  // Only the merchant's own rows: another merchant's id answers as one that does not exist.
  const { after, before } = afterCursor(filter.cursor, 'a refund', (cursor) => s.db.select({ time: refunds.createdAt, id: refunds.id }).from(refunds).innerJoin(orders, eq(orders.id, refunds.orderId))
      .where(and(eq(refunds.id, cursor), filter.mchId ? eq(orders.merchantId, filter.mchId) : undefined)).get(), refunds.createdAt, refunds.id, count);
  const rows = s.db
    .select({ r: refunds, o: { id: orders.id, oid: orders.oid, asset: orders.asset, merchantId: orders.merchantId } })
    .from(refunds).innerJoin(orders, eq(orders.id, refunds.orderId))
    .where(and(...where, after)).orderBy(desc(refunds.createdAt), desc(refunds.id)).limit(limit + 1).all();
  return pageOf(rows, limit, count(), before, ({ r }) => r.id, ({ r, o }) => ({
    refundId: r.id, mchId: o.merchantId, id: o.id, oid: o.oid, amount: formatAmount(r.amount, decimalsOf(o.asset)),
    status: 'REFUNDED' as const, remark: r.remark, refundTime: r.createdAt,
  }));
}
