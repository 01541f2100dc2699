import { describe, expect, it } from 'vitest';
import type { LocalPaymentService } from '../../src/store/local-service.js';
import {
  DAY, MINUTE, T0, USDT, accountRows, addOtherMerchant, addShopMerchant, counts, evmTx, order, paidOrder, refused, useHarness,
} from '../helpers/service.js';

/** What a refused refund must leave untouched. */
async function snapshot(service: LocalPaymentService, orderId: string) {
  const o = await service.getOrder(orderId);
  return {
    order: { status: o.status, paidAmount: o.paidAmount, refundedAmount: o.refundedAmount },
    balance: await service.balance(o.uid, { mchId: o.mchId }),
    counts: counts(service.ledger),
    accounts: accountRows(service.ledger),
  };
}

describe('refund: which order state allows it', () => {
  const h = useHarness();

  it.each([
    ['PENDING_PAY', 'unpaid'],
    ['PENDING_PAY', 'underpaid'],
    ['EXPIRED', 'unpaid'],
    ['REFUNDED', 'refunded'],
  ] as const)('refuses an order that reads %s (%s) with "order status is not Paid"', async (status, how) => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await order(service, { amount: '10' });
    if (how === 'underpaid') await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '4' });
    if (how === 'refunded') {
      await service.markPaid({ id: o.id, txHash: evmTx(1) });
      await service.refund({ id: o.id, amount: '10' });
    }
    if (status === 'EXPIRED') clock.now = o.expiredAt + 1;
    expect(await service.getOrderStatus(o.id)).toBe(status);
    const before = await snapshot(service, o.id);
    await refused(service.refund({ id: o.id, amount: '1' }), 'conflict', `order status is not Paid (it is ${status})`);
    expect(await snapshot(service, o.id)).toEqual(before);
  });

  it('refunds a PAID order even after its expiry has passed', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '10' });
    clock.now = o.expiredAt + DAY + 1;
    expect((await service.refund({ id: o.id, amount: '10' })).status).toBe('REFUNDED');
    expect(await service.getOrderStatus(o.id)).toBe('REFUNDED');
  });
});

describe('refund amounts', () => {
  const h = useHarness();

  it('answers exactly the refund result, with refundTime from the clock', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { oid: 'shop-1', amount: '10' });
    clock.now = T0 + 5 * MINUTE;
    expect(await service.refund({ id: o.id, amount: '2.50', remark: 'broken cup' })).toStrictEqual({
      id: o.id, oid: 'shop-1', amount: '2.5', status: 'REFUNDED', remark: 'broken cup', refundTime: T0 + 5 * MINUTE,
    });
    expect(await service.refund({ id: o.id, amount: '1' })).toStrictEqual({
      id: o.id, oid: 'shop-1', amount: '1', status: 'REFUNDED', remark: '', refundTime: T0 + 5 * MINUTE,
    });
  });

  it('partial refunds add up; the order stays PAID until exactly the remainder is refunded', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { uid: 'alice', amount: '10' });
    await service.refund({ id: o.id, amount: '3' });
    await service.refund({ id: o.id, amount: '2.5' });
    expect(await service.getOrder(o.id)).toMatchObject({ status: 'PAID', refundedAmount: '5.5' });
    expect(await service.balance('alice')).toMatchObject({ available: '4.5' });
    await service.refund({ id: o.id, amount: '4.5' });
    expect(await service.getOrder(o.id)).toMatchObject({ status: 'REFUNDED', refundedAmount: '10' });
    expect(await service.balance('alice')).toMatchObject({ available: '0' });
    expect((await service.listRefunds({ orderId: o.id })).map((r) => r.amount).sort()).toEqual(['2.5', '3', '4.5']);
  });

  it('an overpaid order can be refunded up to what arrived', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await order(service, { amount: '10' });
    await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '12' });
    await refused(service.refund({ id: o.id, amount: '12.000001' }), 'invalid', 'refund amount 12.000001 is above the original payment 12');
    await service.refund({ id: o.id, amount: '12' });
    expect(await service.getOrderStatus(o.id)).toBe('REFUNDED');
  });

  it.each([
    ['above the original payment', '10.01', 'invalid', 'refund amount 10.01 is above the original payment 10'],
    ['above the remainder', '7.5', 'conflict', 'refund amount 7.5 is above what remains refundable (7 of 10 paid)'],
    ['not a decimal', '-1', 'invalid', 'amount must be a plain decimal'],
    ['zero', '0', 'invalid', 'amount must be positive'],
    ['more than 6 decimals', '0.0000001', 'invalid', 'amount has more than 6 decimal places'],
  ] as const)('refuses an amount %s and changes nothing', async (_, amount, kind, msg) => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '10' });
    await service.refund({ id: o.id, amount: '3' });
    const before = await snapshot(service, o.id);
    await refused(service.refund({ id: o.id, amount }), kind, msg);
    expect(await snapshot(service, o.id)).toEqual(before);
  });

  it('an amount that is no decimal at all is named as such, whatever the order (an outside review got "Order not found" for "1e3")', async () => {
    const { service } = h();
    await addShopMerchant(service);
    for (const amount of ['1e3', '.5', ' 1', '1,5']) {
      await refused(service.refund({ id: 'ord_nope', amount }), 'invalid', 'amount must be a plain decimal');
      await refused(service.refund({ oid: 'nope', amount }), 'invalid', 'amount must be a plain decimal');
    }
    // A well-formed amount for an unknown order is still "Order not found".
    await refused(service.refund({ id: 'ord_nope', amount: '1' }), 'not_found', 'Order not found');
  });

  it('refuses a refund the user balance no longer covers and changes nothing', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { uid: 'alice', amount: '10' });
    const w = await service.applyWithdrawal({ uid: 'alice', amount: '8', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 1, chainType: 'EVM', token: USDT.ETH });
    await service.confirmWithdrawal({ logId: w.id, txHash: evmTx(99), blockNumber: 100 });
    const before = await snapshot(service, o.id);
    expect(before.balance).toMatchObject({ available: '2', held: '0' });
    await refused(service.refund({ id: o.id, amount: '5' }), 'conflict', 'insufficient balance: user alice has 2 USDT available, 5 needed');
    expect(await snapshot(service, o.id)).toEqual(before);
    expect(before.order).toEqual({ status: 'PAID', paidAmount: '10', refundedAmount: '0' });
  });

  it('does not let a refund take funds held by a pending withdrawal', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { uid: 'alice', amount: '10' });
    await service.applyWithdrawal({ uid: 'alice', amount: '9', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 1, chainType: 'EVM', token: USDT.ETH });
    const before = await snapshot(service, o.id);
    await refused(service.refund({ id: o.id, amount: '2' }), 'conflict', 'insufficient balance: user alice has 1 USDT available');
    expect(await snapshot(service, o.id)).toEqual(before);
  });
});

describe('refund: naming the order', () => {
  const h = useHarness();

  it('finds the order by oid', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { oid: 'by-oid', amount: '10' });
    expect(await service.refund({ oid: 'by-oid', amount: '1' })).toMatchObject({ id: o.id, oid: 'by-oid', amount: '1' });
    expect(await service.refund({ id: o.id, oid: 'by-oid', amount: '1' })).toMatchObject({ id: o.id, amount: '1' });
    expect((await service.getOrder(o.id)).refundedAmount).toBe('2');
  });

  it.each([
    ['id and oid of different orders', (a: string) => ({ id: a, oid: 'second' }), 'invalid', 'name different orders'],
    ['neither id nor oid', () => ({}), 'invalid', 'id or oid is required'],
    ['an unknown id', () => ({ id: 'ord_unknown' }), 'not_found', 'Order not found'],
    ['an unknown oid', () => ({ oid: 'nope' }), 'not_found', 'Order not found'],
    ['an unknown field', (a: string) => ({ id: a, orderId: a }), 'invalid', 'unknown field: orderId'],
    ['a remark of 257 characters', (a: string) => ({ id: a, remark: 'x'.repeat(257) }), 'invalid', 'remark must be at most 256 characters'],
  ] as const)('refuses %s', async (_, pick, kind, msg) => {
    const { service } = h();
    await addShopMerchant(service);
    const a = await paidOrder(service, { oid: 'first' });
    await paidOrder(service, { oid: 'second' });
    const before = await snapshot(service, a.id);
    await refused(service.refund({ amount: '1', ...pick(a.id) } as never), kind, msg);
    expect(await snapshot(service, a.id)).toEqual(before);
  });

  it('answers another merchant’s order exactly like an unknown one', async () => {
    const { service } = h();
    const a = await addShopMerchant(service);
    const b = await addOtherMerchant(service);
    const theirs = await paidOrder(service, { mchId: b.mchId, oid: 'theirs' });
    const before = await snapshot(service, theirs.id);
    const byId = await refused(service.refund({ mchId: a.mchId, id: theirs.id, amount: '1' }), 'not_found', 'Order not found');
    const unknown = await refused(service.refund({ mchId: a.mchId, id: 'ord_unknown', amount: '1' }), 'not_found', 'Order not found');
    const byOid = await refused(service.refund({ mchId: a.mchId, oid: 'theirs', amount: '1' }), 'not_found', 'Order not found');
    expect(byId.message).toBe(unknown.message);
    expect(byOid.message).toBe(unknown.message);
    expect(await snapshot(service, theirs.id)).toEqual(before);
  });
});

describe('refund: the look for a repeat inside the transaction (the CLI under --yes)', () => {
  const h = useHarness();
  const notARepeat = (seen: number[]) => ({ withinMs: 10 * MINUTE, refusal: (e: { agoMs: number }) => (seen.push(e.agoMs), `a repeat of ${e.agoMs} ms`) });

  it('refuses a refund of the same amount made moments before, and says how long before', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '10' });
    await service.refundWithId({ id: o.id, amount: '2' }, notARepeat([]));
    clock.now += 7_000;
    const seen: number[] = [];
    const before = await snapshot(service, o.id);
    await refused(service.refundWithId({ id: o.id, amount: '2' }, notARepeat(seen)), 'conflict', 'a repeat of 7000 ms');
    expect(seen).toEqual([7_000]);
    expect(await snapshot(service, o.id)).toEqual(before);
    // Another amount, or one made longer ago than the window, is no repeat.
    await service.refundWithId({ id: o.id, amount: '3' }, notARepeat([]));
    clock.now += 11 * MINUTE;
    await service.refundWithId({ id: o.id, amount: '2' }, notARepeat([]));
  });

  it('never says a refund was made a negative time ago when the clock stepped back', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '10' });
    await service.refundWithId({ id: o.id, amount: '2' }, notARepeat([]));
    clock.now -= 3_000;
    const seen: number[] = [];
    await refused(service.refundWithId({ id: o.id, amount: '2' }, notARepeat(seen)), 'conflict', 'a repeat of 0 ms');
    expect(seen).toEqual([0]);
  });
});
