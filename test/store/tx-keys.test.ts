import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/store/db.js';
import type { Q } from '../../src/store/ledger.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { recordPayment, type PaymentRecord } from '../../src/store/payments.js';
import {
  T0, USDT, accountRows, addOtherMerchant, addShopMerchant, counts, evmTx, order, refused, tronTx, useHarness,
} from '../helpers/service.js';
import { useFixtureCopies } from '../helpers/fixtures.js';

/**
 * Issue #10 item 4: one transaction, one key. A hash is stored under a canonical key (32 bytes,
 * lower-case hex, no 0x) that is unique across payments and withdrawals.
 */
const H = 'ef'.repeat(32);
const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const recorded = (hash: string) => `transaction ${hash} is already recorded in this ledger`;

const state = (service: LocalPaymentService) => ({ counts: counts(service.ledger), accounts: accountRows(service.ledger) });

function chainPayment(orderId: string, txHash: string, logIndex: number, amount = 10_000_000n): PaymentRecord {
  return {
    orderId, txHash, logIndex, amount, rawAmount: String(amount), chainType: 'EVM', chainId: '1', token: USDT.ETH,
    blockNumber: 100, blockHash: `0x${'ab'.repeat(32)}`, source: 'chain',
  };
}

describe('one transaction, one key', () => {
  const h = useHarness();

  it('mark-paid P1 with 0xefef… then P2 with efef…: the second is refused and changes nothing', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const p1 = await order(service);
    const p2 = await order(service);
    await service.markPaid({ id: p1.id, txHash: `0x${H}` });
    const before = state(service);
    await refused(service.markPaid({ id: p2.id, txHash: H }), 'conflict', recorded(H));
    await refused(service.markPaid({ id: p2.id, txHash: `0x${H.toUpperCase()}` }), 'conflict', recorded(`0x${H}`));
    expect(state(service)).toEqual(before);
    expect(await service.getOrderStatus(p2.id)).toBe('PENDING_PAY');
  });

  it('a TRON hash and an EVM hash of the same 32 bytes are one transaction', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const a = await order(service);
    const b = await order(service);
    await service.markPaid({ id: a.id, txHash: tronTx(5), chainType: 'TRON' });
    await refused(service.markPaid({ id: b.id, txHash: `0x${tronTx(5)}`, chainType: 'EVM' }), 'conflict', 'is already recorded in this ledger');
  });

  it('a hash that paid an order never confirms a withdrawal, and the other way round', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const paid = await order(service, { amount: '10' });
    await service.markPaid({ id: paid.id, txHash: evmTx(1) });
    const w = await service.applyWithdrawal({ uid: 'u1', amount: '4', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH });
    const before = state(service);
    await refused(service.confirmWithdrawal({ logId: w.id, txHash: evmTx(1).toUpperCase().replace('0X', '0x'), blockNumber: 1 }), 'conflict', recorded(evmTx(1)));
    expect(state(service)).toEqual(before);
    expect((await service.getWithdrawal(w.id)).status).toBe('PENDING');

    await service.confirmWithdrawal({ logId: w.id, txHash: evmTx(2), blockNumber: 1 });
    const other = await order(service);
    const after = state(service);
    await refused(service.markPaid({ id: other.id, txHash: evmTx(2).slice(2) }), 'conflict', recorded(evmTx(2).slice(2)));
    expect(state(service)).toEqual(after);
  });

  it('the refusal never says which order, withdrawal or merchant used the hash', async () => {
    const { service } = h();
    const a = await addShopMerchant(service);
    const b = await addOtherMerchant(service);
    const mine = await order(service, { mchId: a.mchId });
    await service.markPaid({ id: mine.id, txHash: evmTx(3) });
    const theirs = await order(service, { mchId: b.mchId });
    const err = await refused(service.markPaid({ id: theirs.id, txHash: evmTx(3) }), 'conflict', recorded(evmTx(3)));
    expect(err.message).toBe(recorded(evmTx(3)));
    for (const secret of [mine.id, mine.oid, a.mchId]) expect(err.message).not.toContain(secret);
  });

  it('one transaction with two Transfer logs pays two orders; the same log twice, or by hand, is refused', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const a = await order(service);
    const b = await order(service);
    const c = await order(service);
    const at = { now: T0, actor: 'chain:1' };
    const write = (p: PaymentRecord) => ledger.db.transaction((tx) => recordPayment(tx as unknown as Q, p, at));
    write(chainPayment(a.id, evmTx(9), 0));
    write(chainPayment(b.id, evmTx(9), 1));
    expect(await service.getOrderStatus(a.id)).toBe('PAID');
    expect(await service.getOrderStatus(b.id)).toBe('PAID');
    const before = state(service);
    expect(() => write(chainPayment(c.id, evmTx(9), 1))).toThrow(recorded(evmTx(9)));
    await refused(service.markPaid({ id: c.id, txHash: evmTx(9) }), 'conflict', recorded(evmTx(9)));
    expect(state(service)).toEqual(before);
  });

  it('a hash recorded by hand is never counted again from the chain', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const a = await order(service);
    const b = await order(service);
    await service.markPaid({ id: a.id, txHash: evmTx(11) });
    const before = state(service);
    expect(() => ledger.db.transaction((tx) => recordPayment(tx as unknown as Q, chainPayment(b.id, evmTx(11), 0), { now: T0, actor: 'chain:1' })))
      .toThrow(recorded(evmTx(11)));
    expect(state(service)).toEqual(before);
  });
});

describe('a ledger written before transaction keys', () => {
  // Written by the previous release (schema 1): P1 paid with 0xefef…, P2 with efef…, and a
  // withdrawal confirmed with 0xefef…: one transaction used three times, and that release's
  // `ledger check` said every invariant holds.
  const oldLedger = useFixtureCopies('ledger-schema1-one-tx-three-times.db');

  it('opens, keeps every record, and ledger check names the transaction and its three uses', async () => {
    const ledger = openLedger(oldLedger());
    try {
      const service = new LocalPaymentService(ledger, { now: () => Date.now(), caller: { actor: 'tester' } });
      expect(counts(ledger)).toMatchObject({ payments: 2, withdrawals: 1 });
      // Migration 0006 (issue #12): a withdrawal confirmed before the chain was checked is marked so.
      const [w] = await service.listWithdrawals({});
      expect(await service.getWithdrawal(w!.id)).toMatchObject({
        status: 'CONFIRMED', txHash: `0x${H}`, verification: 'unverified', verificationNote: 'confirmed before on-chain verification existed',
      });
      const problems = await service.check();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(new RegExp(`^transaction ${H} is recorded 3 times: payment to order ord_[\\w-]+, payment to order ord_[\\w-]+, withdrawal wd_[\\w-]+$`));
      // And it can no longer be used a fourth time.
      const merchants = await service.listMerchants();
      const o = await service.createOrder({ mchId: merchants[0]!.mchId, oid: 'P3', uid: 'u1', amount: '1' });
      await refused(service.markPaid({ id: o.id, txHash: H }), 'conflict', recorded(H));
    } finally {
      ledger.close();
    }
  });
});

describe('a ledger written before whose-word scopes (migration 0013)', () => {
  // Written by the release before it (schema 12, a code review's): merchant M100001 confirmed a
  // payout unverified with a transaction, and M100002's unverified payout names the same one in
  // upper case (a duplicate from before migration 0001, whose one key row went to M100001).
  const oldLedger = useFixtureCopies('ledger-schema12-one-tx-two-merchants.db');
  const H = `0x${'abcdef'.padStart(64, '0')}`;

  it('gives each merchant its own hold of the transaction: both refuse it again with a 409, and the ledger check holds', async () => {
    const ledger = openLedger(oldLedger());
    try {
      const service = new LocalPaymentService(ledger, { now: () => Date.UTC(2025, 0, 16), caller: { actor: 'tester' } });
      expect(ledger.sqlite.prepare('select key, scope, use from tx_keys order by scope').all()).toEqual([
        { key: H.slice(2), scope: 'M100001', use: 'withdrawal' },
        { key: H.slice(2), scope: 'M100002', use: 'withdrawal' },
      ]);
      expect(await service.check()).toEqual([]);
      for (const mchId of ['M100001', 'M100002']) {
        await service.adjustBalance({ mchId, uid: 'u1', amount: '+1', reason: 'seed' });
        const w = await service.applyWithdrawal({ mchId, uid: 'u1', amount: '1', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 56, chainType: 'EVM', token: '0x55d398326f99059fF775485246999027B3197955' });
        await refused(service.confirmWithdrawal({ mchId, logId: w.id, txHash: H, blockNumber: 5 }), 'conflict', recorded(H));
      }
      // A third merchant's payment of that transaction is a fact nobody's word holds back.
      const m3 = (await service.listMerchants()).find((m) => m.mchId === 'M100003')!;
      const o = await service.createOrder({ mchId: m3.mchId, oid: 'p', uid: 'payer', amount: '1' });
      await service.markPaid({ id: o.id, txHash: H });
      expect(await service.check()).toEqual([]);
    } finally {
      ledger.close();
    }
  });
});
