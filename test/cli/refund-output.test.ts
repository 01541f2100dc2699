/**
 * Issue #15 item 3, "Refunds that read right": a refund names its own id and the order as it
 * stands after it (never "status REFUNDED" under the order id while the order is PAID); --rest
 * refunds what remains; the questions before a change show each balance before -> after, every
 * amount with its asset.
 */
import { describe, expect, it } from 'vitest';
import { balanceOf, EVM_TO, HAS_SCRIPT, paidOrder, runPty, SLOW, USDT_ETH, withMerchant } from './_support.js';

describe.concurrent('refunds that read right (#15 item 3)', { timeout: SLOW }, () => {
  it('a partial refund prints its own id, the order still PAID, paid and refunded so far; --json carries them too', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'R-1', 'u1', '12.5');
    const part = await s.run(['refund', '--oid', 'R-1', '--amount', '2.5', '--remark', 'damaged', '--yes']);
    expect(part.code).toBe(0);
    const refundId = /^refund\s+(rf_\S+)$/m.exec(part.stdout)?.[1];
    expect(refundId).toBeDefined();
    expect(part.stdout.replace(refundId!, '<rf>').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '<time>')).toBe(
      [
        'refund        <rf>',
        `order         ${id} (oid R-1)`,
        'amount        2.5 USDT',
        'order status  PAID',
        'paid          12.5 USDT',
        'refunded      2.5 USDT (10 USDT left to refund)',
        'remark        damaged',
        'time          <time>',
        'on chain      nothing sent: a refund is an entry in the ledger; the merchant pays the customer back',
        '',
      ].join('\n'),
    );
    expect(part.stdout).not.toMatch(/REFUNDED/);

    const second = await s.json(['refund', '--id', id, '--amount', '4', '--yes']);
    expect(second).toEqual({
      refundId: expect.stringMatching(/^rf_/), mchId: s.mchId, id, oid: 'R-1', amount: '4', asset: 'USDT', status: 'REFUNDED', remark: '',
      refundTime: expect.any(Number), orderStatus: 'PAID', paidAmount: '12.5', refundedAmount: '6.5',
    });
    // The ids printed are the ones the ledger keeps.
    const listed = (await s.json<{ refundId: string }[]>(['refund', 'list', '--order', id])).map((r) => r.refundId);
    expect(listed).toEqual([second.refundId, refundId]);
  });

  // New-user trials: the same refund run twice (the shell's up-arrow) refunded twice, nothing said
  // (session 23); then, with a note after the fact, run three times with --yes (session 24).
  it('a refund of the same amount on the same order within 10 minutes is refused without a terminal unless --repeat, and asked about on one; nothing changes when refused', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'RR-1', 'u1', '10');
    const first = await s.run(['refund', '--oid', 'RR-1', '--amount', '2', '--yes']);
    const other = await s.run(['refund', '--oid', 'RR-1', '--amount', '3', '--yes', '--json']);
    expect([first.code, first.stderr, other.code, other.stderr]).toEqual([0, '', 0, '']);
    const idOf = (out: string) => /^refund\s+(rf_\S+)$/m.exec(out)![1]!;
    for (const again of [
      await s.run(['refund', '--oid', 'RR-1', '--amount', '2', '--yes']),
      await s.run(['refund', '--id', id, '--amount', '2.00', '--yes', '--json']),
    ]) {
      expect(again.code).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(new RegExp(`refund ${idOf(first.stdout)} of the same 2 USDT was made on order ${id} \\d+ s ago: this one looks like a repeat, so nothing was done \\(a refund is final\\); if a second refund of 2 USDT is meant, run it again with --repeat`));
    }
    expect(await balanceOf(s, 'u1')).toEqual({ available: '5', held: '0' });
    expect(await s.json(['order', 'show', id])).toMatchObject({ refundedAmount: '5' });
    // On a terminal the question says so before the money moves, and a no changes nothing.
    if (HAS_SCRIPT) {
      const tty = await runPty(['--db', s.db, 'refund', '--oid', 'RR-1', '--amount', '2.0'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] });
      expect(tty.text).toMatch(new RegExp(`REPEAT\\?\\s+refund ${idOf(first.stdout)} of the same 2 USDT was made\\s+\\d+ s ago: a refund is final`));
      expect(await s.json(['order', 'show', id])).toMatchObject({ refundedAmount: '5' });
    }
    // Meant: --repeat.
    const meant = await s.run(['refund', '--oid', 'RR-1', '--amount', '2', '--repeat', '--yes']);
    expect([meant.code, meant.stderr]).toEqual([0, '']);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '3', held: '0' });
    expect(await s.json(['order', 'show', id])).toMatchObject({ refundedAmount: '7' });
    // --rest is never a repeat, even when the rest equals a refund just made (a review: half, then the rest).
    const half = await paidOrder(s, 'RR-2', 'u2', '10');
    expect((await s.run(['refund', '--id', half, '--amount', '5', '--yes'])).code).toBe(0);
    const rest = await s.run(['refund', '--id', half, '--rest', '--yes']);
    expect([rest.code, rest.stderr]).toEqual([0, '']);
    expect(await s.json(['order', 'show', half])).toMatchObject({ status: 'REFUNDED', refundedAmount: '10' });
  });

  // An operator trial: refunds of 10 and up ran twice with --yes, 9 and below were caught. The
  // amounts were compared as 18-place amounts, whose bound (the ledger's 2^63 - 1 base units) is
  // 9.22 of them: anything above failed to parse, and so never matched.
  it('the repeat check catches a refund of any size, 10 and 1000 as well as 2', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'RB-1', 'u1', '5000');
    for (const amount of ['10', '1000', '9.5']) {
      const first = await s.run(['refund', '--oid', 'RB-1', '--amount', amount, '--yes']);
      expect([first.code, first.stderr]).toEqual([0, '']);
      const again = await s.run(['refund', '--oid', 'RB-1', '--amount', amount, '--yes']);
      expect(again.code, amount).toBe(1);
      expect(again.stderr).toMatch(new RegExp(`of the same ${amount.replace('.', '\\.')} USDT was made on order ${id} \\d+ s ago: this one looks like a repeat, so nothing was done`));
    }
    expect(await s.json(['order', 'show', id])).toMatchObject({ refundedAmount: '1019.5' });
  });

  // An operator trial ran `refund --oid C-1 --amount 2 --yes &` twice: both looked for a repeat
  // before either had written, and both refunded. The look is made again in the refund's own
  // transaction (on a local ledger), so copies running at once refund once.
  it('copies of one refund run at the same moment with --yes refund once; the others are refused as repeats', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'RC-1', 'u1', '50');
    const runs = await Promise.all(Array.from({ length: 4 }, () => s.run(['refund', '--oid', 'RC-1', '--amount', '2', '--yes'])));
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1, 1, 1]);
    for (const r of runs.filter((x) => x.code === 1)) expect(r.stderr).toMatch(/of the same 2 USDT was made on order \S+ \d+ s ago: this one looks like a repeat, so nothing was done \(a refund is final\); if a second refund of 2 USDT is meant, run it again with --repeat\n$/);
    expect(await s.json(['order', 'show', id])).toMatchObject({ refundedAmount: '2' });
    expect(await balanceOf(s, 'u1')).toEqual({ available: '48', held: '0' });
  });

  it('an oid given as --id, or an oid nobody has, is refused with what to type instead; --json keeps the interface\'s "Order not found"', async () => {
    // Found by a support walkthrough: `refund --id A-1` said only "Order not found".
    const s = await withMerchant();
    const id = await paidOrder(s, 'RID-1', 'u1', '5');
    const asId = await s.run(['refund', '--id', 'RID-1', '--amount', '1', '--yes']);
    expect(asId).toMatchObject({ code: 1, stdout: '' });
    expect(asId.stderr).toBe(`error: Order not found: RID-1 is not an order id but the oid of order ${id}: give it as --oid RID-1\n`);
    const nobody = await s.run(['refund', '--oid', 'NOPE-9', '--amount', '1', '--yes']);
    expect(nobody).toMatchObject({ code: 1, stdout: '' });
    expect(nobody.stderr).toBe('error: Order not found: no order has the oid NOPE-9 (cryptopay order find NOPE-9 also searches uids, transaction hashes and deposit addresses)\n');
    const json = await s.run(['--json', 'refund', '--id', 'RID-1', '--amount', '1', '--yes']);
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'not_found', message: 'Order not found' } });
    expect(await balanceOf(s, 'u1')).toEqual({ available: '5', held: '0' });
  });

  // A new-user trial: 49.5 of 50 arrived (an exchange's fee), the order expired, and the refusal
  // ("order status is not Paid") did not say where the money was or how it goes back.
  it('a refusal of an order not Paid that was partly paid says where that money is and how it goes back; --json keeps the interface\'s words', async () => {
    const s = await withMerchant();
    const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'PART-1', '--uid', 'hank', '--amount', '50']);
    await s.json(['order', 'mark-paid', o.id, '--tx-hash', `0x${'4a'.repeat(32)}`, '--amount', '49.5', '--yes']);
    const r = await s.run(['refund', '--oid', 'PART-1', '--amount', '49.5', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: order status is not Paid (it is PENDING_PAY): 49.5 USDT of it arrived and is in user hank's available balance (cryptopay balance hank); an order that is not Paid is not refunded: pay it back with cryptopay withdraw apply --uid hank --amount 49.5 --to ADDRESS, or the rest paid (0.5 USDT) makes the order PAID\n`);
    const json = await s.run(['refund', '--oid', 'PART-1', '--amount', '49.5', '--yes', '--json']);
    expect(json.code).toBe(1);
    expect(json.stderr).toContain('order status is not Paid (it is PENDING_PAY)');
    expect(json.stderr).not.toContain('withdraw apply');
    expect(await balanceOf(s, 'hank')).toEqual({ available: '49.5', held: '0' });
  });

  it('withdraw confirm on a chain it cannot read says the withdrawal was confirmed without an on-chain check, and why', async () => {
    // Found by an operator walkthrough: with --yes it printed "status CONFIRMED" and nothing else.
    const s = await withMerchant();
    await paidOrder(s, 'W-1', 'u1', '10');
    const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', '4', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const r = await s.run(['withdraw', 'confirm', w.id, '--tx-hash', `0x${'77'.repeat(32)}`, '--block-number', '19000000', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^status +CONFIRMED$/m);
    expect(r.stdout).toMatch(/^verification +NOT verified on chain$/m);
    expect(r.stdout).toMatch(/^why +chain 1 \(Ethereum\) has no rpcUrl configured: not verified on chain$/m);
    expect(r.stderr).toBe('warning: confirmed without checking the transaction on chain (chain 1 (Ethereum) has no rpcUrl configured: not verified on chain): make sure it pays this withdrawal\n');
    // --json keeps the record of the interface.
    const w2 = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', '1', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const j = await s.run(['--json', 'withdraw', 'confirm', w2.id, '--tx-hash', `0x${'78'.repeat(32)}`, '--block-number', '19000000', '--yes']);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).not.toHaveProperty('verification');
    expect(j.stderr).toBe('');
  });

  it('--rest refunds what remains and the order turns REFUNDED; with --amount, on an unpaid or a refunded order it is refused and nothing changes', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'R-2', 'u1', '10');
    const unpaid = await s.json<{ id: string }>(['order', 'create', '--oid', 'R-3', '--uid', 'u1', '--amount', '3']);
    await s.json(['refund', '--id', id, '--amount', '3.25', '--yes']);
    const [both, notPaid, noYes] = await Promise.all([
      s.run(['refund', '--id', id, '--rest', '--amount', '1', '--yes']),
      s.run(['refund', '--id', unpaid.id, '--rest', '--yes']),
      s.run(['refund', '--id', id, '--rest']),
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give either --amount or --rest/);
    expect(notPaid.code).toBe(1);
    expect(notPaid.stderr).toBe('error: order status is not Paid (it is PENDING_PAY)\n');
    expect(noYes.code).toBe(2);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '6.75', held: '0' });

    const rest = await s.run(['refund', '--oid', 'R-2', '--rest', '--yes']);
    expect(rest.code).toBe(0);
    expect(rest.stdout).toMatch(/^amount\s+6\.75 USDT$/m);
    expect(rest.stdout).toMatch(/^order status\s+REFUNDED$/m);
    expect(rest.stdout).toMatch(/^refunded\s+10 USDT$/m);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '0', held: '0' });
    const again = await s.run(['refund', '--oid', 'R-2', '--rest', '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('error: order status is not Paid (it is REFUNDED)\n');
  });

  // Found by a new user: on a terminal, a rejected withdrawal was offered "held 1 -> -1 USDT",
  // a refunded order "refunded 10.5 -> 11.5 of 10.5 paid", a mistyped id a bare question, each
  // with "Go ahead?", and refused only after the answer. What the operation would refuse is now
  // refused before anything is asked, in its words, and nothing changes.
  it.skipIf(!HAS_SCRIPT)('on a terminal, what the change would refuse is refused before the question: no id, not pending, not paid, too much, no balance', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'Q-1', 'u1', '10');
    const unpaid = await s.json<{ id: string }>(['order', 'create', '--oid', 'Q-2', '--uid', 'u1', '--amount', '5']);
    const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', '2', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    expect((await s.run(['withdraw', 'reject', w.id, '--yes'])).code).toBe(0);
    // 3 held by a pending withdrawal: 7 of the 10 paid are available.
    await s.json(['withdraw', 'apply', '--uid', 'u1', '--amount', '3', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const before = await balanceOf(s, 'u1');
    expect(before).toEqual({ available: '7', held: '3' });
    const runs = await Promise.all([
      runPty(['--db', s.db, 'refund', '--id', 'ord_typo', '--amount', '1'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'refund', '--id', 'Q-1', '--amount', '1'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'refund', '--id', unpaid.id, '--amount', '1'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'refund', '--id', id, '--amount', '11'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'refund', '--id', id, '--amount', '9'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'withdraw', 'reject', 'wd_typo'], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'withdraw', 'reject', w.id], { timeoutMs: 20_000 }),
      runPty(['--db', s.db, 'withdraw', 'confirm', w.id, '--tx-hash', `0x${'cd'.repeat(32)}`, '--block-number', '9'], { timeoutMs: 20_000 }),
    ]);
    const said = runs.map((r) => [r.code, r.text.trim()]);
    expect(said).toEqual([
      [1, 'error: Order not found: no order has the id ord_typo (cryptopay order find ord_typo also searches uids, transaction hashes and deposit addresses)'],
      [1, `error: Order not found: Q-1 is not an order id but the oid of order ${id}: give it as --oid Q-1`],
      [1, 'error: order status is not Paid (it is PENDING_PAY)'],
      [1, 'error: refund amount 11 is above the original payment 10'],
      [1, 'error: insufficient balance: user u1 has 7 USDT available (and 3 USDT held by pending withdrawals), 9 needed: refund at most 7 USDT now (--amount 7); what else user u1 had was withdrawn or refunded, or is held by withdrawals (cryptopay withdraw list --uid u1)'],
      [1, 'error: withdrawal not found'],
      [1, 'error: withdrawal is REJECTED, not PENDING: only a pending withdrawal can be rejected'],
      [1, 'error: withdrawal is REJECTED, not PENDING: only a pending withdrawal can be confirmed'],
    ]);
    expect(await balanceOf(s, 'u1')).toEqual(before);
  });

  it.skipIf(!HAS_SCRIPT)('on a terminal the questions show each balance before -> after with its asset (refund, withdraw reject and confirm, balance adjust)', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'T-1', 'u1', '12.5');
    const refund = await runPty(['--db', s.db, 'refund', '--id', id, '--amount', '2.5', '--remark', 'dented'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] });
    expect(refund.code).toBe(1);
    expect(refund.text).toMatch(new RegExp(`order\\s+${id} \\(oid T-1\\), PAID`));
    expect(refund.text).toMatch(/refund\s+2\.5 USDT/);
    expect(refund.text).toMatch(/refunded\s+0 -> 2\.5 USDT of 12\.5 USDT paid/);
    expect(refund.text).toMatch(/status\s+PAID -> PAID/);
    expect(refund.text).toMatch(/user\s+u1: available 12\.5 -> 10 USDT/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '12.5', held: '0' });

    const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', '2', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const [reject, confirm, adjust] = await Promise.all([
      runPty(['--db', s.db, 'withdraw', 'reject', w.id], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] }),
      runPty(['--db', s.db, 'withdraw', 'confirm', w.id, '--tx-hash', `0x${'ab'.repeat(32)}`, '--block-number', '9'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] }),
      runPty(['--db', s.db, 'balance', 'adjust', 'u1', '--amount', '-0.5', '--reason', 'fee'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] }),
    ]);
    expect(reject.text).toMatch(/amount\s+2 USDT to 0x/);
    expect(reject.text).toMatch(/available\s+10\.5 -> 12\.5 USDT/);
    expect(reject.text).toMatch(/held\s+2 -> 0 USDT/);
    expect(confirm.text).toMatch(/pays out\s+2 USDT to 0x/);
    expect(confirm.text).toMatch(/held\s+2 -> 0 USDT/);
    expect(confirm.text).toMatch(/available stays 10\.5 USDT/);
    expect(adjust.text).toMatch(/available\s+10\.5 -> 10 USDT/);
    for (const r of [reject, confirm, adjust]) expect(r.code).toBe(1);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '10.5', held: '2' });

    // A new-user trial credited a mistyped uid with no word: the question says the uid is new,
    // and names the merchant's uid it looks like; without the question, --yes notes it.
    const typo = await runPty(['--db', s.db, 'balance', 'adjust', 'U1', '--amount', '+1', '--reason', 'goodwill'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] });
    expect(typo.text).toMatch(/user\s+U1 \(merchant M\d+\), a new user: no activity yet \(did you mean u1\?\)/);
    expect(typo.code).toBe(1);
    const fresh = await runPty(['--db', s.db, 'balance', 'adjust', 'newcomer', '--amount', '+1', '--reason', 'goodwill'], { steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] });
    expect(fresh.text).toMatch(/user\s+newcomer \(merchant M\d+\), a new user: no activity yet/);
    const yes = await s.run(['balance', 'adjust', 'U1', '--amount', '+1', '--reason', 'goodwill', '--yes']);
    expect(yes.code).toBe(0);
    expect(yes.stderr).toMatch(/^note: user U1 of merchant M\d+ is a new user: no activity yet \(did you mean u1\?\)\n$/);
    expect((await s.run(['balance', 'adjust', 'other', '--amount', '+1', '--reason', 'goodwill', '--yes'])).stderr).toBe('');
  });
});
