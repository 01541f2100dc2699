import { eq } from 'drizzle-orm';
import { ASSETS } from '../core/assets.js';
import { conflict, notFound } from '../core/errors.js';
import { formatAmount } from '../core/money.js';
import { readStatus, statusFor } from '../core/state.js';
import type { ChainType } from '../core/types.js';
import { accountId, audit, postTransfer, type Q } from './ledger.js';
import { orders, payments } from './schema.js';

/**
 * Until the ledger's one `recordPayment` (src/store/payments.ts, the lead's split) lands, the
 * watcher records a payment here exactly as `order mark-paid` does, with the shape of that
 * function so that switching is one import.
 */
export interface PaymentRecord {
  orderId: string;
  txHash: string;
  logIndex: number | null;
  amount: bigint;
  rawAmount: string | null;
  chainType: ChainType | null;
  chainId: string | null;
  token: string | null;
  blockNumber: number | null;
  blockHash: string | null;
  source: 'manual' | 'chain';
}

const LATE_WINDOW_MS = 86_400_000;

export function recordPayment(tx: Q, p: PaymentRecord, ctx: { now: number; actor: string }): { held: boolean } {
  const o = tx.select().from(orders).where(eq(orders.id, p.orderId)).get();
  if (!o) throw notFound('Order not found');
  const d = ASSETS[o.asset]!.decimals;
  const late = ctx.now > o.expiredAt;
  if (ctx.now > o.expiredAt + LATE_WINDOW_MS) {
    audit(tx, {
      at: ctx.now, actor: ctx.actor, action: 'order.payment_held', merchantId: o.merchantId, subjectType: 'order', subjectId: o.id,
      detail: { txHash: p.txHash, logIndex: p.logIndex, amount: formatAmount(p.amount, d), rawAmount: p.rawAmount, chainId: p.chainId, token: p.token, reason: 'more than 24 hours after the order expired' },
    });
    return { held: true };
  }
  const used = tx.select({ orderId: payments.orderId }).from(payments).where(eq(payments.txHash, p.txHash)).get();
  if (used) throw conflict(`transaction ${p.txHash} already paid order ${used.orderId}`);
  const transferId = postTransfer(tx, {
    merchantId: o.merchantId, asset: o.asset, amount: p.amount, kind: 'payment', ref: o.id, now: ctx.now, decimals: d,
    debit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'payments' }),
    credit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'user', uid: o.uid }),
  });
  tx.insert(payments).values({ orderId: o.id, txHash: p.txHash, amount: p.amount, chainType: p.chainType, chainId: p.chainId, token: p.token, late, source: p.source, transferId, createdAt: ctx.now }).run();
  const paid = o.paidAmount + p.amount;
  const status = statusFor(o.amount, paid, o.refundedAmount);
  const becamePaid = status === 'PAID' && o.status === 'PENDING_PAY';
  tx.update(orders).set({ paidAmount: paid, status, late: o.late || (becamePaid && late), paidAt: becamePaid ? ctx.now : o.paidAt }).where(eq(orders.id, o.id)).run();
  audit(tx, {
    at: ctx.now, actor: ctx.actor, action: 'order.payment_recorded', merchantId: o.merchantId, subjectType: 'order', subjectId: o.id,
    detail: {
      txHash: p.txHash, logIndex: p.logIndex, amount: formatAmount(p.amount, d), rawAmount: p.rawAmount, paidTotal: formatAmount(paid, d),
      statusBefore: readStatus(o.status, o.expiredAt, ctx.now), statusAfter: status, late, chainType: p.chainType, chainId: p.chainId, token: p.token,
      blockNumber: p.blockNumber, blockHash: p.blockHash,
    },
  });
  return { held: false };
}
