/**
 * Issue #15 item 2, "Find anything": an order by its id or its oid, by uid, transaction hash in
 * any spelling or deposit address; lists filtered by oid and time and paged with --cursor; a
 * mistyped uid in `balance` said out loud.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { EVM_TO, evmTx, paidOrder, SLOW, USDT_ETH, withMerchant } from './_support.js';

const lines = (s: string) => s.split('\n').filter(Boolean);
/** The rows of a piped table, after its header row. */
const rows = (s: string) => lines(s).slice(1);
const iso = (ms: number) => new Date(ms).toISOString();

describe.concurrent('find anything (#15 item 2)', { timeout: SLOW }, () => {
  it('order show and order status take an oid as well as an id; an unknown one says where else to look', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'A-1', 'u1', '12.5');
    const [show, status, statusJson, unknown, unknownJson] = await Promise.all([
      s.run(['order', 'show', 'A-1']),
      s.run(['order', 'status', 'A-1']),
      s.run(['--json', 'order', 'status', 'A-1']),
      s.run(['order', 'show', 'B-1']),
      s.run(['--json', 'order', 'status', 'B-1']),
    ]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^id\\s+${id}$`, 'm'));
    expect(status).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    // The order's own id, whatever named it.
    expect(JSON.parse(statusJson.stdout)).toEqual({ id, status: 'PAID' });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('error: Order not found: no order has the id or oid B-1 (cryptopay order find B-1 also searches uids, transaction hashes and deposit addresses)\n');
    // Scripts keep the interface's exact text.
    expect(JSON.parse(unknownJson.stderr)).toEqual({ error: { kind: 'not_found', message: 'Order not found' } });
  });

  // An attacker review (session 24): the hint under a page of payer matches named order list --uid with the address.
  it('a page that is not all says how to see the rest: order list --uid for a uid, --limit for a payer', async () => {
    const s = await withMerchant();
    const ids = [await paidOrder(s, 'U-1', 'u 1', '1'), await paidOrder(s, 'U-2', 'u 1', '1')];
    const byUid = await s.run(['order', 'find', 'u 1', '--limit', '1']);
    expect(byUid.code).toBe(0);
    expect(byUid.stderr).toBe("showing the newest 1 orders that match: narrow it with --mch-id, or see them all with cryptopay order list --uid 'u 1'\n");
    const payer = '0x28C6c06298d514Db089934071355E5743bf21d60';
    const db = new Database(s.db);
    const seen = db.prepare(`insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, order_id, token, to_address, raw_amount, amount, status, seen_at, from_address)
      values ('1', ?, 0, 1, ?, ?, '0xdac17f958d2ee523a2206206994597c13d831ec7', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', '1000000', 1000000, 'refused', 1, ?)`);
    for (const id of ids) {
      const tx = evmTx();
      seen.run(tx, tx, id, payer);
    }
    db.close();
    const byPayer = await s.run(['order', 'find', payer.toLowerCase(), '--limit', '1']);
    expect(byPayer.code).toBe(0);
    expect(rows(byPayer.stdout)).toHaveLength(1);
    expect(byPayer.stderr).toBe('showing the newest 1 orders that match: narrow it with --mch-id, or show more with --limit N (up to 1000)\n');
  });

  it('an oid two merchants use is ambiguous without --mch-id: exit 2 naming both; an oid only one uses needs none', async () => {
    const s = await withMerchant();
    const mine = await paidOrder(s, 'A-1', 'u1', '1');
    const two = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Two', '--generate-wallet']);
    const theirs = await s.json<{ id: string }>(['--mch-id', two.mchId, 'order', 'create', '--oid', 'A-1', '--uid', 'u9', '--amount', '2']);
    const only = await s.json<{ id: string }>(['--mch-id', two.mchId, 'order', 'create', '--oid', 'B-7', '--uid', 'u9', '--amount', '3']);
    const [ambiguous, pick1, pick2, unique, logAmbiguous] = await Promise.all([
      s.run(['order', 'show', 'A-1']),
      s.run(['--mch-id', s.mchId, 'order', 'status', 'A-1', '--json']),
      s.run(['--mch-id', two.mchId, 'order', 'show', 'A-1', '--json']),
      s.run(['order', 'status', 'B-7', '--json']),
      s.run(['log', '--order', 'A-1']),
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stdout).toBe('');
    expect(ambiguous.stderr).toBe(`error: oid A-1 names orders of 2 merchants (${s.mchId}: ${mine}, ${two.mchId}: ${theirs.id}): pass --mch-id to say which\n`);
    expect(logAmbiguous.code).toBe(2);
    expect(JSON.parse(pick1.stdout)).toEqual({ id: mine, status: 'PAID' });
    expect(JSON.parse(pick2.stdout)).toMatchObject({ id: theirs.id, mchId: two.mchId, amount: '2' });
    expect(JSON.parse(unique.stdout)).toEqual({ id: only.id, status: 'PENDING_PAY' });
    // Another merchant's oid is not found under --mch-id.
    const foreign = await s.run(['--mch-id', s.mchId, 'order', 'show', 'B-7']);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`Order not found: no order of merchant ${s.mchId} has the id or oid B-7`);
    // And by id: order status reads an id with SQLite alone (src/store/order-status-read.ts), yet
    // another merchant's order stays not found, and one's own answers.
    const [foreignId, ownId] = await Promise.all([
      s.run(['--mch-id', s.mchId, 'order', 'status', only.id]),
      s.run(['--mch-id', two.mchId, 'order', 'status', only.id, '--json']),
    ]);
    expect(foreignId.code).toBe(1);
    expect(foreignId.stderr).toContain(`Order not found: no order of merchant ${s.mchId} has the id or oid ${only.id}`);
    expect(JSON.parse(ownId.stdout)).toEqual({ id: only.id, status: 'PENDING_PAY' });
  });

  it('order find: by oid, uid, a transaction hash in any spelling, a deposit address in any case, and the withdrawal a hash pays out', async () => {
    const s = await withMerchant();
    const tx = evmTx();
    const o = await s.json<{ id: string; addresses: { EVM: string; TRON: string } }>(['order', 'create', '--oid', 'F-1', '--uid', 'carol', '--amount', '10']);
    await s.json(['order', 'mark-paid', o.id, '--tx-hash', tx, '--yes']);
    const other = await s.json<{ id: string }>(['order', 'create', '--oid', 'F-2', '--uid', 'carol', '--amount', '1']);
    const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'carol', '--amount', '3', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const payout = evmTx();
    await s.json(['withdraw', 'confirm', w.id, '--tx-hash', payout, '--block-number', '7', '--yes']);

    const bare = tx.slice(2).toUpperCase();
    const find = (q: string) => s.run(['--json', 'order', 'find', q]);
    const [byOid, byUid, byBareUpper, byMixed, byEvm, byBareEvm, byTron, byPayout, plain, nothing] = await Promise.all([
      find('F-1'),
      find('carol'),
      find(bare),
      find(`0x${bare.toLowerCase().slice(0, 10)}${bare.slice(10)}`),
      find(o.addresses.EVM.toLowerCase()),
      // Without its 0x, as a hash is taken (an operator trial: "nothing matches").
      find(o.addresses.EVM.slice(2)),
      find(o.addresses.TRON),
      find(payout.toUpperCase().replace('0X', '')),
      s.run(['order', 'find', bare]),
      s.run(['order', 'find', 'nobody']),
    ]);
    const ids = (r: { stdout: string }) => JSON.parse(r.stdout).orders.map((x: { id: string; matchedBy: string[] }) => [x.id, x.matchedBy]);
    expect(ids(byOid)).toEqual([[o.id, ['oid']]]);
    expect(ids(byUid)).toEqual([[other.id, ['uid']], [o.id, ['uid']]]);
    expect(ids(byBareUpper)).toEqual([[o.id, ['txHash']]]);
    expect(ids(byMixed)).toEqual([[o.id, ['txHash']]]);
    expect(ids(byEvm)).toEqual([[o.id, ['address']]]);
    expect(ids(byBareEvm)).toEqual([[o.id, ['address']]]);
    expect(ids(byTron)).toEqual([[o.id, ['address']]]);
    expect(JSON.parse(byPayout.stdout)).toEqual({ orders: [], withdrawals: [expect.objectContaining({ id: w.id, uid: 'carol', status: 'CONFIRMED', txHash: payout, matchedBy: ['txHash'] })] });
    expect(plain.code).toBe(0);
    expect(lines(plain.stdout)[0]).toBe('matched by\tid\toid\tuid\tamount\tstatus\tpaid\trefunded\tcreated');
    expect(rows(plain.stdout)).toEqual([expect.stringMatching(new RegExp(`^tx hash\\t${o.id}\\tF-1\\tcarol\\t10 USDT\\tPAID\\t`))]);
    expect(nothing.code).toBe(1);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toMatch(/^error: nothing matches nobody: no order has it as id, oid, uid, refund id, transaction hash, deposit address or payer's address, and no withdrawal as id or transaction hash\n$/);
    // An unknown hash says what else it can be, and how to record it (F6).
    const unknownHash = evmTx();
    const noHash = await s.run(['order', 'find', unknownHash]);
    expect([noHash.code, noHash.stdout]).toEqual([1, '']);
    expect(noHash.stderr).toBe(`error: nothing matches ${unknownHash}: no order has it as id, oid, uid, refund id, transaction hash, deposit address or payer's address, and no withdrawal as id or transaction hash; a transaction sent moments ago may not be read yet (cryptopay summary says how far each chain is read), and one that pays no order's address, or on a chain this ledger does not watch, is not seen at all: look it up in the chain's explorer, then record it with cryptopay order mark-paid ORDER --tx-hash HASH\n`);

    // An attacker review (session 24): a newer order named after another order's deposit address
    // (an oid is the merchant's text) was listed first under it. The address match comes first.
    const lookAlike = await s.json<{ id: string }>(['order', 'create', '--oid', o.addresses.EVM, '--uid', o.addresses.EVM, '--amount', '1']);
    expect(ids(await find(o.addresses.EVM))).toEqual([[o.id, ['address']], [lookAlike.id, ['oid', 'uid']]]);
  });

  it("order find: a refund's id finds its order, a withdrawal's id the withdrawal; another merchant's are not found under --mch-id", async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'G-1', 'dave', '10');
    const { refundId } = await s.json<{ refundId: string }>(['refund', '--oid', 'G-1', '--amount', '2', '--remark', 'damaged', '--yes']);
    expect(refundId).toMatch(/^rf_/);
    const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'dave', '--amount', '3', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
    const two = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Two', '--generate-wallet']);

    const [byRefund, byWithdrawal, plainRefund, plainWithdrawal, refundOfOther, withdrawalOfOther] = await Promise.all([
      s.run(['--json', 'order', 'find', refundId]),
      s.run(['--json', 'order', 'find', w.id]),
      s.run(['order', 'find', refundId]),
      s.run(['order', 'find', w.id]),
      s.run(['--mch-id', two.mchId, 'order', 'find', refundId]),
      s.run(['--mch-id', two.mchId, 'order', 'find', w.id]),
    ]);
    expect(JSON.parse(byRefund.stdout)).toEqual({ orders: [expect.objectContaining({ id, oid: 'G-1', uid: 'dave', refundedAmount: '2', matchedBy: ['refund'] })], withdrawals: [] });
    expect(JSON.parse(byWithdrawal.stdout)).toEqual({ orders: [], withdrawals: [expect.objectContaining({ id: w.id, uid: 'dave', status: 'PENDING', matchedBy: ['id'] })] });
    expect(rows(plainRefund.stdout)).toEqual([expect.stringMatching(new RegExp(`^refund id\\t${id}\\tG-1\\tdave\\t10 USDT\\tPAID\\t10\\t2\\t`))]);
    expect(rows(plainWithdrawal.stdout)).toEqual([expect.stringMatching(new RegExp(`^id \\(withdrawal\\)\\t${w.id}\\t-\\tdave\\t3 USDT\\tPENDING\\t`))]);
    for (const other of [refundOfOther, withdrawalOfOther]) {
      expect(other.code).toBe(1);
      expect(other.stdout).toBe('');
      expect(other.stderr).toMatch(new RegExp(`^error: nothing of merchant ${two.mchId} matches `));
    }
  });

  it('order list: --oid, --since and --until (times and durations), pages with --cursor that say "showing 2 of 5"', async () => {
    const s = await withMerchant();
    const made: { id: string; createdAt: number }[] = [];
    // One after the other, so each has its own creation time.
    for (const n of [1, 2, 3, 4, 5]) {
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', `L-${n}`, '--uid', 'u1', '--amount', String(n)]);
      made.push({ id: o.id, createdAt: (await s.json<{ createdAt: number }>(['order', 'show', o.id])).createdAt });
    }
    const newest = [...made].reverse().map((o) => o.id);
    const ids = (r: { stdout: string }) => rows(r.stdout).map((l) => l.split('\t')[0]);
    const [byOid, since2h, sinceThird, untilThird, both, future, badSince, reversed, first] = await Promise.all([
      s.run(['order', 'list', '--oid', 'L-2']),
      s.run(['order', 'list', '--since', '2h']),
      s.run(['order', 'list', '--since', iso(made[2]!.createdAt)]),
      s.run(['order', 'list', '--until', iso(made[2]!.createdAt)]),
      s.run(['order', 'list', '--since', String(made[1]!.createdAt), '--until', iso(made[3]!.createdAt)]),
      s.run(['order', 'list', '--since', '2099-01-01']),
      s.run(['order', 'list', '--since', 'yesterday']),
      s.run(['order', 'list', '--since', '1h', '--until', '2h']),
      s.run(['order', 'list', '--limit', '2']),
    ]);
    expect(ids(byOid)).toEqual([made[1]!.id]);
    expect(ids(since2h)).toEqual(newest);
    expect(ids(sinceThird)).toEqual(newest.slice(0, 3));
    expect(ids(untilThird)).toEqual(newest.slice(3));
    expect(ids(both)).toEqual([made[2]!.id, made[1]!.id]);
    expect(future).toMatchObject({ code: 0, stderr: '' });
    expect(ids(future)).toEqual([]);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toMatch(/--since must be a time such as 2024-05-01 .* or a duration back from now such as 30m, 2h, 7d; got "yesterday"/);
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toMatch(/--since must come before --until/);
    // The whole list fits: nothing to say.
    expect(since2h.stderr).toBe('');

    expect(ids(first)).toEqual(newest.slice(0, 2));
    expect(first.stderr).toBe(`showing 2 of 5; next page: --cursor ${newest[1]}\n`);
    const second = await s.run(['order', 'list', '--limit', '2', '--cursor', newest[1]!]);
    expect(ids(second)).toEqual(newest.slice(2, 4));
    expect(second.stderr).toBe(`showing 3-4 of 5; next page: --cursor ${newest[3]}\n`);
    const [last, json, unknown] = await Promise.all([
      s.run(['order', 'list', '--limit', '2', '--cursor', newest[3]!]),
      s.run(['--json', 'order', 'list', '--limit', '2', '--cursor', newest[3]!]),
      s.run(['order', 'list', '--cursor', 'ord_nope']),
    ]);
    expect(ids(last)).toEqual([newest[4]]);
    expect(last.stderr).toBe('showing 5-5 of 5\n');
    // --json stays an array of orders; a script pages with the last id.
    expect(JSON.parse(json.stdout).map((o: { id: string }) => o.id)).toEqual([newest[4]]);
    expect(json.stderr).toBe('');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/cursor ord_nope is not an order of this ledger/);
  });

  it('callbacks list pages like the other lists: "showing 1 of 3", --cursor, an unknown cursor refused', async () => {
    const s = await withMerchant();
    for (const n of [1, 2, 3]) {
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', `C-${n}`, '--uid', 'u1', '--amount', '1', '--notify-url', 'https://shop.example/notify']);
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', `0x${String(n).repeat(64)}`, '--yes']);
    }
    const all = await s.json<{ id: string }[]>(['callbacks', 'list']);
    expect(all).toHaveLength(3);
    const ids = (r: { stdout: string }) => rows(r.stdout).map((l) => l.split('\t')[0]);
    const first = await s.run(['callbacks', 'list', '--limit', '1']);
    expect(ids(first)).toEqual([all[0]!.id]);
    expect(first.stderr).toBe(`showing 1 of 3; next page: --cursor ${all[0]!.id}\n`);
    const [second, json, unknown] = await Promise.all([
      s.run(['callbacks', 'list', '--limit', '2', '--cursor', all[0]!.id]),
      s.run(['--json', 'callbacks', 'list', '--limit', '1', '--cursor', all[1]!.id]),
      s.run(['callbacks', 'list', '--cursor', 'evt_AAAAAAAAAAAAAAAAAAAAAA']),
    ]);
    expect(ids(second)).toEqual([all[1]!.id, all[2]!.id]);
    expect(second.stderr).toBe('showing 2-3 of 3\n');
    expect(JSON.parse(json.stdout).map((c: { id: string }) => c.id)).toEqual([all[2]!.id]);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: cursor evt_AAAAAAAAAAAAAAAAAAAAAA is not a callback of this ledger: pass the id the previous page named\n' });
  });

  it('a --mch-id that names no merchant is refused by every list, as by summary and balance, not answered with an empty list', async () => {
    const s = await withMerchant();
    const lists = [['order', 'list'], ['withdraw', 'list'], ['refund', 'list'], ['log'], ['order', 'held'], ['callbacks', 'list'], ['summary'], ['order', 'find', 'abc']];
    const runs = await Promise.all(lists.map((l) => s.run([...l, '--mch-id', 'M999'])));
    expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual(lists.map(() => [1, '', 'error: merchant M999 not found\n']));
    expect((await s.run(['order', 'list', '--mch-id', s.mchId])).code).toBe(0);
  });

  it('a date that does not exist is refused, not rolled over into the next month (--since 2026-02-30 read as 2 March), in lists and in --expired-at', async () => {
    const s = await withMerchant();
    const runs = await Promise.all([
      s.run(['order', 'list', '--since', '2026-02-30']),
      s.run(['withdraw', 'list', '--until', '2026-11-31T10:00Z']),
      s.run(['log', '--since', '2027-02-29 08:00']),
      s.run(['order', 'create', '--oid', 'D-1', '--uid', 'u1', '--amount', '1', '--expired-at', '2099-04-31T12:00Z']),
    ]);
    expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual([
      [2, '', 'error: --since names a day that does not exist: 2026-02-30\n'],
      [2, '', 'error: --until names a day that does not exist: 2026-11-31\n'],
      [2, '', 'error: --since names a day that does not exist: 2027-02-29\n'],
      [2, '', 'error: --expired-at names a day that does not exist: 2099-04-31\n'],
    ]);
    expect(await s.json(['order', 'list'])).toEqual([]);
    // A day that exists, leap day included, is taken.
    expect((await s.run(['order', 'list', '--since', '2028-02-29'])).code).toBe(0);
  });

  it('withdraw list, refund list and log page and filter the same way; log and refund list take an oid', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'W-1', 'u1', '100');
    const w: string[] = [];
    for (const n of [1, 2, 3]) w.push((await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', String(n), '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH])).id);
    for (const n of [1, 2, 3]) await s.json(['refund', '--oid', 'W-1', '--amount', String(n), '--yes']);
    const [wFirst, wSince, rFirst, byOid, logOrder, logFirst] = await Promise.all([
      s.run(['withdraw', 'list', '--limit', '2']),
      s.run(['withdraw', 'list', '--since', '2099-01-01T00:00Z']),
      s.run(['refund', 'list', '--limit', '2']),
      s.json(['refund', 'list', '--order', 'W-1']),
      s.json(['log', '--order', 'W-1']),
      s.run(['log', '--limit', '2']),
    ]);
    expect(wFirst.stderr).toBe(`showing 2 of 3; next page: --cursor ${w[1]}\n`);
    expect(wSince).toMatchObject({ code: 0, stderr: '' });
    expect(rows(wSince.stdout)).toEqual([]);
    const refunds = byOid.map((r: { refundId: string; id: string }) => [r.refundId, r.id]);
    expect(refunds).toHaveLength(3);
    expect(refunds.every(([, o]: string[]) => o === id)).toBe(true);
    expect(rFirst.stderr).toBe(`showing 2 of 3; next page: --cursor ${refunds[1][0]}\n`);
    expect(logOrder.map((e: { action: string; subject: string }) => [e.action, e.subject])).toEqual([
      ['order.refunded', `order:${id}`], ['order.refunded', `order:${id}`], ['order.refunded', `order:${id}`], ['order.payment_recorded', `order:${id}`],
    ]);
    // merchant added, payment, 3 withdrawals, 3 refunds
    const cursor = /--cursor (\d+)\n$/.exec(logFirst.stderr)?.[1];
    expect(logFirst.stderr).toBe(`showing 2 of 8; next page: --cursor ${cursor}\n`);
    const logNext = await s.run(['log', '--limit', '2', '--cursor', cursor!]);
    expect(logNext.stderr).toMatch(/^showing 3-4 of 8; next page: --cursor \d+\n$/);
    expect(rows(logNext.stdout).map((l) => l.split('\t')[2])).toEqual(['order.refunded', 'withdrawal.applied']);
  });

  it('balance of a uid with no activity says so (exit 1) and names a uid that differs only in case; a real user with nothing left reads 0', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'B-1', 'User-1', '5');
    await s.json(['refund', '--id', id, '--amount', '5', '--yes']);
    const [typo, typoJson, stranger, spent] = await Promise.all([
      s.run(['balance', 'user-1']),
      s.run(['--json', 'balance', 'user-1']),
      s.run(['balance', 'nobody']),
      s.json(['balance', 'User-1']),
    ]);
    expect(typo.code).toBe(1);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toBe(`error: user user-1 has no activity with merchant ${s.mchId}: no order, payment, refund, withdrawal or adjustment (did you mean User-1?)\n`);
    expect(JSON.parse(typoJson.stderr)).toMatchObject({ error: { kind: 'not_found' } });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/user nobody has no activity/);
    expect(stranger.stderr).not.toMatch(/did you mean/);
    expect(spent).toEqual({ mchId: s.mchId, uid: 'User-1', asset: 'USDT', available: '0', held: '0' });
    // A user with an order but no payment yet exists too.
    await s.json(['order', 'create', '--oid', 'B-2', '--uid', 'fresh', '--amount', '1']);
    expect(await s.json(['balance', 'fresh'])).toMatchObject({ available: '0' });
  });
});
