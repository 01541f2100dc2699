/**
 * On a terminal the CLI asks: for a missing required option, and before it changes money. Run
 * under a real pseudo-terminal with util-linux `script`; skipped where `script` is missing.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { balanceOf, ESC, HAS_SCRIPT, paidOrder, runPty, SLOW, withMerchant } from './_support.js';

describe.skipIf(!HAS_SCRIPT).concurrent('on a terminal (script -qec)', { timeout: SLOW }, () => {
  it('--help is wrapped to the terminal\'s width, and to 80 columns in a pipe', async () => {
    const widest = (text: string) => Math.max(...text.split(/\r?\n/).map((l) => l.length));
    const wide = await runPty(['--help'], { columns: 150 });
    const narrow = await runPty(['--help'], { columns: 100 });
    const piped = await runCli(['--help']);
    expect([wide.code, narrow.code, piped.code]).toEqual([0, 0, 0]);
    // The program's description is one line of ~100 characters on a wide terminal only.
    expect(wide.text).toMatch(/Crypto payment back office: payment orders, refunds and withdrawals on EVM chains and TRON/);
    expect(widest(wide.text)).toBeGreaterThan(100);
    expect(widest(wide.text)).toBeLessThanOrEqual(150);
    expect(widest(narrow.text)).toBeGreaterThan(80);
    expect(widest(narrow.text)).toBeLessThanOrEqual(100);
    expect(widest(piped.stdout)).toBeLessThanOrEqual(80);
    expect(piped.stdout).not.toMatch(/Crypto payment back office: payment orders, refunds and withdrawals on EVM chains/);
  });

  it('a missing required option is asked for, and the answer is used', async () => {
    const s = await withMerchant();
    const r = await runPty(['--db', s.db, 'order', 'create', '--uid', 'u1', '--amount', '5'], {
      steps: [{ waitFor: /Merchant order number \(oid\)/, send: 'PTY-1\r' }],
    });
    expect(r.code, r.text).toBe(0);
    expect(r.text).toMatch(/oid\s+PTY-1/);
    expect(r.text).toMatch(/status\s+PENDING_PAY/);
    const list = await s.json(['order', 'list']);
    expect(list.map((o: { oid: string; uid: string; amount: string }) => [o.oid, o.uid, o.amount])).toEqual([['PTY-1', 'u1', '5']]);
  });

  it('a refund shows what will happen and asks "Go ahead?" before changing money', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'T-1', 'u1', '10');

    const no = await runPty(['--db', s.db, 'refund', '--id', id, '--amount', '2', '--remark', 'dented'], {
      steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }],
    });
    expect(no.text).toMatch(/Refund:/);
    expect(no.text).toMatch(new RegExp(`order\\s+${id} \\(oid T-1\\), PAID`));
    expect(no.text).toMatch(/refunded\s+0 -> 2 USDT of 10 USDT paid/);
    expect(no.text).toMatch(/user\s+u1: available 10 -> 8 USDT/);
    expect(no.text).toMatch(/remark\s+dented/);
    expect(no.code).toBe(1);
    expect(no.text).toMatch(/cancelled: nothing was changed/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '10', held: '0' });
    expect(await s.json(['refund', 'list'])).toEqual([]);

    const yes = await runPty(['--db', s.db, 'refund', '--id', id, '--amount', '2', '--remark', 'dented'], {
      steps: [{ waitFor: /Go ahead\?/, send: 'y\r' }],
    });
    expect(yes.code, yes.text).toBe(0);
    expect(yes.text).toMatch(/refunded\s+2 USDT \(8 USDT left to refund\)/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '8', held: '0' });

    // --yes skips the question on a terminal too.
    const skip = await runPty(['--db', s.db, 'refund', '--id', id, '--amount', '1', '--yes']);
    expect(skip.code, skip.text).toBe(0);
    expect(skip.text).not.toMatch(/Go ahead\?/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '7', held: '0' });

    // Neither --id nor --oid: the order is asked for, by id or oid (an operator trial typed the
    // oid and got a bare "Order not found").
    const byOid = await runPty(['--db', s.db, 'refund', '--amount', '1'], {
      steps: [{ waitFor: /Order \(its id or oid\)/, send: 'T-1\r' }, { waitFor: /Go ahead\?/, send: 'y\r' }],
    });
    expect(byOid.code, byOid.text).toBe(0);
    expect(byOid.text).toMatch(new RegExp(`order\\s+${id} \\(oid T-1\\), PAID`));
    expect(await balanceOf(s, 'u1')).toEqual({ available: '6', held: '0' });
    const unknown = await runPty(['--db', s.db, 'refund', '--amount', '1'], { steps: [{ waitFor: /Order \(its id or oid\)/, send: 'T-9\r' }] });
    expect(unknown.code).toBe(1);
    expect(unknown.text).toMatch(/Order not found: no order has the id T-9/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '6', held: '0' });
  });

  it('colour and tables on a terminal; NO_COLOR takes the colour away', async () => {
    const s = await withMerchant();
    await s.json(['order', 'create', '--oid', 'C-1', '--uid', 'u1', '--amount', '1']);
    const [coloured, plain, table] = await Promise.all([
      runPty(['--db', s.db, 'merchant', 'show'], { env: { NO_COLOR: undefined } }),
      runPty(['--db', s.db, 'merchant', 'show'], { env: { NO_COLOR: '1' } }),
      runPty(['--db', s.db, 'order', 'list'], { env: { NO_COLOR: '1' } }),
    ]);
    for (const r of [coloured, plain, table]) expect(r.code, r.text).toBe(0);
    expect(coloured.out).toContain(ESC);
    expect(coloured.text).toMatch(/mchId\s+M\d+/);
    expect(plain.out).not.toContain(ESC);
    expect(plain.out).toMatch(/mchId\s+M\d+/);
    expect(table.out).not.toMatch(/[┌│─]/);
    expect(table.out).toMatch(/ID\s+OID\s+UID/);
  });
});

describe.skipIf(!HAS_SCRIPT).concurrent('Ctrl-C at a prompt (issue #15 item 5)', { timeout: SLOW }, () => {
  it('says "cancelled: nothing was changed" and exits 130, with no internal error', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'C-1', 'u1', '10');
    const asked = await runPty(['--db', s.db, 'order', 'create', '--uid', 'u1', '--amount', '5'], {
      steps: [{ waitFor: /Merchant order number \(oid\)/, send: '\x03' }],
    });
    expect(asked.code, asked.text).toBe(130);
    expect(asked.text).toMatch(/cancelled: nothing was changed/);
    expect(asked.text).not.toMatch(/internal error|force closed/);
    const confirming = await runPty(['--db', s.db, 'refund', '--id', id, '--amount', '2', '--remark', 'x'], {
      steps: [{ waitFor: /Go ahead\?/, send: '\x03' }],
    });
    expect(confirming.code, confirming.text).toBe(130);
    expect(confirming.text).toMatch(/cancelled: nothing was changed/);
    expect(await balanceOf(s, 'u1')).toEqual({ available: '10', held: '0' });
    expect(await s.json(['order', 'list'])).toHaveLength(1);
  });
});
