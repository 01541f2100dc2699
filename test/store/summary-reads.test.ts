import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { addOtherMerchant, addTestMerchant, paidOrder, useHarness } from '../helpers/service.js';

/**
 * Runs `work` and returns how SQLite plans each statement it prepared that reads `table` (aliased
 * as `alias`): the lines of EXPLAIN QUERY PLAN that name it.
 */
async function plansOf(sqlite: Database.Database, table: string, alias: string, work: () => Promise<unknown>): Promise<string[][]> {
  const seen: string[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    if (new RegExp(`\\bfrom ${table} ${alias}\\b`).test(source)) seen.push(source);
    return prepare(source);
  }) as typeof sqlite.prepare;
  try {
    await work();
  } finally {
    sqlite.prepare = prepare;
  }
  return seen.map((source) => {
    const params = (source.match(/\?/g) ?? []).map(() => null);
    return (prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[])
      .map((r) => r.detail)
      .filter((d) => new RegExp(`\\b(${table}|${alias})\\b`).test(d));
  });
}

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
      const plans = await plansOf(ledger.sqlite, table, alias, () => service.summary({ mchId: b.mchId }));
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
});
