import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { MINUTE, T0, USDT, addOtherMerchant, addShopMerchant, evmTx, order, paidOrder, refused, useHarness } from '../helpers/service.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { useFixtureCopies } from '../helpers/fixtures.js';

const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const apply = (service: LocalPaymentService) =>
  service.applyWithdrawal({ uid: 'u1', amount: '1', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH });

/**
 * Each operation, what it needs prepared, and the one entry it must add: its action and subject.
 * The preparation runs at T0, the operation one minute later, so its entries stand apart.
 */
type Prepared = { id: string };
const OPERATIONS: [string, (s: LocalPaymentService) => Promise<Prepared>, (s: LocalPaymentService, p: Prepared, mchId: string) => Promise<string>][] = [
  ['merchant.secret_rotated', async () => ({ id: '' }), async (s, _, mchId) => (await s.rotateSecret(mchId), `merchant:${mchId}`)],
  ['order.payment_recorded', async (s) => order(s), async (s, o) => (await s.markPaid({ id: o.id, txHash: evmTx(1) }), `order:${o.id}`)],
  ['order.refunded', async (s) => paidOrder(s), async (s, o) => (await s.refund({ id: o.id, amount: '1' }), `order:${o.id}`)],
  ['withdrawal.applied', async () => ({ id: '' }), async (s) => `withdrawal:${(await apply(s)).id}`],
  ['withdrawal.confirmed', apply, async (s, w) => (await s.confirmWithdrawal({ logId: w.id, txHash: evmTx(2), blockNumber: 1 }), `withdrawal:${w.id}`)],
  ['withdrawal.rejected', apply, async (s, w) => (await s.rejectWithdrawal({ id: w.id, remark: 'no' }), `withdrawal:${w.id}`)],
  ['balance.adjusted', async () => ({ id: '' }), async (s) => (await s.adjustBalance({ uid: 'bob', amount: '-1', reason: 'fee' }), 'balance:bob')],
];

describe('audit log', () => {
  const h = useHarness();

  it('records the merchant’s creation', async () => {
    const { service } = h();
    const { mchId } = await addShopMerchant(service);
    expect(await service.log({})).toEqual([
      { id: expect.any(Number), at: T0, actor: 'tester', action: 'merchant.created', mchId, subject: `merchant:${mchId}`, detail: expect.objectContaining({ name: 'Shop' }) },
    ]);
  });

  it.each(OPERATIONS)('%s writes one entry naming the actor and the subject', async (action, prepare, run) => {
    const { service, clock } = h();
    const { mchId } = await addShopMerchant(service);
    await service.adjustBalance({ uid: 'u1', amount: '5', reason: 'seed' });
    await service.adjustBalance({ uid: 'bob', amount: '5', reason: 'seed' });
    const prepared = await prepare(service);
    clock.now = T0 + MINUTE;
    const subject = await run(service, prepared, mchId);
    const entries = (await service.log({ limit: 1000 })).filter((e) => e.at === T0 + MINUTE);
    expect(entries).toEqual([expect.objectContaining({ actor: 'tester', action, mchId, subject })]);
  });

  it('a refused operation writes no entry', async () => {
    const { service } = h();
    const { mchId } = await addShopMerchant(service);
    const unpaid = await order(service);
    const paid = await paidOrder(service, {}, evmTx(1));
    const w = await apply(service);
    await service.rejectWithdrawal({ id: w.id });
    const before = await service.log({ limit: 1000 });
    await refused(service.refund({ id: unpaid.id, amount: '1' }), 'conflict', 'order status is not Paid');
    await refused(service.refund({ id: paid.id, amount: '11' }), 'invalid', 'above the original payment');
    await refused(service.markPaid({ id: unpaid.id, txHash: evmTx(1) }), 'conflict', 'is already recorded in this ledger');
    await refused(service.applyWithdrawal({ uid: 'u1', amount: '100', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH }), 'conflict', 'insufficient balance');
    await refused(service.rejectWithdrawal({ id: w.id }), 'conflict', 'not PENDING');
    await refused(service.adjustBalance({ uid: 'u1', amount: '-100', reason: 'r' }), 'conflict', 'insufficient balance');
    await refused(service.rotateSecret('M1'), 'not_found', 'merchant M1 not found');
    await refused(service.addMerchant({ name: 'Dup', evmXpub: (await service.showMerchant(mchId)).evmXpub! }), 'conflict', 'already the wallet');
    expect(await service.log({ limit: 1000 })).toEqual(before);
  });

  it('names the caller as the actor', async () => {
    const { service } = h();
    const { mchId } = await addShopMerchant(service);
    await service.as({ actor: `api:${mchId}` }).adjustBalance({ uid: 'u1', amount: '1', reason: 'r' });
    expect((await service.log({ limit: 1 }))[0]).toMatchObject({ actor: `api:${mchId}`, action: 'balance.adjusted' });
  });

  it('filters by order', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const a = await paidOrder(service);
    const b = await paidOrder(service);
    await service.refund({ id: a.id, amount: '2' });
    await service.refund({ id: b.id, amount: '3' });
    const forA = await service.log({ orderId: a.id });
    expect(forA.map((e) => [e.action, e.subject])).toEqual([
      ['order.refunded', `order:${a.id}`],
      ['order.payment_recorded', `order:${a.id}`],
    ]);
    expect(forA[0]!.detail).toMatchObject({ amount: '2', refundedTotal: '2', statusAfter: 'PAID' });
    expect(await service.log({ orderId: 'ord_none' })).toEqual([]);
  });

  it('followLog: the newest entries, then from each mark only what is new, in order, at most 500 an answer, missing none', async () => {
    const { service } = h();
    const { mchId } = await addShopMerchant(service);
    const other = await addOtherMerchant(service);
    const first = await service.followLog({ mchId, limit: 3 });
    expect(first.entries.map((e) => e.action)).toEqual(['merchant.created']);
    // 1,200 entries, one in three of the other merchant's.
    for (let i = 0; i < 1200; i++) await service.adjustBalance({ uid: `u${i}`, amount: '1', reason: 'seed', mchId: i % 3 === 2 ? other.mchId : mchId });
    const seen: number[] = [];
    let mark = first.mark;
    let asks = 0;
    for (;;) {
      const next = await service.followLog({ mchId, after: mark });
      asks++;
      expect(next.entries.length).toBeLessThanOrEqual(500);
      expect(next.entries.every((e) => e.mchId === mchId)).toBe(true);
      seen.push(...next.entries.map((e) => e.id));
      if (next.mark === mark) break;
      mark = next.mark;
    }
    expect(seen).toHaveLength(800);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(800);
    // 500, then the other 300, then nothing new.
    expect(asks).toBe(3);
    // Nothing new: the same mark, nothing answered; one more entry: exactly it.
    expect(await service.followLog({ mchId, after: mark })).toEqual({ entries: [], mark });
    await service.adjustBalance({ uid: 'late', amount: '1', reason: 'seed', mchId });
    const late = await service.followLog({ mchId, after: mark });
    expect(late.entries.map((e) => e.subject)).toEqual(['balance:late']);
    expect(late.mark).toBe(late.entries[0]!.id);
    // Without a mark: the newest `limit`, oldest first.
    expect((await service.followLog({ mchId, limit: 2 })).entries.map((e) => e.subject)).toEqual(['balance:u1198', 'balance:late']);
  });
});

describe('a ledger written before merchants had logs of their own (migration 0014)', () => {
  const oldLedger = useFixtureCopies('ledger-schema12-one-tx-two-merchants.db');

  it("numbers each merchant's entries 1, 2, 3 ... in the order they were written, and goes on from there", async () => {
    const file = oldLedger();
    // An entry of no merchant (the ledger's own) stays unnumbered.
    const raw = new Database(file);
    raw.prepare("insert into audit_log (at, actor, action, merchant_id, subject_type, subject_id, detail) values (1, 'ledger', 'registry.recorded', null, 'chain', '1', '{}')").run();
    raw.close();
    const ledger = openLedger(file);
    try {
      const rows = (ledger.sqlite.prepare('select id, merchant_id as m, merchant_seq as n from audit_log order by id').all() as { id: bigint; m: string | null; n: bigint | null }[])
        .map((r) => ({ m: r.m, n: r.n === null ? null : Number(r.n) }));
      const merchants = [...new Set(rows.filter((r) => r.m !== null).map((r) => r.m!))];
      expect(merchants.length).toBeGreaterThanOrEqual(2);
      // Interleaved in the whole log, numbered without gaps within each merchant.
      for (const m of merchants) expect(rows.filter((r) => r.m === m).map((r) => r.n)).toEqual(rows.filter((r) => r.m === m).map((_, i) => i + 1));
      expect(rows.filter((r) => r.m === null).map((r) => r.n)).toEqual([null]);
      const service = new LocalPaymentService(ledger, { now: () => Date.UTC(2025, 0, 16), caller: { actor: 'tester' } });
      const m = merchants[0]!;
      const had = rows.filter((r) => r.m === m).length;
      await service.adjustBalance({ mchId: m, uid: 'u9', amount: '+1', reason: 'seed' });
      expect((await service.log({ mchId: m, limit: 1 }))[0]).toMatchObject({ id: had + 1, action: 'balance.adjusted' });
      expect(await service.check()).toEqual([]);
      // The check says so when the numbering is gone (a later rebuild of the table that lost it).
      ledger.sqlite.exec('drop trigger audit_merchant_seq');
      await service.adjustBalance({ mchId: m, uid: 'u9', amount: '+1', reason: 'seed' });
      expect(await service.check()).toEqual([
        "the audit log has no trigger numbering each merchant's entries (audit_merchant_seq): its entries go unnumbered",
        '1 audit entries of a merchant have no number in its log (merchant_seq)',
      ]);
    } finally {
      ledger.close();
    }
  });
});

describe('log --follow with another process committing', () => {
  const h = useHarness();

  // A code review: without `after`, the mark and the newest entries were two reads; an entry
  // another process committed between them came back in this answer and again after the mark.
  it('answers an entry committed between the mark and the read once, with the next ask', async () => {
    const { service, ledger } = h();
    const { mchId } = await addShopMerchant(service);
    const other = new Database(ledger.path);
    try {
      // The moment the mark is read, a CLI elsewhere commits an entry of this merchant.
      const prepare = ledger.sqlite.prepare.bind(ledger.sqlite);
      let armed = true;
      ledger.sqlite.prepare = ((source: string) => {
        const st = prepare(source);
        if (!/coalesce\(max\(/.test(source)) return st;
        const get = st.get.bind(st);
        st.get = ((...a: unknown[]) => {
          const r = get(...(a as []));
          if (armed) {
            armed = false;
            other.prepare("insert into audit_log (at, actor, action, merchant_id, subject_type, subject_id, detail) values (1, 'cli', 'balance.adjusted', ?, 'balance', 'u', '{}')").run(mchId);
          }
          return r;
        }) as typeof st.get;
        return st;
      }) as typeof ledger.sqlite.prepare;
      const first = await service.followLog({ mchId, limit: 10 });
      expect(armed).toBe(false);
      const next = await service.followLog({ mchId, after: first.mark });
      const ids = [...first.entries, ...next.entries].map((e) => e.id);
      expect(ids).toEqual([1, 2]);
      expect(next.entries.map((e) => e.action)).toEqual(['balance.adjusted']);
    } finally {
      other.close();
    }
  });
});
