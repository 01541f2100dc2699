import { randomBytes } from 'node:crypto';
import type { CallbackEvent, EventFields } from '../store/outbox.js';
import { CALLBACK_EVENTS } from '../store/outbox.js';
import { usage } from '../core/errors.js';

/**
 * A sample of each event for `callbacks test` (like `stripe trigger`): the fields a real one
 * carries, made-up values, and `test: true` so a receiver can tell it from a real event.
 */
export function sampleEvent(event: string, now: number): EventFields {
  if (!CALLBACK_EVENTS.includes(event as CallbackEvent)) throw usage(`--event must be one of ${CALLBACK_EVENTS.join(', ')}`);
  const r = () => randomBytes(8).toString('hex');
  const eventId = `evt_test_${r()}`;
  const order = { id: `ord_test_${r()}`, oid: 'TEST-1', uid: 'test-user', amount: '12.5', asset: 'USDT' };
  const withdrawal = {
    id: `wd_test_${r()}`, uid: 'test-user', amount: '10', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: '1', chainType: 'EVM',
    token: '0xdAC17F958D2ee523a2206206994597C13D831ec7', createdAt: now - 60_000, updatedAt: now,
  };
  const tx = `0x${randomBytes(32).toString('hex')}`;
  const base = { event, eventId, test: true };
  switch (event as CallbackEvent) {
    case 'order.paid':
      return { ...base, ...order, paidAmount: '12.5', status: 'PAID', late: false, paidAt: now, txHash: tx, chainType: 'EVM', chainId: '1', token: withdrawal.token };
    case 'order.expired':
      return { ...base, ...order, paidAmount: '0', status: 'EXPIRED', expiredAt: now - 1000 };
    case 'order.refunded':
      return { ...base, ...order, amount: '2.5', orderAmount: '12.5', paidAmount: '12.5', refundId: `rf_test_${r()}`, refundedAmount: '2.5', status: 'PAID', remark: 'test refund', refundTime: now };
    case 'withdraw.confirmed':
      return { ...base, ...withdrawal, status: 'CONFIRMED', txHash: tx, blockNumber: 19_000_000, remark: null };
    case 'withdraw.rejected':
      return { ...base, ...withdrawal, status: 'REJECTED', txHash: null, blockNumber: null, remark: 'test rejection' };
  }
}
