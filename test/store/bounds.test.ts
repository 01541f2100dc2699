import { describe, expect, it } from 'vitest';
import { MAX_LEDGER_AMOUNT, formatAmount } from '../../src/core/money.js';
import { accountRows, addOtherMerchant, addTestMerchant, counts, evmTx, order, refused, useHarness } from '../helpers/service.js';

/**
 * Issue #10 item 10: no silent overflow. SQLite turns an integer sum past 64 bits into a float;
 * the ledger refuses any change that would leave ±(2^63 - 1) base units, with a clear message.
 */
const MAX = formatAmount(MAX_LEDGER_AMOUNT, 6); // 9223372036854.775807 USDT
const TRILLION = '1000000000000';

describe('64-bit bounds', () => {
  const h = useHarness();
  const state = () => ({ counts: counts(h().ledger), accounts: accountRows(h().ledger) });

  it('ten payments of 10^18 base units: the tenth is refused, nothing becomes a float, ledger check holds', async () => {
    const { service } = h();
    await addTestMerchant(service);
    for (let i = 1; i <= 9; i++) {
      const o = await order(service, { amount: TRILLION, uid: 'whale' });
      await service.markPaid({ id: o.id, txHash: evmTx(i) });
    }
    expect((await service.balance('whale')).available).toBe('9000000000000');
    const tenth = await order(service, { amount: TRILLION, uid: 'whale' });
    const before = state();
    await refused(service.markPaid({ id: tenth.id, txHash: evmTx(10) }), 'conflict', `outside what the ledger can hold (±${MAX})`);
    expect(state()).toEqual(before);
    expect(await service.getOrderStatus(tenth.id)).toBe('PENDING_PAY');
    const types = h().ledger.sqlite.prepare('select distinct typeof(posted) as t from accounts').all() as { t: string }[];
    expect(types).toEqual([{ t: 'integer' }]);
    expect(await service.check()).toEqual([]);
  });

  // A review of session 25: summary added the period's amounts with SQL's sum(), which throws past
  // 64 bits; money that comes and goes (credited, then debited back; paid, then refunded) adds up
  // past the bound in a period while no balance ever nears it. summary then failed as a whole.
  it("summary adds up a period's amounts past 64 bits: credited and debited back, paid and refunded", async () => {
    const { service } = h();
    const { mchId: first } = await addTestMerchant(service);
    for (let i = 0; i < 9; i++) {
      await service.adjustBalance({ uid: 'u', amount: `+${TRILLION}`, reason: 'in' });
      await service.adjustBalance({ uid: 'u', amount: `-${TRILLION}`, reason: 'out' });
    }
    await service.adjustBalance({ uid: 'u', amount: `+${TRILLION}`, reason: 'in' });
    // Two merchants, each paid 9 x 10^18 base units: their sum, in the whole ledger's summary.
    const other = await addOtherMerchant(service);
    for (const mchId of [first, other.mchId]) {
      for (let i = 0; i < 9; i++) {
        const o = await order(service, { amount: TRILLION, uid: 'p', mchId });
        await service.markPaid({ id: o.id, txHash: evmTx(400 + i + (mchId === first ? 0 : 100)) });
        if (mchId === first) await service.refund({ id: o.id, amount: TRILLION, mchId });
      }
    }
    const s = await service.summary();
    expect(s.week.adjustments).toEqual({ count: 19, credited: { USDT: '10000000000000' }, debited: { USDT: '9000000000000' } });
    expect(s.week.payments).toEqual({ count: 18, total: { USDT: '18000000000000' } });
    expect(s.week.refunds).toEqual({ count: 9, total: { USDT: '9000000000000' } });
    expect(s.balances.available).toEqual({ USDT: '10000000000000' });
    expect(await service.check()).toEqual([]);
  });

  it('a balance reaches the bound exactly; one base unit more is refused', async () => {
    const { service } = h();
    await addTestMerchant(service);
    // Half from adjustments, half from payments: neither system account is near its bound, so the
    // user's own balance is what reaches it.
    for (let i = 0; i < 5; i++) await service.adjustBalance({ uid: 'u', amount: TRILLION, reason: 'fill' });
    for (let i = 0; i < 4; i++) {
      const o = await order(service, { amount: TRILLION, uid: 'u' });
      await service.markPaid({ id: o.id, txHash: evmTx(300 + i) });
    }
    const rest = formatAmount(MAX_LEDGER_AMOUNT - 9n * 10n ** 18n, 6);
    const last = await order(service, { amount: rest, uid: 'u' });
    await service.markPaid({ id: last.id, txHash: evmTx(310) });
    expect((await service.balance('u')).available).toBe(MAX);
    const before = state();
    await refused(service.adjustBalance({ uid: 'u', amount: '0.000001', reason: 'past it' }), 'conflict',
      `user u's balance of USDT would be 9223372036854.775808, outside what the ledger can hold (±${MAX}): refused, nothing was changed`);
    expect(state()).toEqual(before);
    // Debiting back down works, and the books balance.
    await service.adjustBalance({ uid: 'u', amount: '-1', reason: 'down' });
    expect((await service.balance('u')).available).toBe(formatAmount(MAX_LEDGER_AMOUNT - 1_000_000n, 6));
  });

  it('an order cannot be paid past the bound in total', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service, { amount: TRILLION, uid: 'a' });
    for (let i = 0; i < 9; i++) await service.markPaid({ id: o.id, txHash: evmTx(100 + i), amount: TRILLION });
    await service.markPaid({ id: o.id, txHash: evmTx(200), amount: formatAmount(MAX_LEDGER_AMOUNT - 9n * 10n ** 18n, 6) });
    expect((await service.getOrder(o.id)).paidAmount).toBe(MAX);
    await refused(service.markPaid({ id: o.id, txHash: evmTx(201), amount: '0.000001' }), 'conflict', 'outside what the ledger can hold');
  });
});
