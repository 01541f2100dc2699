import { describe, expect, it } from 'vitest';
import { EVM_TO, evmTx, paidOrder, SLOW, sandbox, USDT_ETH } from './_support.js';

/**
 * Found by a new-user trial (session 21): on a local ledger of two merchants, refund, withdraw
 * confirm|reject|verify and balance asked for --mch-id even for an id only one merchant has, and
 * the hint named the first merchant, whose "not found" then misled ("no order has the oid S-2",
 * which the other merchant had). An operator acts on the whole ledger: what names its merchant
 * (an id, an oid or a uid that one merchant has) acts for that merchant.
 */
describe('a local ledger of several merchants', { timeout: SLOW }, () => {
  async function twoMerchants() {
    const s = sandbox();
    const a = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Alpha', '--generate-wallet']);
    const b = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Beta', '--generate-wallet']);
    const asA = (args: string[]) => ['--mch-id', a.mchId, ...args];
    const asB = (args: string[]) => ['--mch-id', b.mchId, ...args];
    await s.json(asA(['order', 'create', '--oid', 'D-1', '--uid', 'dan', '--amount', '3']));
    const paid = await paidOrder({ ...s, json: (args, o) => s.json(asB(args), o) }, 'S-2', 'alice', '10');
    const w = await s.json<{ id: string }>(asB(['withdraw', 'apply', '--uid', 'alice', '--amount', '2', '--to', EVM_TO, '--chain-id', '1', '--token', USDT_ETH]));
    const w2 = await s.json<{ id: string }>(asB(['withdraw', 'apply', '--uid', 'alice', '--amount', '1', '--to', EVM_TO, '--chain-id', '1', '--token', USDT_ETH]));
    return { s, a: a.mchId, b: b.mchId, paid, w: w.id, w2: w2.id };
  }

  it('what one merchant holds acts for that merchant without --mch-id: refund by oid or id, withdraw reject and confirm, balance', async () => {
    const { s, b, paid, w, w2 } = await twoMerchants();
    const byOid = await s.json(['refund', '--oid', 'S-2', '--amount', '1', '--yes']);
    expect(byOid).toMatchObject({ id: paid, mchId: b, amount: '1' });
    expect(await s.json(['refund', '--id', paid, '--amount', '2', '--yes'])).toMatchObject({ id: paid, mchId: b, refundedAmount: '3' });
    expect(await s.json(['withdraw', 'reject', w, '--yes'])).toMatchObject({ id: w, status: 'REJECTED' });
    expect(await s.json(['withdraw', 'confirm', w2, '--tx-hash', evmTx(), '--block-number', '7', '--unverified', '--reason', 'paid by hand', '--yes'])).toMatchObject({ id: w2, status: 'CONFIRMED' });
    // 10 paid, 3 refunded, 1 paid out.
    expect(await s.json(['balance', 'alice'])).toMatchObject({ mchId: b, available: '6', held: '0' });
  });

  it('what several merchants hold, or nothing names, asks for --mch-id listing them all; another merchant\'s object names its owner; nothing changes', async () => {
    const { s, a, b, w } = await twoMerchants();
    await s.json(['--mch-id', a, 'order', 'create', '--oid', 'S-2', '--uid', 'alice', '--amount', '1']);
    const both = await s.run(['refund', '--oid', 'S-2', '--amount', '1', '--yes']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(new RegExp(`^error: oid S-2 names orders of 2 merchants \\(${a}: ord_\\S+, ${b}: ord_\\S+\\): pass --mch-id to say which\\n$`));
    const user = await s.run(['balance', 'alice']);
    expect(user.code).toBe(2);
    expect(user.stderr).toBe(`error: user alice is a user of 2 merchants (${a}, ${b}): pass --mch-id to say which\n`);
    const none = await s.run(['order', 'create', '--oid', 'N-1', '--uid', 'nat', '--amount', '1']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(`error: --mch-id is required: the ledger holds 2 merchants: ${a} (Alpha), ${b} (Beta); pass --mch-id ${a} or --mch-id ${b}, or set CRYPTOPAY_MCH_ID\n`);
    const wrong = await s.run(['--mch-id', a, 'withdraw', 'reject', w, '--yes']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(`error: withdrawal not found: withdrawal ${w} is merchant ${b}'s, not ${a}'s: pass --mch-id ${b}\n`);
    const wrongOrder = await s.run(['--mch-id', a, 'refund', '--oid', 'D-9', '--amount', '1', '--yes']);
    expect(wrongOrder.code).toBe(1);
    expect(await s.json(['withdraw', 'show', w])).toMatchObject({ status: 'PENDING' });
    expect(await s.json(['--mch-id', b, 'balance', 'alice'])).toMatchObject({ available: '7', held: '3' });
  });
});
