/**
 * Issue #15 item 10, "At a glance": `cryptopay summary` and `cryptopay log --follow`.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv } from '../helpers/cli.js';
import { utcDay } from '../helpers/service.js';
import { parseAmount } from '../../src/core/money.js';
import { CLEAN_ENV, EVM_TO, evmTx, HAS_SCRIPT, paidOrder, runPty, SLOW, USDT_ETH, withMerchant } from './_support.js';

const apply = (uid: string, amount: string) => ['withdraw', 'apply', '--uid', uid, '--amount', amount, '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH];

describe.concurrent('at a glance (#15 item 10)', { timeout: SLOW }, () => {
  it('summary: pending withdrawals and their total, today and this week, what users hold, held payments, chains behind, callbacks', async () => {
    const startedOn = utcDay(Date.now());
    const s = await withMerchant();
    // An order whose order.paid callback will have given up.
    const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'S-1', '--uid', 'u1', '--amount', '100', '--notify-url', 'https://shop.example/hook']);
    await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--yes']);
    const a = o.id;
    await paidOrder(s, 'S-2', 'u2', '20.5');
    await s.json(['refund', '--id', a, '--amount', '10', '--yes']);
    const w1 = await s.json<{ id: string }>(apply('u1', '30'));
    await s.json(apply('u1', '5'));
    await s.json(apply('u2', '0.5'));
    await s.json(['withdraw', 'confirm', w1.id, '--tx-hash', evmTx(), '--block-number', '5', '--yes']);
    const unpaid = await s.json<{ id: string; addresses: { EVM: string } }>(['order', 'create', '--oid', 'S-3', '--uid', 'u3', '--amount', '2']);
    const refusedTx = evmTx();
    // The watcher's state as it keeps it in the ledger: chain 1 read to block 100, head 110.
    const db = new Database(s.db);
    try {
      // A payment the ledger refused (its transaction already confirms a withdrawal: an operator
      // review paid a withdrawal and an order in one batch transaction). The money is on chain;
      // nothing in the ledger moved, and summary said nothing of it.
      db.prepare(`insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at, counted_at)
        values ('1', ?, 1, 99, ?, ?, ?, ?, ?, '2000000', 2000000, 'refused', ?, null)`).run(refusedTx, `0x${'b'.repeat(64)}`, Date.now(), unpaid.id, USDT_ETH, unpaid.addresses.EVM, Date.now());
      // What the sender leaves when the last retry failed.
      expect(db.prepare("update callbacks set status = 'failed' where subject_id = ? and event = 'order.paid'").run(a).changes).toBe(1);
      db.prepare('insert into chain_cursors (chain_id, next_block, head, head_at, updated_at) values (?, ?, ?, ?, ?)').run('1', 101, 110, Date.now(), Date.now());
    } finally {
      db.close();
    }

    const [plain, json] = await Promise.all([s.run(['summary']), s.json(['summary'])]);
    const oneDay = utcDay(Date.now()) === startedOn;
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe('');
    const row = (label: string) => new RegExp(`^${label}\\s+(.*)$`, 'm').exec(plain.stdout)?.[1];
    expect(row('pending withdrawals')).toBe('2, 5.5 USDT: cryptopay withdraw list --status PENDING');
    if (oneDay) {
      expect(plain.stdout).toMatch(/^today\s+since \d{4}-\d\d-\d\dT00:00:00Z\n {2}payments\s+2, 120\.5 USDT\n {2}refunds\s+1, 10 USDT\n {2}withdrawals\s+1, 30 USDT\n/m);
      expect(plain.stdout).toMatch(/^this week\s+since \d{4}-\d\d-\d\dT00:00:00Z\n {2}payments\s+2, 120\.5 USDT\n/m);
    }
    // 120.5 paid, 10 refunded, 30 paid out, 5.5 held for the two pending withdrawals.
    expect(row('users hold')).toBe('available 75 USDT; held for withdrawals 5.5 USDT');
    expect(row('held payments')).toBe('none');
    expect(row('refused payments')).toBe(
      `1, 2 USDT (order ${unpaid.id}): on chain, not in the ledger; order show names each; decide each with cryptopay order credit-held ORDER --tx-hash H (credits its user; never test money of a development chain) or return-held (sent back)`,
    );
    expect(row('chain 1')).toMatch(/^Ethereum: 10 blocks behind \(block 100 of 110, head seen \d{4}-/);
    expect(row('failed callbacks')).toBe('1: cryptopay callbacks list --status failed');

    expect(json).toMatchObject({
      mchId: null,
      pendingWithdrawals: { count: 2, total: { USDT: '5.5' }, confirming: 0 },
      ...(oneDay && { today: { payments: { count: 2, total: { USDT: '120.5' } }, refunds: { count: 1, total: { USDT: '10' } }, withdrawals: { count: 1, total: { USDT: '30' } } } }),
      balances: { available: { USDT: '75' }, held: { USDT: '5.5' } },
      heldPayments: { count: 0, total: {} },
      refusedPayments: { count: 1, total: { USDT: '2' }, orders: [unpaid.id] },
      chains: [{ chainId: '1', head: 110, scannedTo: 100, lag: 10 }],
      failedCallbacks: 1,
    });
    // The week starts on a Monday, at or before today.
    const monday = new Date(json.week.since);
    expect(monday.getUTCDay()).toBe(1);
    expect(json.week.since).toBeLessThanOrEqual(json.today.since);

    // An operator decides the refused payment (a code review found the count could never go back
    // to zero, so its prompt to credit by hand stood for ever: a second operator would credit
    // twice). Credited to its user by hand, tied to the payment; the order stays as it was.
    const credited = await s.run(['order', 'credit-held', 'S-3', '--tx-hash', refusedTx, '--reason', 'paid in a batch payout', '--yes']);
    expect(credited.code, credited.stderr).toBe(0);
    expect(await s.json(['balance', 'u3'])).toMatchObject({ available: '2' });
    expect(await s.json(['order', 'show', 'S-3'])).toMatchObject({ status: 'PENDING_PAY', paidAmount: '0', onChain: [{ status: 'credited' }] });
    expect(await s.json(['log', '--order', unpaid.id])).toContainEqual(
      expect.objectContaining({ action: 'order.refused_payment_credited', detail: expect.objectContaining({ reason: 'paid in a batch payout', amount: '2', uid: 'u3' }) }),
    );
    const after = await s.run(['summary']);
    expect(new RegExp('^refused payments\\s+(.*)$', 'm').exec(after.stdout)?.[1]).toBe('none');
    // Credited by hand is an adjustment of the period: the figures still add up.
    if (utcDay(Date.now()) === startedOn) expect((await s.json<{ today: { adjustments: unknown } }>(['summary'])).today.adjustments).toEqual({ count: 1, credited: { USDT: '2' }, debited: {} });
    const again = await s.run(['order', 'credit-held', 'S-3', '--tx-hash', refusedTx, '--reason', 'twice', '--yes']);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('is credited, not held: nothing was changed')]);
    expect(await s.json(['balance', 'u3'])).toMatchObject({ available: '2' });
    expect((await s.run(['ledger', 'check'])).code).toBe(0);

    expect(/^ledger\s+(.*)$/m.exec(after.stdout)?.[1]).toMatch(/^every merchant, at /);
    // One merchant's view: another merchant's money is not in it.
    const two = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Two', '--generate-wallet']);
    // The whole ledger's says whose totals it adds together.
    expect(/^ledger\s+(.*)$/m.exec((await s.run(['summary'])).stdout)?.[1]).toMatch(new RegExp(`^every merchant \\(2: ${s.mchId}, ${two.mchId}; one alone with --mch-id\\), at `));
    const [mine, theirs, unknown] = await Promise.all([
      s.json(['--mch-id', s.mchId, 'summary']),
      s.json(['--mch-id', two.mchId, 'summary']),
      s.run(['--mch-id', 'M999999', 'summary']),
    ]);
    // 75, and the 2 of the refused payment credited above.
    expect(mine).toMatchObject({ mchId: s.mchId, balances: { available: { USDT: '77' } } });
    expect(theirs).toMatchObject({ mchId: two.mchId, pendingWithdrawals: { count: 0 }, balances: { available: {} }, today: { payments: { count: 0 } }, failedCallbacks: 0 });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/merchant M999999 not found/);
    // A merchant whose users hold nothing yet: zero of the ledger's asset, not a bare 0.
    const empty = await s.run(['--mch-id', two.mchId, 'summary']);
    expect(/^users hold\s+(.*)$/m.exec(empty.stdout)?.[1]).toBe('available 0 USDT; held for withdrawals 0 USDT');
  });

  it("summary counts the period's balance adjustments, so that its figures add up to what users hold", async () => {
    const startedOn = utcDay(Date.now());
    const s = await withMerchant();
    await paidOrder(s, 'R-1', 'u1', '100');
    await paidOrder(s, 'R-2', 'u2', '20.5');
    await s.json(['refund', '--oid', 'R-1', '--amount', '10', '--yes']);
    const w = await s.json<{ id: string }>(apply('u1', '30'));
    await s.json(['withdraw', 'confirm', w.id, '--tx-hash', evmTx(), '--block-number', '5', '--yes']);
    await s.json(apply('u2', '0.5'));
    await s.json(['balance', 'adjust', 'u1', '--amount', '+5', '--reason', 'goodwill', '--yes']);
    await s.json(['balance', 'adjust', 'u2', '--amount', '-1.25', '--reason', 'chargeback fee', '--yes']);
    const two = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Two', '--generate-wallet']);
    await s.json(['balance', 'adjust', 'x9', '--amount', '+7', '--reason', 'another shop', '--yes', '--mch-id', two.mchId]);

    type Period = { payments: { total: Record<string, string> }; refunds: { total: Record<string, string> }; withdrawals: { total: Record<string, string> }; adjustments: { count: number; credited: Record<string, string>; debited: Record<string, string> } };
    const [plain, json, theirs] = await Promise.all([
      s.run(['--mch-id', s.mchId, 'summary']),
      s.json<{ today: Period; week: Period; balances: { available: Record<string, string>; held: Record<string, string> } }>(['--mch-id', s.mchId, 'summary']),
      s.json<{ today: Period; week: Period }>(['--mch-id', two.mchId, 'summary']),
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    if (utcDay(Date.now()) !== startedOn) return;
    for (const p of [json.today, json.week]) expect(p.adjustments).toEqual({ count: 2, credited: { USDT: '5' }, debited: { USDT: '1.25' } });
    expect(theirs.today.adjustments).toEqual({ count: 1, credited: { USDT: '7' }, debited: {} });
    const day = new Date(Date.now()).toISOString().slice(0, 10);
    expect(plain.stdout).toMatch(new RegExp(`^ {2}withdrawals\\s+1, 30 USDT\\n {2}adjustments\\s+2, 5 USDT credited to users; 1\\.25 USDT debited from users: each in cryptopay log --since ${day}\\n`, 'm'));
    // What came in, less what went out, either way an operator moved it: what users hold.
    const u = (t: Record<string, string>) => parseAmount(t.USDT ?? '0', 6);
    const t = json.today;
    const moved = u(t.payments.total) - u(t.refunds.total) - u(t.withdrawals.total) + u(t.adjustments.credited) - u(t.adjustments.debited);
    expect(moved).toBe(u(json.balances.available) + u(json.balances.held));
    expect(moved).toBe(84_250_000n);
    // A merchant with no adjustment: none, not an empty figure.
    const quiet = await withMerchant();
    expect(/^ {2}adjustments\s+(.*)$/m.exec((await quiet.run(['summary'])).stdout)?.[1]).toBe('none');
  });

  it('log --follow prints the last entries, then each new one as it is written, and ends quietly on SIGTERM', async () => {
    const s = await withMerchant();
    await paidOrder(s, 'F-1', 'u1', '10');
    const child = spawn(process.execPath, [BIN, '--db', s.db, 'log', '--follow'], { env: cliEnv(CLEAN_ENV as Record<string, string>), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = async (re: RegExp) => {
      for (let i = 0; i < 400 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      expect(out).toMatch(re);
    };
    try {
      // The last entries first, oldest first.
      await until(/order\.payment_recorded/);
      expect(out.split('\n').filter(Boolean).map((l) => l.split('\t')[2])).toEqual(['merchant.created', 'order.payment_recorded']);
      await s.json(['balance', 'adjust', 'u1', '--amount', '+2', '--reason', 'goodwill', '--yes']);
      await until(/balance\.adjusted/);
      await s.json(['refund', '--oid', 'F-1', '--amount', '1', '--yes']);
      await until(/order\.refunded/);
      expect(out.split('\n').filter(Boolean).map((l) => l.split('\t')[2])).toEqual(['merchant.created', 'order.payment_recorded', 'balance.adjusted', 'order.refunded']);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await closed).toBe(0);
    expect(err).toBe('');
  });

  // An attacker review (session 24): a refund remark erased the real line on the operator's
  // terminal, wrote a forged chain entry and set the clipboard (OSC 52); in a pipe a newline in it
  // forged a whole entry. Every field now goes out as in every other view of the log.
  const FORGED = '\r\u001b[2K2026-11-25T05:50:00.000Z  chain:1  order.payment_recorded\u001b]52;c;MHhCQUQ=\u0007\n2026-11-25T05:50:00.000Z\tchain:1\twithdrawal.confirmed\twithdrawal:wd_x\tamount=2';
  it('log --follow shows a remark with escapes and newlines as text, in a pipe (escaped, one line per entry) and on a terminal (marked)', async () => {
    const s = await withMerchant();
    await paidOrder(s, 'E-1', 'u1', '10');
    await s.json(['refund', '--oid', 'E-1', '--amount', '1', '--remark', FORGED, '--yes']);
    const child = spawn(process.execPath, [BIN, '--db', s.db, 'log', '--follow'], { env: cliEnv(CLEAN_ENV as Record<string, string>), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      for (let i = 0; i < 400 && !/order\.refunded/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      child.kill('SIGTERM');
    }
    expect(await closed).toBe(0);
    const lines = out.split('\n').filter(Boolean);
    expect(lines.map((l) => l.split('\t')[2])).toEqual(['merchant.created', 'order.payment_recorded', 'order.refunded']);
    expect(out).not.toMatch(/[\u001b\u0007\r]/);
    expect(lines[2]).toContain('remark=\\r\\u001b[2K2026-11-25T05:50:00.000Z  chain:1  order.payment_recorded\\u001b]52;c;MHhCQUQ=\\u0007\\n2026-11-25T05:50:00.000Z\\tchain:1');
    if (HAS_SCRIPT) {
      const tty = await runPty(['--db', s.db, 'log', '--follow'], { steps: [{ waitFor: /order\.refunded/, send: '\u0003' }] });
      expect(tty.out).not.toMatch(/\u001b\]52|\u001b\[2K|\u0007/);
      const entry = tty.out.split(/\r?\n/).find((l) => l.includes('order.refunded'))!;
      expect(entry).toContain('remark=\ufffd\ufffd[2K2026-11-25T05:50:00.000Z  chain:1  order.payment_recorded\ufffd]52;c;MHhCQUQ=\ufffd\ufffd2026-11-25T05:50:00.000Z\ufffdchain:1');
    }
  });

  it('log --follow --json writes one entry per line, filtered by an oid; --follow with --cursor is a usage error', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'J-1', 'u1', '10');
    await paidOrder(s, 'J-2', 'u1', '10');
    const bad = await s.run(['log', '--follow', '--cursor', '3']);
    expect(bad.code).toBe(2);
    const child = spawn(process.execPath, [BIN, '--db', s.db, '--json', 'log', '--follow', '--order', 'J-1'], { env: cliEnv(CLEAN_ENV as Record<string, string>), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const entries = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { action: string; subject: string });
    try {
      for (let i = 0; i < 400 && entries().length < 1; i++) await new Promise((r) => setTimeout(r, 50));
      await s.json(['refund', '--oid', 'J-2', '--amount', '1', '--yes']);
      // A remark with a C1 control and a bidi override: a code review found --follow --json wrote
      // them raw where --json (printJson) escapes them.
      await s.json(['refund', '--oid', 'J-1', '--amount', '2', '--remark', 'dent\u009b31m\u202eed', '--yes']);
      for (let i = 0; i < 400 && entries().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      child.kill('SIGINT');
    }
    expect(await closed).toBe(0);
    expect(entries().map((e) => [e.action, e.subject])).toEqual([['order.payment_recorded', `order:${id}`], ['order.refunded', `order:${id}`]]);
    expect((entries()[1] as unknown as { detail: { remark: string } }).detail.remark).toBe('dent\u009b31m\u202eed');
    expect(out).not.toMatch(/[\u009b\u202e]/);
    expect(out).toContain('dent\\u009b31m\\u202eed');
  });
});
