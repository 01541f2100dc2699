/** Reads a merchant or a stranger can ask for, bounded by what the asker owns or is shown (session 24's attacker review). */
import { describe, expect, it } from 'vitest';
import { plansOf } from '../helpers/query-plans.js';
import { addOtherMerchant, addTestMerchant, paidOrder, useHarness } from '../helpers/service.js';

// Session 24's attacker review: a merchant's summary found the period's payments and refunds by
// time over every merchant, then kept its own (unary + on the order's merchant). A merchant with no
// orders at all, calling summary in a loop, held serve's event loop 320 ms a call on a ledger with
// 200,000 payments of another merchant this week.
describe("a merchant's summary reads that merchant's payments and refunds of the period, no other's", () => {
  const h = useHarness();

  it('searches payments and refunds by (merchant, time); the totals are each merchant\'s own', async () => {
    const { service, ledger } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    for (let i = 0; i < 3; i++) await paidOrder(service, { mchId: a.mchId, amount: '10' });
    const refunded = await paidOrder(service, { mchId: a.mchId, amount: '4' });
    await service.refund({ mchId: a.mchId, id: refunded.id, amount: '1.5' });
    await paidOrder(service, { mchId: b.mchId, amount: '7' });

    for (const [table, alias] of [['payments', 'p'], ['refunds', 'r']] as const) {
      const plans = await plansOf(ledger.sqlite, new RegExp(`\\bfrom ${table} ${alias}\\b`), new RegExp(`\\b(${table}|${alias})\\b`), () => service.summary({ mchId: b.mchId }));
      // Today and this week.
      expect(plans).toHaveLength(2);
      for (const plan of plans) expect(plan).toEqual([`SEARCH ${alias} USING INDEX ${table}_merchant_created (merchant_id=? AND created_at>?)`]);
    }
    const mine = await service.summary({ mchId: b.mchId });
    expect([mine.week.payments, mine.week.refunds]).toEqual([{ count: 1, total: { USDT: '7' } }, { count: 0, total: {} }]);
    const theirs = await service.summary({ mchId: a.mchId });
    expect([theirs.week.payments, theirs.week.refunds]).toEqual([{ count: 4, total: { USDT: '34' } }, { count: 1, total: { USDT: '1.5' } }]);
    const all = await service.summary();
    expect([all.week.payments, all.week.refunds]).toEqual([{ count: 5, total: { USDT: '41' } }, { count: 1, total: { USDT: '1.5' } }]);
  });

  // The period's balance adjustments (0020): their own partial index, never every transfer of the
  // ledger (each payment, refund and withdrawal is one).
  it("reads the period's adjustments from their own index, of the merchant or of all", async () => {
    const { service, ledger } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    for (let i = 0; i < 3; i++) await paidOrder(service, { mchId: a.mchId, amount: '10' });
    await service.adjustBalance({ mchId: a.mchId, uid: 'u1', amount: '-2', reason: 'fee' });
    await service.adjustBalance({ mchId: b.mchId, uid: 'u9', amount: '+4', reason: 'goodwill' });
    for (const mchId of [b.mchId, undefined]) {
      const plans = await plansOf(ledger.sqlite, /\bfrom transfers t\b/, /\b(transfers|t)\b/, () => service.summary({ mchId }));
      expect(plans).toHaveLength(2);
      // A merchant's: its own rows of the index. The whole ledger's: the index of adjustments alone.
      const want = mchId ? /^SEARCH t USING INDEX transfers_adjustments \(merchant_id=\? AND created_at>\?\)$/ : /^(SCAN t USING INDEX transfers_adjustments|SEARCH t USING INDEX transfers_adjustments \(ANY\(merchant_id\) AND created_at>\?\))$/;
      for (const plan of plans) expect(plan).toEqual([expect.stringMatching(want)]);
    }
    expect((await service.summary({ mchId: b.mchId })).week.adjustments).toEqual({ count: 1, credited: { USDT: '4' }, debited: {} });
    expect((await service.summary({ mchId: a.mchId })).week.adjustments).toEqual({ count: 1, credited: {}, debited: { USDT: '2' } });
    expect((await service.summary()).week.adjustments).toEqual({ count: 2, credited: { USDT: '4' }, debited: { USDT: '2' } });
  });

  // A review (session 24): a process of the release before 0019, still running on the file, writes
  // payments and refunds without merchant_id; they must not drop out of the merchant's summary.
  it('a payment or refund written without its merchant (by an earlier release) is given it by the ledger', async () => {
    const { service, ledger } = h();
    const b = await addOtherMerchant(service);
    const o = await paidOrder(service, { mchId: b.mchId, amount: '3' });
    await service.refund({ mchId: b.mchId, id: o.id, amount: '1' });
    const before = await service.summary({ mchId: b.mchId });
    ledger.sqlite.exec(`insert into payments (order_id, tx_hash, tx_key, amount, source, transfer_id, created_at)
      select order_id, tx_hash || 'x', tx_key || 'x', amount, source, transfer_id, created_at from payments where order_id = '${o.id}';
      insert into refunds (id, order_id, amount, transfer_id, created_at) select id || 'x', order_id, amount, transfer_id, created_at from refunds where order_id = '${o.id}'`);
    expect(Number(ledger.sqlite.prepare('select count(*) from payments where merchant_id is null').pluck().get())).toBe(0);
    expect(Number(ledger.sqlite.prepare('select count(*) from refunds where merchant_id is null').pluck().get())).toBe(0);
    const after = await service.summary({ mchId: b.mchId });
    expect([after.week.payments.count, after.week.refunds.count]).toEqual([before.week.payments.count + 1, before.week.refunds.count + 1]);
    // The copies are not the ledger's own making: taken out again, so the ledger check after the test holds.
    ledger.sqlite.exec("delete from payments where tx_key like '%x'; delete from refunds where id like '%x'");
  });
});

// Session 24's attacker review: every order an address paid (an exchange's hot wallet pays a busy
// merchant's orders all day) was collected and read back in one statement: 40,000 of them failed
// with "too many SQL variables" (HTTP 500), 30,000 held serve's event loop 500-760 ms a find.
describe('order find by a payer\'s address reads at most the page it answers', () => {
  const h = useHarness();

  it('40,000 orders paid from one address: the newest two, and that there are more', async () => {
    const { service, ledger } = h();
    const a = await addTestMerchant(service);
    const first = await paidOrder(service, { mchId: a.mchId, amount: '1' });
    const payer = '0x28C6c06298d514Db089934071355E5743bf21d60';
    const n = 40_000;
    ledger.sqlite.exec(`
      create temp table seq as with recursive s(i) as (select 1 union all select i + 1 from s where i < ${n}) select i from s;
      insert into orders (id, merchant_id, oid, uid, amount, asset, status, expired_at, created_at, paid_amount, refunded_amount, late)
        select 'ord_copy' || i, merchant_id, 'copy-' || i, uid, amount, asset, 'PENDING_PAY', expired_at, created_at + i, 0, 0, 0 from orders, seq where id = '${first.id}';
      insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, order_id, token, to_address, raw_amount, amount, status, seen_at, from_address)
        select '1', printf('0x%064x', i), 0, i, printf('0x%064x', i), 'ord_copy' || i, '0xdac17f958d2ee523a2206206994597c13d831ec7', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', '1000000', 1000000, 'refused', 1000 + i, '${payer}' from seq;
      drop table seq;
    `);
    const found = await service.findOrders(payer.toLowerCase(), { mchId: a.mchId, limit: 2 });
    expect(found.orders.map((o) => [o.id, o.matchedBy])).toEqual([[`ord_copy${n}`, ['payer']], [`ord_copy${n - 1}`, ['payer']]]);
    expect(found.more).toBe(true);
    // The rows are not the ledger's own making: put back as they were, so the ledger check after the test holds.
    ledger.sqlite.exec("delete from chain_payments where order_id like 'ord_copy%'; delete from orders where id like 'ord_copy%'");
  });
});
