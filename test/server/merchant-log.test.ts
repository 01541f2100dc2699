import { afterEach, describe, expect, it } from 'vitest';
import { EVM_TO, USDT_ETH, expectOk, expectRefused, startServer, type Merchant, type TestServer } from './helpers.js';

/**
 * What a merchant reads of the audit log over HTTP tells it nothing of other merchants (decisions
 * §1, §12). An outside review (session 20) polled POST /api/v1/log/follow as merchant B: its mark,
 * the number of the newest entry of the whole ledger, went up each time merchant A was paid, and
 * the gaps between B's own entries' numbers counted A's activity; the entries the operator made
 * named the server's login account as their actor.
 */
let s: TestServer;
afterEach(async () => {
  expect(await s.service.check()).toEqual([]);
  await s.close();
});

type Entry = { id: number; actor: string; action: string };
const follow = async (m: Merchant, after?: number) =>
  expectOk(await s.post('/api/v1/log/follow', s.signed(m, { op: 'log/follow', ...(after === undefined ? {} : { after }) }))) as { entries: Entry[]; mark: number };
const log = async (m: Merchant, extra: Record<string, unknown> = {}) => expectOk(await s.post('/api/v1/log', s.signed(m, { op: 'log', ...extra }))) as Entry[];

describe("a merchant's log", () => {
  it("is numbered on its own, 1, 2, 3 ...: its mark and its numbers do not move with another merchant's activity", async () => {
    s = await startServer();
    const a = await s.addMerchant({ name: 'A' });
    const b = await s.addMerchant({ name: 'B' });
    await s.paidOrder(b, '1');
    const first = await follow(b);
    // B's own entries, numbered from 1 without gaps: merchant.created, order.payment_recorded.
    expect(first.entries.map((e) => e.id)).toEqual([1, 2]);
    expect(first.mark).toBe(2);

    // A is busy: B's answers do not change.
    for (let i = 0; i < 5; i++) await s.paidOrder(a, '2');
    expect(await follow(b, first.mark)).toEqual({ entries: [], mark: 2 });
    expect(await follow(b)).toEqual(first);

    // B's next entry is number 3, whatever A did meanwhile; its page cursor is its own number.
    await s.paidOrder(b, '3');
    const next = await follow(b, first.mark);
    expect(next.entries.map((e) => [e.id, e.action])).toEqual([[3, 'order.payment_recorded']]);
    expect(next.mark).toBe(3);
    expect((await log(b)).map((e) => e.id)).toEqual([3, 2, 1]);
    const page = expectOk(await s.post('/api/v1/log', s.signed(b, { op: 'log', page: true, limit: 2 }))) as { items: Entry[]; next: string | null };
    expect(page.items.map((e) => e.id)).toEqual([3, 2]);
    expect(page.next).toBe('2');
    const rest = expectOk(await s.post('/api/v1/log', s.signed(b, { op: 'log', page: true, limit: 2, cursor: page.next }))) as { items: Entry[]; next: string | null };
    expect(rest.items.map((e) => e.id)).toEqual([1]);
    // A mark or cursor past the merchant's newest entry (one kept from before migration 0014,
    // when numbers counted the whole ledger) is refused, not answered "nothing new" (code review).
    expectRefused(await s.post('/api/v1/log/follow', s.signed(b, { op: 'log/follow', after: 9 })), 400, 'after 9 is past the newest entry of this log (3): a mark is the number of an entry, and since migration 0014 a merchant\'s entries are numbered on their own; ask without after to start again');
    expectRefused(await s.post('/api/v1/log', s.signed(b, { op: 'log', page: true, cursor: '9' })), 400, 'cursor 9 is not an entry of this ledger: pass the id the previous page named');
    // A's own log is numbered on its own too: 1 (created) ... 6.
    expect((await log(a)).map((e) => e.id)).toEqual([6, 5, 4, 3, 2, 1]);
    // The operator still reads the whole log in the ledger's own numbers: 9 entries.
    expect((await s.service.log({})).map((e) => e.id)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it("shows an operator's entries as the operator's, not as the server's login account", async () => {
    s = await startServer();
    const b = await s.addMerchant({ name: 'B' });
    await s.paidOrder(b, '1');
    expectOk(await s.post('/api/v1/refund', s.signed(b, { id: (await s.paidOrder(b, '2')).id, amount: '1' })));
    const actors = (await log(b)).map((e) => [e.action, e.actor]);
    expect(actors).toEqual([
      ['order.refunded', `api:${b.mchId}`],
      ['order.payment_recorded', 'operator'],
      ['order.payment_recorded', 'operator'],
      ['merchant.created', 'operator'],
    ]);
    expect((await follow(b)).entries.map((e) => e.actor)).toEqual(['operator', 'operator', 'operator', `api:${b.mchId}`]);
    // The operator's own reading keeps the name (here the test's caller).
    expect((await s.service.log({ mchId: b.mchId })).map((e) => e.actor)).toContain('test');

    // Nor in the note of a withdrawal an operator confirmed without the chain (code review).
    await s.credit(b, 'u1', '+5');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(b, { uid: 'u1', amount: '2', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }))) as { id: string };
    await s.service.confirmWithdrawalUnverified({ mchId: b.mchId, logId: w.id, txHash: `0x${'5e'.repeat(32)}`, blockNumber: 7 }, 'paid from the cold wallet');
    const shown = expectOk(await s.post('/api/v1/withdraw/show', s.signed(b, { op: 'withdraw/show', id: w.id }))) as { verificationNote: string };
    expect(shown.verificationNote).toBe('confirmed without verification by an operator: paid from the cold wallet');
    const entries = JSON.stringify(await log(b, { withdrawalId: w.id }));
    expect(entries).toContain('paid from the cold wallet');
    expect(entries).not.toMatch(/\btest\b/);
  });
});
