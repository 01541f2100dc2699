import { AppError } from './errors.js';
import { formatAmount } from './money.js';
import type { OrderStatus, WithdrawalStatus } from './types.js';

/**
 * The state transitions of orders and withdrawals as plain functions (decisions §3, §5, §6).
 * The ledger stores PENDING_PAY, PAID and REFUNDED; EXPIRED is how an unpaid order past its
 * expiry reads, at once, with no sweep needed.
 */
export type StoredOrderStatus = 'PENDING_PAY' | 'PAID' | 'REFUNDED';

export function readStatus(stored: string, expiredAt: number, now: number): OrderStatus {
  if (stored === 'PENDING_PAY' && now > expiredAt) return 'EXPIRED';
  return stored as OrderStatus;
}

/**
 * How long after an order expired a payment found on chain is still credited (as late,
 * decisions §6b). Past it, the payment is held for an operator instead: the user may have moved
 * on, and only a person can tell whether to credit it or send it back.
 */
export const LATE_WINDOW_MS = 24 * 60 * 60 * 1000;

export function pastLateWindow(expiredAt: number, now: number): boolean {
  return now > expiredAt + LATE_WINDOW_MS;
}

/** Paid in full (or over) is PAID; fully refunded is REFUNDED; anything less stays unpaid. */
export function statusFor(amount: bigint, paid: bigint, refunded: bigint): StoredOrderStatus {
  if (paid < amount) return 'PENDING_PAY';
  return refunded >= paid ? 'REFUNDED' : 'PAID';
}

export interface RefundCheck {
  status: OrderStatus;
  paid: bigint;
  refunded: bigint;
  amount: bigint;
  decimals: number;
}

/** Returns the order's refunded total and stored status after the refund, or refuses. */
export function applyRefund(c: RefundCheck): { refunded: bigint; status: StoredOrderStatus } {
  if (c.status !== 'PAID') {
    throw new AppError('conflict', `order status is not Paid (it is ${c.status})`);
  }
  if (c.amount > c.paid) {
    throw new AppError('invalid', `refund amount ${formatAmount(c.amount, c.decimals)} is above the original payment ${formatAmount(c.paid, c.decimals)}`);
  }
  const remaining = c.paid - c.refunded;
  if (c.amount > remaining) {
    throw new AppError(
      'conflict',
      `refund amount ${formatAmount(c.amount, c.decimals)} is above what remains refundable (${formatAmount(remaining, c.decimals)} of ${formatAmount(c.paid, c.decimals)} paid)`,
    );
  }
  const refunded = c.refunded + c.amount;
  return { refunded, status: refunded === c.paid ? 'REFUNDED' : 'PAID' };
}

export type WithdrawalAction = 'confirm' | 'reject';

export function withdrawalAfter(status: WithdrawalStatus, action: WithdrawalAction): WithdrawalStatus {
  if (status !== 'PENDING') {
    throw new AppError('conflict', `withdrawal is ${status}, not PENDING: only a pending withdrawal can be ${action === 'confirm' ? 'confirmed' : 'rejected'}`);
  }
  return action === 'confirm' ? 'CONFIRMED' : 'REJECTED';
}
