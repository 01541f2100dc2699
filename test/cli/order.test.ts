import { describe, expect, it } from 'vitest';
import { evmTx, paidOrder, sandbox, SLOW, withMerchant } from './_support.js';

const lines = (s: string) => s.split('\n').filter(Boolean);
const ORDER_ID = /^ord_[A-Za-z0-9_-]{16,}$/;

// Every test has its own ledger: they run side by side.
describe.concurrent('orders', { timeout: SLOW }, () => {
  describe('order create, status, show, address', () => {
    it('human output: id, amount, status, expiry and one address per chain', async () => {
      const s = await withMerchant();
      const r = await s.run(['order', 'create', '--oid', 'A-1', '--uid', 'user-1', '--amount', '12.50', '--memo', 'VIP top-up']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^id\s+ord_\S+$/m);
      expect(r.stdout).toMatch(/^oid\s+A-1$/m);
      expect(r.stdout).toMatch(/^uid\s+user-1$/m);
      expect(r.stdout).toMatch(/^amount\s+12\.5 USDT$/m);
      expect(r.stdout).toMatch(/^status\s+PENDING_PAY$/m);
      expect(r.stdout).toMatch(/^expires\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/m);
      expect(r.stdout).toMatch(/^EVM address\s+0x[0-9a-fA-F]{40}$/m);
      expect(r.stdout).toMatch(/^TRON address\s+T[1-9A-HJ-NP-Za-km-z]{33}$/m);
    });

    it('--json: the order of the interface, amount in canonical form, expiring after the 30 minute default', async () => {
      const s = await withMerchant();
      const before = Date.now();
      const o = await s.json(['order', 'create', '--oid', 'A-2', '--uid', 'user-1', '--amount', '010.50']);
      expect(Object.keys(o).sort()).toEqual(['addresses', 'amount', 'expiredAt', 'id', 'oid', 'payUrl', 'status', 'uid']);
      // No serve has announced its address on this ledger: serve's default.
      expect(o.payUrl).toBe(`http://127.0.0.1:8080/pay/${o.id}`);
      expect(o).toMatchObject({ oid: 'A-2', uid: 'user-1', amount: '10.5', status: 'PENDING_PAY' });
      expect(o.id).toMatch(ORDER_ID);
      expect(o.expiredAt).toBeGreaterThanOrEqual(before + 30 * 60_000);
      expect(o.expiredAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
      expect(o.addresses.EVM).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(o.addresses.TRON).toMatch(/^T/);

      const [status, statusJson, show, showJson, addr, addrJson] = await Promise.all([
        s.run(['order', 'status', o.id]),
        s.run(['order', 'status', o.id, '--json']),
        s.run(['order', 'show', o.id]),
        s.run(['order', 'show', o.id, '--json']),
        s.run(['address', o.id]),
        s.run(['address', o.id, '--json']),
      ]);
      expect(status).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
      expect(JSON.parse(statusJson.stdout)).toEqual({ id: o.id, status: 'PENDING_PAY' });
      expect(show.stdout).toMatch(new RegExp(`^merchant\\s+${s.mchId}$`, 'm'));
      expect(show.stdout).toMatch(/^paid\s+0 USDT$/m);
      expect(show.stdout).toMatch(/^refunded\s+0 USDT$/m);
      const { payUrl: _page, ...created } = o;
      expect(JSON.parse(showJson.stdout)).toMatchObject({ ...created, mchId: s.mchId, asset: 'USDT', paidAmount: '0', refundedAmount: '0', payments: [] });
      expect(lines(addr.stdout)).toEqual([`EVM   ${o.addresses.EVM}`, `TRON  ${o.addresses.TRON}`]);
      expect(JSON.parse(addrJson.stdout)).toEqual(o.addresses);
    });

    // A new-user trial (session 23): support needed three commands to tell one order's story.
    it("order show tells the order's story after the record: what is still due, each refund oldest first, each callback; --json keeps the record alone", async () => {
      const s = await withMerchant();
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'STORY-1', '--uid', 'u1', '--amount', '10', '--notify-url', 'https://shop.example/cb']);
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--amount', '4', '--yes']);
      const part = await s.run(['order', 'show', 'STORY-1']);
      expect(part.stdout).toMatch(/^status\s+PENDING_PAY$/m);
      expect(part.stdout).toMatch(/^due\s+6 USDT$/m);
      // The payment page, as order create printed it (a new-user trial found it nowhere else).
      expect(part.stdout).toMatch(new RegExp(`^pay url\\s+http://127\\.0\\.0\\.1:8080/pay/${o.id}$`, 'm'));
      expect(part.stdout).not.toMatch(/^(refund|callback)\s/m);
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--yes']);
      expect((await s.run(['order', 'show', o.id])).stdout).not.toMatch(/^overpaid\s/m);
      // More than the amount: said, with where it went (an operator trial saw paid 12.5 of 10, nothing said).
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--amount', '2.5', '--yes']);
      expect((await s.run(['order', 'show', o.id])).stdout).toMatch(/^overpaid\s+2\.5 USDT more than the amount arrived: credited to user u1's balance \(a refund or a withdrawal sends it back\)$/m);
      await s.json(['refund', '--id', o.id, '--amount', '1.5', '--remark', 'scratched', '--yes']);
      await s.json(['refund', '--id', o.id, '--amount', '2', '--yes']);
      const [shown, json, refunds, callbacks] = await Promise.all([
        s.run(['order', 'show', o.id]),
        s.run(['order', 'show', o.id, '--json']),
        s.json<{ refundId: string }[]>(['refund', 'list', '--order', o.id]),
        s.json<{ id: string }[]>(['callbacks', 'list', '--order', o.id]),
      ]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(/^due\s/m);
      expect(shown.stdout).not.toMatch(/^pay url\s/m);
      const story = shown.stdout.split('\n').filter((l) => /^(refund|callback)\s/.test(l)).map((l) => l.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '<time>'));
      expect(story).toEqual([
        expect.stringMatching(new RegExp(`^refund\\s+1\\.5 USDT at <time> \\(${refunds[1]!.refundId}\\): scratched$`)),
        expect.stringMatching(new RegExp(`^refund\\s+2 USDT at <time> \\(${refunds[0]!.refundId}\\)$`)),
        expect.stringMatching(new RegExp(`^callback\\s+order\\.paid PENDING \\(not tried yet, next <time>\\) ${callbacks[2]!.id}$`)),
        expect.stringMatching(new RegExp(`^callback\\s+order\\.refunded PENDING \\(not tried yet, next <time>\\) ${callbacks[1]!.id}$`)),
        expect.stringMatching(new RegExp(`^callback\\s+order\\.refunded PENDING \\(not tried yet, next <time>\\) ${callbacks[0]!.id}$`)),
      ]);
      expect(JSON.parse(json.stdout)).not.toHaveProperty('refunds');
      expect(Object.keys(JSON.parse(json.stdout))).not.toContain('callbacks');
      // Refunds made: the row says how much of the payment went back (a review: it said only
      // "credited", also of an order refunded in full).
      expect(shown.stdout).toMatch(/^overpaid\s+2\.5 USDT more than the amount arrived: credited to user u1's balance with the payment, of which 3\.5 USDT is refunded so far$/m);
      await s.json(['refund', '--id', o.id, '--rest', '--yes']);
      const all = await s.run(['order', 'show', o.id]);
      expect(all.stdout).toMatch(/^status\s+REFUNDED$/m);
      expect(all.stdout).toMatch(/^overpaid\s+2\.5 USDT more than the amount arrived: refunded with the rest of the payment$/m);
    });

    // Found by a new user: order status, show and log took an oid, but address and order
    // mark-paid (and dev pay) answered "Order not found" to one.
    it('address and order mark-paid take an oid too, as order status and show do', async () => {
      const s = await withMerchant();
      const o = await s.json<{ id: string; addresses: Record<string, string> }>(['order', 'create', '--oid', 'OID-7', '--uid', 'u1', '--amount', '4']);
      expect(JSON.parse((await s.run(['address', 'OID-7', '--json'])).stdout)).toEqual(o.addresses);
      const paid = await s.run(['order', 'mark-paid', 'OID-7', '--tx-hash', `0x${'7e'.repeat(32)}`, '--yes', '--json']);
      expect(paid.code, paid.stderr).toBe(0);
      expect(JSON.parse(paid.stdout)).toMatchObject({ id: o.id, status: 'PAID' });
    });

    it('an unknown id: exit 1 with "Order not found" (status, show) and "Not found" (address)', async () => {
      const s = await withMerchant();
      const [status, show, addr, json] = await Promise.all([
        s.run(['order', 'status', 'ord_doesNotExist0000000']),
        s.run(['order', 'show', 'ord_doesNotExist0000000']),
        s.run(['address', 'ord_doesNotExist0000000']),
        s.run(['--json', 'order', 'status', 'ord_doesNotExist0000000']),
      ]);
      for (const r of [status, show, addr, json]) {
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
      }
      expect(status.stderr).toContain('Order not found');
      expect(show.stderr).toContain('Order not found');
      expect(addr.stderr).toContain('Not found');
      expect(addr.stderr).not.toContain('Order not found');
      expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'not_found', message: 'Order not found' } });
    });

    it('an unpaid order past its expiry reads EXPIRED at once', async () => {
      const s = await withMerchant();
      // Far enough ahead that creating the order never races the expiry, even on a loaded machine.
      const expiredAt = Date.now() + 10_000;
      const o = await s.json(['order', 'create', '--oid', 'E-1', '--uid', 'u1', '--amount', '1', '--expired-at', String(expiredAt)]);
      expect(o.expiredAt).toBe(expiredAt);
      await new Promise((r) => setTimeout(r, Math.max(0, expiredAt + 100 - Date.now())));
      const [status, list, refund] = await Promise.all([
        s.run(['order', 'status', o.id]),
        s.json(['order', 'list', '--status', 'expired']),
        s.run(['refund', '--id', o.id, '--amount', '1', '--yes']),
      ]);
      expect(status.stdout).toBe('EXPIRED\n');
      expect(list.map((x: { id: string }) => x.id)).toEqual([o.id]);
      expect(refund.code).toBe(1);
      expect(refund.stderr).toMatch(/not Paid \(it is EXPIRED\)/);
    });

    it('refuses an expiry in the past or more than 7 days ahead', async () => {
      const s = await withMerchant();
      const [past, far, garbage] = await Promise.all([
        s.run(['order', 'create', '--oid', 'P', '--uid', 'u', '--amount', '1', '--expired-at', String(Date.now() - 1000)]),
        s.run(['order', 'create', '--oid', 'F', '--uid', 'u', '--amount', '1', '--expired-at', String(Date.now() + 8 * 86_400_000)]),
        s.run(['order', 'create', '--oid', 'G', '--uid', 'u', '--amount', '1', '--expired-at', 'tomorrow']),
      ]);
      // Judged before anything runs: usage errors naming the option (issue #15 item 7).
      expect(past.code).toBe(2);
      expect(past.stderr).toMatch(/--expired-at must lie in the future/);
      expect(far.code).toBe(2);
      expect(far.stderr).toMatch(/--expired-at must be at most 7 days/);
      expect(garbage.code).toBe(2);
      expect(garbage.stderr).toMatch(/--expired-at must be a duration from now such as 2h or 30m, milliseconds since the epoch, or an ISO 8601 time/);
      expect(await s.json(['order', 'list'])).toEqual([]);
    });
  });

  describe('order create refusals', () => {
    it('refuses every amount outside the grammar with exit 2 (a usage error) and the reason on stderr, creating nothing', async () => {
      const s = await withMerchant();
      const cases: Array<[string, RegExp]> = [
        ['1e3', /plain decimal.*"1e3"/],
        ['-1', /plain decimal.*"-1"/],
        ['+1', /plain decimal.*"\+1"/],
        ['0', /must be positive/],
        ['0.000', /must be positive/],
        [' 1', /plain decimal.*" 1"/],
        ['1,000', /plain decimal/],
        ['1.1234567', /more than 6 decimal places/],
        ['abc', /plain decimal/],
      ];
      const results = await Promise.all(cases.map(([amount], i) => s.run(['order', 'create', '--oid', `BAD-${i}`, '--uid', 'u1', '--amount', amount])));
      results.forEach((r, i) => {
        expect(r.code, `--amount ${JSON.stringify(cases[i]![0])}`).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^error: --amount /);
        expect(r.stderr).toMatch(cases[i]![1]);
      });
      expect(await s.json(['order', 'list'])).toEqual([]);
      // The index of the wallet did not move either: the first real order gets address 0.
      expect((await s.json(['merchant', 'show'])).addressesIssued).toEqual({ EVM: 0, TRON: 0 });
    });

    it('the same oid with the same fields returns the same order; with other fields exit 1 naming them', async () => {
      const s = await withMerchant();
      const first = await s.json(['order', 'create', '--oid', 'IDEM', '--uid', 'u1', '--amount', '5']);
      const [again, againCanonical, otherAmount, otherUid] = await Promise.all([
        s.json(['order', 'create', '--oid', 'IDEM', '--uid', 'u1', '--amount', '5']),
        s.json(['order', 'create', '--oid', 'IDEM', '--uid', 'u1', '--amount', '5.000']),
        s.run(['order', 'create', '--oid', 'IDEM', '--uid', 'u1', '--amount', '6']),
        s.run(['order', 'create', '--oid', 'IDEM', '--uid', 'u2', '--amount', '5']),
      ]);
      expect(again).toEqual(first);
      expect(againCanonical).toEqual(first);
      expect(otherAmount.code).toBe(1);
      expect(otherAmount.stderr).toContain(`oid IDEM is already used by order ${first.id} with a different amount`);
      expect(otherUid.code).toBe(1);
      expect(otherUid.stderr).toMatch(/different uid/);
      expect((await s.json(['order', 'list'])).map((o: { id: string }) => o.id)).toEqual([first.id]);
    });

    // Found by new-user trials: a re-run answered the old order (even a PAID one) as if just made.
    it('a re-run of order create that finds the order already made says so on stderr, with its creation time and status; a first run says nothing', async () => {
      const s = await withMerchant();
      const first = await s.run(['order', 'create', '--oid', 'AGAIN', '--uid', 'u1', '--amount', '5']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toBe('');
      const made = await s.json<{ id: string; createdAt: number }>(['order', 'show', 'AGAIN']);
      await s.json(['order', 'mark-paid', made.id, '--tx-hash', evmTx(), '--yes']);
      const note = `order AGAIN already existed (created ${new Date(made.createdAt).toISOString()}, PAID): this is that order; nothing new was created\n`;
      for (const json of [[], ['--json']]) {
        const again = await s.run(['order', 'create', '--oid', 'AGAIN', '--uid', 'u1', '--amount', '5', ...json]);
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toContain(made.id);
        expect(again.stderr).toBe(note);
      }
      expect(await s.json(['order', 'list'])).toHaveLength(1);
    });

    // Found by an integrator review: a retry of `order create ... --expired-at 2h` was refused,
    // its expiry worked out again from the retry's own now.
    it('a retry with the same duration as --expired-at returns the order the first run made, saying its expiry stays; another field or an absolute time still differs', async () => {
      const s = await withMerchant();
      const first = await s.json(['order', 'create', '--oid', 'REL', '--uid', 'u1', '--amount', '5', '--expired-at', '2h']);
      await new Promise((r) => setTimeout(r, 5));
      const retry = await s.run(['order', 'create', '--oid', 'REL', '--uid', 'u1', '--amount', '5', '--expired-at', '2h', '--json']);
      expect(retry.code, retry.stderr).toBe(0);
      expect(JSON.parse(retry.stdout)).toEqual(first);
      expect(retry.stderr).toBe(`order REL was created by an earlier run with --expired-at 2h too; counted from that run, its expiry stays ${new Date(first.expiredAt).toISOString()}\n`);
      const [otherAmount, absolute, otherDuration] = await Promise.all([
        s.run(['order', 'create', '--oid', 'REL', '--uid', 'u1', '--amount', '6', '--expired-at', '2h']),
        s.run(['order', 'create', '--oid', 'REL', '--uid', 'u1', '--amount', '5', '--expired-at', new Date(first.expiredAt + 60_000).toISOString()]),
        // Another duration is another expiry (it was taken as the same order: a code review).
        s.run(['order', 'create', '--oid', 'REL', '--uid', 'u1', '--amount', '5', '--expired-at', '6d']),
      ]);
      expect(otherDuration.code).toBe(1);
      expect(otherDuration.stderr).toContain(`oid REL is already used by order ${first.id} with a different expiredAt`);
      expect(otherAmount.code).toBe(1);
      expect(otherAmount.stderr).toContain(`oid REL is already used by order ${first.id} with a different amount (the order's 5, this request's 6), expiredAt`);
      expect(absolute.code).toBe(1);
      expect(absolute.stderr).toContain(`oid REL is already used by order ${first.id} with a different expiredAt`);
      expect(await s.json(['order', 'list'])).toHaveLength(1);
    });

    it('missing required options without a terminal: exit 2 "missing required option", nothing created', async () => {
      const s = await withMerchant();
      const [noOid, noUid, noAmount, emptyOid] = await Promise.all([
        s.run(['order', 'create', '--uid', 'u1', '--amount', '1']),
        s.run(['order', 'create', '--oid', 'X', '--amount', '1']),
        s.run(['order', 'create', '--oid', 'X', '--uid', 'u1']),
        s.run(['order', 'create', '--oid', '', '--uid', 'u1', '--amount', '1']),
      ]);
      expect(noOid.code).toBe(2);
      expect(noOid.stderr).toContain('missing required option --oid');
      expect(noUid.code).toBe(2);
      expect(noUid.stderr).toContain('missing required option --uid');
      expect(noAmount.code).toBe(2);
      expect(noAmount.stderr).toContain('missing required option --amount');
      expect(emptyOid.code).toBe(2);
      expect(emptyOid.stderr).toContain('missing required option --oid');
      expect(await s.json(['order', 'list'])).toEqual([]);
    });

    it('with two merchants --mch-id (or CRYPTOPAY_MCH_ID) is required and decides whose order it is', async () => {
      const s = await withMerchant('One');
      const two = await s.json(['merchant', 'add', '--name', 'Two', '--generate-wallet']);
      const [none, flagged, byEnv, unknown] = await Promise.all([
        s.run(['order', 'create', '--oid', 'M-0', '--uid', 'u1', '--amount', '1']),
        s.json(['order', 'create', '--oid', 'M-1', '--uid', 'u1', '--amount', '1', '--mch-id', two.mchId]),
        s.json(['order', 'create', '--oid', 'M-2', '--uid', 'u1', '--amount', '1'], { env: { CRYPTOPAY_MCH_ID: s.mchId } }),
        s.run(['order', 'create', '--oid', 'M-3', '--uid', 'u1', '--amount', '1', '--mch-id', 'M999999']),
      ]);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(new RegExp(`--mch-id is required: the ledger holds 2 merchants: ${s.mchId} \\(One\\), ${two.mchId} \\(Two\\)`));
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/merchant M999999 not found/);
      const [d1, d2] = await Promise.all([s.json(['order', 'show', flagged.id]), s.json(['order', 'show', byEnv.id])]);
      expect(d1.mchId).toBe(two.mchId);
      expect(d2.mchId).toBe(s.mchId);
      // Each merchant sees only its own orders.
      const [list1, list2] = await Promise.all([
        s.json(['--mch-id', s.mchId, 'order', 'list']),
        s.json(['--mch-id', two.mchId, 'order', 'list']),
      ]);
      expect(list1.map((o: { oid: string }) => o.oid)).toEqual(['M-2']);
      expect(list2.map((o: { oid: string }) => o.oid)).toEqual(['M-1']);
    });

    it('a typo in an option is a usage error (exit 2), not a silently ignored field', async () => {
      const s = await withMerchant();
      const r = await s.run(['order', 'create', '--oid', 'T', '--uid', 'u1', '--amount', '1', '--notify-URL', 'https://x.example']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/unknown option '--notify-URL'/);
      expect(await s.json(['order', 'list'])).toEqual([]);
    });
  });

  // Found by a new-user trial (session 20): mark-paid without --amount recorded the whole order
  // amount again on an order paid in full, crediting the user twice, and --yes hid it; a TRON
  // hash with 0x, which withdraw confirm takes, was refused with exit 1.
  describe('order mark-paid', () => {
    it('without --amount records what is still due; with nothing due it asks for --amount (exit 2) and changes nothing', async () => {
      const s = await withMerchant();
      const o = await s.json(['order', 'create', '--oid', 'M-1', '--uid', 'mia', '--amount', '3']);
      const part = await s.json(['order', 'mark-paid', 'M-1', '--tx-hash', evmTx(), '--amount', '1', '--yes']);
      expect(part).toMatchObject({ status: 'PENDING_PAY', paidAmount: '1' });
      const rest = await s.json(['order', 'mark-paid', 'M-1', '--tx-hash', evmTx(), '--yes']);
      expect(rest).toMatchObject({ status: 'PAID', paidAmount: '3' });
      expect(await s.json(['balance', 'mia'])).toMatchObject({ available: '3' });

      const again = await s.run(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--yes']);
      expect(again.code).toBe(2);
      expect(again.stderr).toBe(`error: --amount is required: order ${o.id} is PAID and nothing is due (give the amount of this payment to record it anyway, say an overpayment); nothing was changed\n`);
      expect(await s.json(['balance', 'mia'])).toMatchObject({ available: '3' });
      expect(await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--amount', '0.5', '--yes'])).toMatchObject({ status: 'PAID', paidAmount: '3.5' });
    });

    it('takes a TRON hash with one 0x, as withdraw confirm does, and records it without', async () => {
      const s = await withMerchant();
      const o = await s.json(['order', 'create', '--oid', 'M-2', '--uid', 'tia', '--amount', '2']);
      const hash = 'ab'.repeat(32);
      const paid = await s.run(['order', 'mark-paid', o.id, '--tx-hash', `0x${hash}`, '--chain-id', '728126428', '--yes', '--json']);
      expect(paid.code, paid.stderr).toBe(0);
      const shown = await s.json(['order', 'show', o.id]);
      expect(JSON.stringify(shown)).toContain(hash);
      expect(JSON.stringify(shown)).not.toContain(`0x${hash}`);
      // An EVM hash on the TRON chain is not one: a usage error naming the option, nothing changed.
      const o2 = await s.json(['order', 'create', '--oid', 'M-3', '--uid', 'tia', '--amount', '2']);
      const wrong = await s.run(['order', 'mark-paid', o2.id, '--tx-hash', `0x${'cd'.repeat(31)}`, '--chain-id', '728126428', '--yes']);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/^error: --tx-hash must be a transaction hash/);
      expect(await s.json(['order', 'status', o2.id])).toEqual({ id: o2.id, status: 'PENDING_PAY' });
    });
  });

  describe('order list', () => {
    it('filters by --status and --uid, limits with --limit, newest first; refuses a bad filter with exit 2', async () => {
      const s = await withMerchant();
      const a = await s.json(['order', 'create', '--oid', 'L-1', '--uid', 'alice', '--amount', '1']);
      const b = await s.json(['order', 'create', '--oid', 'L-2', '--uid', 'bob', '--amount', '2']);
      const c = await s.json(['order', 'create', '--oid', 'L-3', '--uid', 'alice', '--amount', '3']);
      await s.json(['order', 'mark-paid', b.id, '--tx-hash', evmTx(), '--yes']);
      const [all, paid, pending, alice, one, plain, badStatus, badLimit, zeroLimit] = await Promise.all([
        s.json(['order', 'list']),
        s.json(['order', 'list', '--status', 'PAID']),
        s.json(['order', 'list', '--status', 'pending_pay']),
        s.json(['order', 'list', '--uid', 'alice']),
        s.json(['order', 'list', '--limit', '1']),
        s.run(['order', 'list', '--uid', 'bob']),
        s.run(['order', 'list', '--status', 'SHIPPED']),
        s.run(['order', 'list', '--limit', 'ten']),
        s.run(['order', 'list', '--limit', '0']),
      ]);
      const ids = (l: Array<{ id: string }>) => l.map((o) => o.id);
      expect(ids(all)).toEqual([c.id, b.id, a.id]);
      expect(ids(paid)).toEqual([b.id]);
      expect(ids(pending)).toEqual([c.id, a.id]);
      expect(ids(alice)).toEqual([c.id, a.id]);
      expect(ids(one)).toEqual([c.id]);
      // Piped: a header row, then one tab-separated row per order.
      expect(lines(plain.stdout)).toHaveLength(2);
      expect(lines(plain.stdout)[0]).toBe('id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires');
      expect(lines(plain.stdout)[1]!.split('\t').slice(0, 6)).toEqual([b.id, 'L-2', 'bob', '2', 'PAID', '2']);
      expect(badStatus.code).toBe(2);
      expect(badStatus.stderr).toMatch(/--status must be one of PENDING_PAY, PAID, EXPIRED, REFUNDED/);
      expect(badLimit.code).toBe(2);
      expect(zeroLimit.code).toBe(2);
      expect(zeroLimit.stderr).toMatch(/--limit/);
    });
  });

  describe('global options anywhere on the line', () => {
    it('--json and --db before or after the subcommand give the same output', async () => {
      const s = await withMerchant();
      const id = await paidOrder(s, 'G-1', 'u1', '3');
      const pairs: Array<[string[], string[]]> = [
        [['--json', '--db', s.db, 'order', 'status', id], ['order', 'status', id, '--db', s.db, '--json']],
        [['--json', '--db', s.db, 'order', 'show', id], ['order', '--db', s.db, 'show', '--json', id]],
        [['--db', s.db, '--json', 'balance', 'u1'], ['balance', 'u1', '--json', '--db', s.db]],
        [['--json', '--db', s.db, 'order', 'list', '--uid', 'u1'], ['order', 'list', '--uid', 'u1', '--json', '--db', s.db]],
        [['--db', s.db, 'address', id], ['address', id, '--db', s.db]],
        [['--json', '--db', s.db, 'ledger', 'check'], ['ledger', 'check', '--db', s.db, '--json']],
      ];
      const results = await Promise.all(pairs.flat().map((args) => s.bare(args)));
      for (let i = 0; i < pairs.length; i++) {
        const [before, after] = [results[2 * i]!, results[2 * i + 1]!];
        expect(before.code, pairs[i]![0].join(' ')).toBe(0);
        expect(after, pairs[i]![1].join(' ')).toEqual(before);
      }
      expect(JSON.parse(results[0]!.stdout)).toEqual({ id, status: 'PAID' });
    });

    it('--mch-id and --yes before or after the subcommand act the same', async () => {
      const s = await withMerchant('One');
      const two = await s.json(['merchant', 'add', '--name', 'Two', '--generate-wallet']);
      const [pre, post] = await Promise.all([
        s.json(['--mch-id', two.mchId, 'order', 'create', '--oid', 'P-1', '--uid', 'u1', '--amount', '4']),
        s.json(['order', 'create', '--oid', 'P-2', '--uid', 'u1', '--amount', '4', '--mch-id', two.mchId]),
      ]);
      const [paidPre, paidPost] = await Promise.all([
        s.run(['--yes', '--json', 'order', 'mark-paid', pre.id, '--tx-hash', evmTx()]),
        s.run(['order', 'mark-paid', post.id, '--tx-hash', evmTx(), '-y', '--json']),
      ]);
      expect(JSON.parse(paidPre.stdout)).toMatchObject({ mchId: two.mchId, status: 'PAID' });
      expect(JSON.parse(paidPost.stdout)).toMatchObject({ mchId: two.mchId, status: 'PAID' });
      const [r1, r2] = await Promise.all([
        s.run(['--yes', '--mch-id', two.mchId, 'refund', '--oid', 'P-1', '--amount', '1']),
        s.run(['refund', '--oid', 'P-2', '--amount', '1', '--mch-id', two.mchId, '--yes']),
      ]);
      expect(r1.code).toBe(0);
      expect(r2.code).toBe(0);
      expect(await s.json(['balance', 'u1', '--mch-id', two.mchId])).toMatchObject({ mchId: two.mchId, available: '6' });
      // u1 did nothing with the first merchant: said so, not shown as zeros (#15 item 2), naming
      // the merchant it is a user of (the local ledger is the operator's, all merchants alike).
      expect((await s.run(['--mch-id', s.mchId, 'balance', 'u1'])).stderr).toBe(`error: user u1 has no activity with merchant ${s.mchId}: it is a user of merchant ${two.mchId} (pass --mch-id ${two.mchId})\n`);
      expect((await s.run(['--mch-id', s.mchId, 'balance', 'u9'])).stderr).toBe(`error: user u9 has no activity with merchant ${s.mchId}: no order, payment, refund, withdrawal or adjustment\n`);
    });
  });
});
