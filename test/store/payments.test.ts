import { describe, expect, it } from 'vitest';
import {
  MINUTE, T0, TRON_CHAIN, USDT, accountRows, addTestMerchant, counts, evmTx, order, refused, tronTx, useHarness,
} from '../helpers/service.js';

describe('recording a payment by hand', () => {
  const h = useHarness();

  it('a full payment makes the order PAID and credits its user', async () => {
    const { service, clock } = h();
    await addTestMerchant(service);
    const o = await order(service, { uid: 'alice', amount: '25.5' });
    clock.now = T0 + MINUTE;
    const paid = await service.markPaid({ id: o.id, txHash: evmTx(1), chainId: '1', token: USDT.ETH });
    expect(paid).toMatchObject({ status: 'PAID', paidAmount: '25.5', paidAt: T0 + MINUTE, late: false });
    expect(paid.payments).toEqual([
      { txHash: evmTx(1), amount: '25.5', chainType: 'EVM', chainId: '1', token: USDT.ETH, late: false, source: 'manual', createdAt: T0 + MINUTE },
    ]);
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    expect(await service.balance('alice')).toMatchObject({ available: '25.5', held: '0' });
  });

  it('an underpaid order stays PENDING_PAY, keeps what arrived, and a second payment completes it', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service, { uid: 'bob', amount: '10' });
    const first = await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '4' });
    expect(first).toMatchObject({ status: 'PENDING_PAY', paidAmount: '4', paidAt: null });
    expect(await service.balance('bob')).toMatchObject({ available: '4' });
    const second = await service.markPaid({ id: o.id, txHash: evmTx(2), amount: '6' });
    expect(second).toMatchObject({ status: 'PAID', paidAmount: '10', paidAt: T0 });
    expect(second.payments.map((p) => p.amount)).toEqual(['4', '6']);
    expect(await service.balance('bob')).toMatchObject({ available: '10' });
  });

  it('without an amount records what is still due; with nothing due it is refused and changes nothing', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service, { uid: 'dina', amount: '10' });
    await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '4' });
    expect(await service.markPaid({ id: o.id, txHash: evmTx(2) })).toMatchObject({ status: 'PAID', paidAmount: '10' });
    const before = counts(service.ledger);
    await refused(service.markPaid({ id: o.id, txHash: evmTx(3) }), 'invalid', `amount is required: order ${o.id} is PAID and nothing is due`);
    expect(counts(service.ledger)).toEqual(before);
    expect(await service.balance('dina')).toMatchObject({ available: '10' });
    // The CLI's default amount is what its question showed due: a payment recorded while the
    // question waited makes it refused, not credited on top (code review).
    const q = await order(service, { uid: 'dina', amount: '5' });
    await service.markPaid({ id: q.id, txHash: evmTx(5), amount: '5' });
    const asked = counts(service.ledger);
    await refused(service.markPaid({ id: q.id, txHash: evmTx(6), amount: '5', paidBefore: '0' }), 'conflict', `order ${q.id} was paid meanwhile (5 USDT so far, 0 when asked): nothing was changed`);
    expect(counts(service.ledger)).toEqual(asked);
    expect(await service.balance('dina')).toMatchObject({ available: '15' });
    // A TRON hash with one 0x is recorded in TRON's form.
    const t = await order(service, { uid: 'dina', amount: '1' });
    const paid = await service.markPaid({ id: t.id, txHash: `0x${tronTx(4)}`, chainId: TRON_CHAIN });
    expect(paid.payments.map((p) => p.txHash)).toEqual([tronTx(4)]);
  });

  it('without an amount: the rest of an expired order partly paid; nothing on a refunded or partly refunded one', async () => {
    const { service, clock } = h();
    await addTestMerchant(service);
    const expired = await order(service, { uid: 'eve', amount: '10' });
    await service.markPaid({ id: expired.id, txHash: evmTx(11), amount: '3' });
    clock.now = expired.expiredAt + 1;
    expect(await service.markPaid({ id: expired.id, txHash: evmTx(12) })).toMatchObject({ status: 'PAID', paidAmount: '10', late: true });
    const refundedAll = await order(service, { uid: 'eve', amount: '2' });
    await service.markPaid({ id: refundedAll.id, txHash: evmTx(13) });
    await service.refund({ id: refundedAll.id, amount: '2' });
    const partly = await order(service, { uid: 'eve', amount: '2' });
    await service.markPaid({ id: partly.id, txHash: evmTx(14) });
    await service.refund({ id: partly.id, amount: '1' });
    const before = counts(service.ledger);
    await refused(service.markPaid({ id: refundedAll.id, txHash: evmTx(15) }), 'invalid', `order ${refundedAll.id} is REFUNDED and nothing is due`);
    await refused(service.markPaid({ id: partly.id, txHash: evmTx(16) }), 'invalid', `order ${partly.id} is PAID and nothing is due`);
    expect(counts(service.ledger)).toEqual(before);
  });

  it('an overpaid order is PAID and the user is credited what arrived', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service, { uid: 'carol', amount: '10' });
    expect(await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '12.345' })).toMatchObject({ status: 'PAID', amount: '10', paidAmount: '12.345' });
    expect(await service.balance('carol')).toMatchObject({ available: '12.345' });
  });

  it('a payment after expiredAt still pays the order and credits the user, marked late', async () => {
    const { service, clock } = h();
    await addTestMerchant(service);
    const o = await order(service, { uid: 'dave', amount: '3' });
    clock.now = o.expiredAt + 1;
    expect(await service.getOrderStatus(o.id)).toBe('EXPIRED');
    const paid = await service.markPaid({ id: o.id, txHash: tronTx(1), chainType: 'TRON', chainId: TRON_CHAIN, token: USDT.TRON });
    expect(paid).toMatchObject({ status: 'PAID', late: true, paidAt: o.expiredAt + 1 });
    expect(paid.payments[0]).toMatchObject({ late: true, chainType: 'TRON', chainId: TRON_CHAIN, token: USDT.TRON });
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    expect(await service.balance('dave')).toMatchObject({ available: '3' });
  });

  it('a payment just at expiredAt is not late', async () => {
    const { service, clock } = h();
    await addTestMerchant(service);
    const o = await order(service);
    clock.now = o.expiredAt;
    expect(await service.markPaid({ id: o.id, txHash: evmTx(1) })).toMatchObject({ status: 'PAID', late: false });
  });

  it.each([
    ['the same hash', evmTx(7)],
    ['the same hash in upper case', `0x${evmTx(7).slice(2).toUpperCase()}`],
  ])('a transaction pays at most one order: %s is refused for another order', async (_, again) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const a = await order(service);
    const b = await order(service);
    await service.markPaid({ id: a.id, txHash: evmTx(7) });
    const before = { counts: counts(ledger), accounts: accountRows(ledger) };
    await refused(service.markPaid({ id: b.id, txHash: again }), 'conflict', `transaction ${evmTx(7)} is already recorded in this ledger`);
    await refused(service.markPaid({ id: a.id, txHash: again, amount: '1' }), 'conflict', 'is already recorded in this ledger');
    expect({ counts: counts(ledger), accounts: accountRows(ledger) }).toEqual(before);
    expect(await service.getOrderStatus(b.id)).toBe('PENDING_PAY');
  });

  it('stores a hash in lower case whatever case it came in', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service);
    const upper = `0x${'AB'.repeat(32)}`;
    expect((await service.markPaid({ id: o.id, txHash: upper })).payments[0]!.txHash).toBe(upper.toLowerCase());
  });

  it.each([
    ['too short', { txHash: '0x1234' }, 'tx-hash must be a transaction hash'],
    ['not hex', { txHash: `0x${'g'.repeat(64)}` }, 'tx-hash must be a transaction hash'],
    ['empty', { txHash: '' }, 'tx-hash is required'],
    ['TRON form on an EVM chain type', { txHash: tronTx(1), chainType: 'EVM' }, 'tx-hash must be a transaction hash: 0x and 64 hex digits'],
    // One 0x on a TRON hash is taken and dropped (decisions §6, as withdraw confirm does); not two.
    ['a TRON hash with 0x twice on a TRON chain type', { txHash: `0x${evmTx(1)}`, chainType: 'TRON' }, 'tx-hash must be a transaction hash: 64 hex digits'],
    ['a TRON hash with 0x twice on the TRON chain', { txHash: `0x${evmTx(1)}`, chainId: TRON_CHAIN }, 'tx-hash must be a transaction hash: 64 hex digits'],
    ['TRON form on Ethereum', { txHash: tronTx(1), chainId: '1' }, 'tx-hash must be a transaction hash: 0x and 64 hex digits'],
    ['an unknown chain type', { txHash: evmTx(1), chainType: 'SOL' }, 'chain-type must be EVM or TRON'],
    ['an unknown chain', { txHash: evmTx(1), chainId: '999' }, 'chainId 999 is not a chain this service knows'],
    ['a chain of the other type', { txHash: evmTx(1), chainType: 'TRON', chainId: '1' }, 'chain 1 is an EVM chain, not TRON'],
    ['a token unknown on the chain', { txHash: evmTx(1), chainId: '1', token: USDT.TRON }, 'is not a token this service knows on chain 1'],
    ['a token without a chain', { txHash: evmTx(1), token: USDT.ETH }, 'token needs chain-id'],
    ['a bad amount', { txHash: evmTx(1), amount: '1,5' }, 'amount must be a plain decimal'],
    ['a zero amount', { txHash: evmTx(1), amount: '0' }, 'amount must be positive'],
    ['too many decimals', { txHash: evmTx(1), amount: '0.0000001' }, 'amount has more than 6 decimal places'],
  ])('refuses %s', async (_, input, msg) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const o = await order(service);
    const before = { counts: counts(ledger), accounts: accountRows(ledger) };
    await refused(service.markPaid({ id: o.id, ...input }), 'invalid', msg);
    expect({ counts: counts(ledger), accounts: accountRows(ledger) }).toEqual(before);
    expect(await service.getOrderStatus(o.id)).toBe('PENDING_PAY');
  });

  it('refuses an unknown order', async () => {
    const { service } = h();
    await addTestMerchant(service);
    await refused(service.markPaid({ id: 'ord_missing', txHash: evmTx(1) }), 'not_found', 'Order not found');
  });
});
