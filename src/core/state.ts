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

/**
 * Paid in full (or over) is PAID; fully refunded is REFUNDED; anything less stays unpaid. A
 * partly refunded order stays PAID (decisions §5). A fully refunded order is PAID again only when
 * what arrived since covers its amount again (the payer paid anew): dust sent after a refund is
 * credited to the user but does not make the order PAID, nor send order.paid, again (an outside
 * review: a shop that ships on order.paid would ship a refunded order for one base unit).
 * `before`: the stored status before this change (undefined: judged from the amounts alone).
 */
export function statusFor(amount: bigint, paid: bigint, refunded: bigint, before?: StoredOrderStatus): StoredOrderStatus {
  if (paid < amount) return 'PENDING_PAY';
  if (refunded >= paid) return 'REFUNDED';
  if (before === 'REFUNDED' && paid - refunded < amount) return 'REFUNDED';
  return 'PAID';
}

/**
 * The statuses a ledger check accepts for an order: its payments and refunds replayed in the
 * order they were posted, through statusFor (what the ledger now writes), and the status its
 * amounts alone give (what a ledger wrote before dust after a full refund stopped making an order
 * PAID again). A partly refunded order set to REFUNDED is neither.
 */
export function statusesFor(amount: bigint, history: { kind: 'payment' | 'refund'; amount: bigint }[]): StoredOrderStatus[] {
  let paid = 0n;
  let refunded = 0n;
  let status: StoredOrderStatus = 'PENDING_PAY';
  for (const e of history) {
    if (e.kind === 'payment') paid += e.amount;
    else refunded += e.amount;
    status = statusFor(amount, paid, refunded, status);
  }
  const byAmounts = statusFor(amount, paid, refunded);
  return status === byAmounts ? [status] : [status, byAmounts];
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
