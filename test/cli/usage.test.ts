import { describe, expect, it } from 'vitest';
import { ESC, EVM_TO, paidOrder, sandbox, SLOW, USDT_ETH, withMerchant } from './_support.js';

// Every test has its own ledger: they run side by side.
describe.concurrent('usage', { timeout: SLOW }, () => {
  describe('help and usage errors', () => {
    it('balance adjust --help says (required) once for --reason', async () => {
      const r = await sandbox().bare(['balance', 'adjust', '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^ {2}--reason <text> +why \(kept in the audit log\) \(required\)$/m);
    });

    it("every command that takes an order by id says it takes the merchant's oid too (a new-user trial dug the ord_ id out of JSON for dev pay)", async () => {
      const s = sandbox();
      for (const cmd of [['dev', 'pay'], ['order', 'mark-paid'], ['order', 'credit-held'], ['order', 'return-held'], ['order', 'show'], ['order', 'status']]) {
        const r = await s.bare([...cmd, '--help']);
        expect(r.code, cmd.join(' ')).toBe(0);
        expect(r.stdout, cmd.join(' ')).toMatch(/^ {2}id +an order id \(ord_…\), or the merchant order number \(oid\)$/m);
      }
    });

    it('--help says csv is the format for a spreadsheet and tsv is not guarded against formulas (an attacker review opened a tsv of =HYPERLINK oids)', async () => {
      const r = await sandbox().bare(['--help']);
      expect(r.code).toBe(0);
      const format = r.stdout.replace(/\s+/g, ' ');
      expect(format).toMatch(/--format <format> how lists are written: .*tsv \(default in a pipe: exact values for scripts, formulas not defused\), csv \(for spreadsheets: a cell that would run as a formula is written as text\)/);
    });

    it('--help exits 0 and lists every command', async () => {
      const s = sandbox();
      const [top, order, withdraw, merchant, helpCmd] = await Promise.all([
        s.bare(['--help']),
        s.bare(['order', '--help']),
        s.bare(['withdraw', '--help']),
        s.bare(['merchant', '--help']),
        s.bare(['help', 'refund']),
      ]);
      expect(top.code).toBe(0);
      expect(top.stdout).toMatch(/^Usage: cryptopay/);
      for (const cmd of ['merchant', 'order', 'address', 'refund', 'withdraw', 'balance', 'log', 'ledger', 'chains', 'sign']) {
        expect(top.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
      }
      for (const opt of ['--db', '--json', '--yes', '--mch-id', '--secret-file']) expect(top.stdout).toContain(opt);
      // The flag that is always refused is not advertised.
      expect(top.stdout).not.toMatch(/--secret </);
      expect(order.code).toBe(0);
      for (const sub of ['create', 'status', 'show', 'list', 'mark-paid']) expect(order.stdout).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
      expect(withdraw.code).toBe(0);
      for (const sub of ['apply', 'confirm', 'reject', 'list', 'show']) expect(withdraw.stdout).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
      expect(merchant.code).toBe(0);
      for (const sub of ['add', 'list', 'show', 'rotate-secret']) expect(merchant.stdout).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
      expect(helpCmd.code).toBe(0);
      expect(helpCmd.stdout).toMatch(/Usage: cryptopay refund/);
      expect(helpCmd.stdout).toContain('--amount');
    });

    it('an unknown command, an unknown option, a missing argument or subcommand: exit 2 with the reason on stderr', async () => {
      const s = sandbox();
      const [cmd, sub, opt, globalOpt, noArg, noValue, bareGroup, refundSub] = await Promise.all([
        s.run(['refnud']),
        s.run(['order', 'cancel', 'x']),
        s.run(['order', 'list', '--colour']),
        s.run(['--verbose', 'order', 'list']),
        s.run(['order', 'status']),
        s.run(['order', 'list', '--limit']),
        s.run(['withdraw']),
        // refund runs on its own and has a command: a word after it is a mistyped one.
        s.run(['refund', 'lsit']),
      ]);
      for (const r of [cmd, sub, opt, globalOpt, noArg, noValue, bareGroup, refundSub]) expect(r.code).toBe(2);
      expect(refundSub.stderr).toBe("error: unknown command 'lsit'\n(Did you mean list?)\n");
      expect(cmd.stderr).toMatch(/unknown command 'refnud'/);
      expect(cmd.stderr).toMatch(/Did you mean refund\?/);
      expect(sub.stderr).toMatch(/unknown command 'cancel'/);
      expect(opt.stderr).toMatch(/unknown option '--colour'/);
      expect(globalOpt.stderr).toMatch(/unknown option '--verbose'/);
      expect(noArg.stderr).toMatch(/missing required argument 'id'/);
      expect(noValue.stderr).toMatch(/option '--limit <n>' argument missing/);
      expect(bareGroup.stderr).toMatch(/Usage: cryptopay withdraw/);
      for (const r of [cmd, sub, opt, globalOpt, noArg, noValue]) expect(r.stdout).toBe('');
    });
  });

  describe('piped output', () => {
    it('an option that takes a value, given twice, is a usage error that changes nothing: the last value no longer wins silently', async () => {
      const m = await withMerchant();
      const id = await paidOrder(m, 'T-1', 'u1', '100');
      const [refund, create, dbs, mchIds, json] = await Promise.all([
        m.run(['refund', '--id', id, '--amount', '1', '--amount', '50', '--yes']),
        m.run(['order', 'create', '--oid', 'X-1', '--uid', 'u1', '--amount', '1', '--oid', 'X-2']),
        m.bare(['--db', m.db, 'order', 'list', '--db', `${m.db}.other`]),
        m.run(['--mch-id', m.mchId, 'balance', 'u1', '--mch-id', m.mchId]),
        m.run(['--json', 'refund', '--id', id, '--amount=1', '--amount=50', '--yes']),
      ]);
      expect(refund).toEqual({ code: 2, stdout: '', stderr: 'error: --amount is given twice: give it once\n' });
      expect(create).toEqual({ code: 2, stdout: '', stderr: 'error: --oid is given twice: give it once\n' });
      expect(dbs).toEqual({ code: 2, stdout: '', stderr: 'error: --db is given twice: give it once\n' });
      expect(mchIds).toEqual({ code: 2, stdout: '', stderr: 'error: --mch-id is given twice: give it once\n' });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'usage', message: '--amount is given twice: give it once' } });
      const order = await m.json<{ refundedAmount: string }>(['order', 'show', id]);
      expect(order.refundedAmount).toBe('0');
      expect(await m.json(['order', 'list'])).toHaveLength(1);
      // A flag without a value, twice, says the same thing twice: accepted.
      expect((await m.run(['--json', 'order', 'list', '--json'])).code).toBe(0);
    });

    it('--operator cannot pass a change off as the API\'s or a chain watcher\'s in the audit log, nor be empty or hidden text: exit 2, nothing logged', async () => {
      const m = await withMerchant();
      const adjust = (operator: string) => m.run(['balance', 'adjust', 'u1', '--amount', '+1', '--reason', 'r', '--operator', operator, '--yes']);
      const lookAlikes = ['api\u200c:M100001', '\u0430pi:M100001', 'api\uff1aM100001', 'chain\u02d01', 'a\u202eb', 'a\u001b[2Jb', 'op:1'];
      const refusals = await Promise.all(['api:M100001', 'chain:1', 'API:x', ' Chain:56', '', 'x'.repeat(65), ...lookAlikes].map(adjust));
      expect(refusals.map((r) => [r.code, r.stdout, r.stderr])).toEqual([
        ...['api:M100001', 'chain:1', 'API:x', ' Chain:56'].map(() => [2, '', 'error: --operator must not start with api: or chain:, which name the API and the chain watcher in the audit log\n']),
        [2, '', 'error: --operator must not be empty\n'],
        [2, '', 'error: --operator must be at most 64 characters\n'],
        ...lookAlikes.map(() => [2, '', 'error: --operator may hold only letters A-Z and a-z, digits, spaces and . _ @ + -\n']),
      ]);
      expect(await m.run(['balance', 'u1'])).toMatchObject({ code: 1, stderr: expect.stringContaining('user u1 has no activity') });
      expect((await adjust('alice.o-brien+ops@example.com')).code).toBe(0);
      expect((await m.json<{ actor: string }[]>(['log'])).map((e) => e.actor)).toContain('alice.o-brien+ops@example.com');
    });

    it('--reason, kept in the audit log, holds no control or hidden characters and at most 256 characters: balance adjust, withdraw confirm --unverified, order credit-held, withdraw reject --unverified', async () => {
      const m = await withMerchant();
      const bad = ['a\u001b[2Jb', 'a\u202eb', 'x'.repeat(3000)];
      const runs = await Promise.all(bad.flatMap((reason) => [
        m.run(['balance', 'adjust', 'u1', '--amount', '+1', '--reason', reason, '--yes']),
        m.run(['withdraw', 'confirm', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--tx-hash', `0x${'1'.repeat(64)}`, '--block-number', '5', '--unverified', '--reason', reason, '--yes']),
        m.run(['order', 'credit-held', 'ord_AAAAAAAAAAAAAAAAAAAAAA', '--tx-hash', `0x${'2'.repeat(64)}`, '--reason', reason, '--yes']),
        m.run(['withdraw', 'reject', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--unverified', '--reason', reason, '--yes']),
      ]));
      const why = [/^error: --reason must not contain control characters\n$/, /^error: --reason must not contain invisible or direction-changing characters/, /^error: --reason must be at most 256 characters\n$/];
      expect(runs.map((r) => r.code)).toEqual(runs.map(() => 2));
      runs.forEach((r, i) => expect(r.stderr).toMatch(why[Math.floor(i / 4)]!));
      expect(await m.run(['balance', 'u1'])).toMatchObject({ code: 1 });
    });

    it('withdraw reject judges --remark before anything is asked or read, as refund does: exit 2, the withdrawal still pending', async () => {
      const m = await withMerchant();
      await paidOrder(m, 'W-1', 'u1', '10');
      const w = await m.json<{ id: string }>(['withdraw', 'apply', '--uid', 'u1', '--amount', '2', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]);
      const [amp, long, unknown] = await Promise.all([
        m.run(['withdraw', 'reject', w.id, '--remark', 'a&b', '--yes']),
        m.run(['withdraw', 'reject', w.id, '--remark', 'x'.repeat(257), '--yes']),
        m.run(['withdraw', 'reject', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--remark', 'a&b']),
      ]);
      expect(amp).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/^error: --remark must not contain "&"/) });
      expect(long).toEqual({ code: 2, stdout: '', stderr: 'error: --remark must be at most 256 characters\n' });
      expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --remark must not contain "&"/) });
      expect(await m.json(['withdraw', 'show', w.id])).toMatchObject({ status: 'PENDING' });
      // Rejecting without asking the chain whether it was paid out needs the reason the audit log keeps, and only then takes one.
      const [bare, reasonOnly, blank] = await Promise.all([
        m.run(['withdraw', 'reject', w.id, '--unverified', '--yes']),
        m.run(['withdraw', 'reject', w.id, '--reason', 'paid elsewhere', '--yes']),
        m.run(['withdraw', 'reject', w.id, '--unverified', '--reason', '  ', '--yes']),
      ]);
      expect(bare).toEqual({ code: 2, stdout: '', stderr: 'error: --unverified needs --reason TEXT: why the chain is not asked whether it was paid out (kept in the audit log)\n' });
      expect(reasonOnly).toEqual({ code: 2, stdout: '', stderr: 'error: --reason goes with --unverified\n' });
      expect(blank).toEqual(bare);
      expect(await m.json(['withdraw', 'show', w.id])).toMatchObject({ status: 'PENDING' });
    });

    it('has no ANSI escape codes, with or without NO_COLOR, for tables, records, warnings and errors', async () => {
      const s = await withMerchant();
      const id = await paidOrder(s, 'N-1', 'u1', '5');
      const commands: string[][] = [
        ['order', 'list'],
        ['order', 'show', id],
        ['merchant', 'list'],
        ['merchant', 'add', '--name', 'Two', '--generate-wallet'],
        ['refund', '--id', id, '--amount', '1'],
        ['order', 'status', 'ord_nope000000000000000'],
        ['log'],
        ['chains'],
        ['withdraw', 'apply', '--uid', 'u1', '--amount', '1', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH],
        ['--help'],
      ];
      // Piped, colour is off whether or not NO_COLOR says so; a TERM that supports colour changes nothing.
      // (--mch-id: the merchant added alongside must not make the others ambiguous.)
      const run = (args: string[], NO_COLOR?: string) => s.run(['--mch-id', s.mchId, ...args], { env: { NO_COLOR, TERM: 'xterm-256color' } });
      const runs = await Promise.all([...commands.map((args) => run(args)), ...commands.slice(0, 3).map((args) => run(args, '1'))]);
      runs.forEach((r, i) => {
        const label = commands[i % commands.length]!.join(' ');
        expect(r.stdout + r.stderr, label).not.toContain(ESC);
        expect(r.stdout + r.stderr, label).not.toBe('');
      });
      // Plain rows, tab-separated, no table borders.
      const list = runs[0]!.stdout;
      expect(list).not.toMatch(/[│┌─]/);
      expect(list.split('\n')[0]).toBe('id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires');
      expect(list.split('\n')[1]!.split('\t')[0]).toBe(id);
      expect(runs[commands.length]!.stdout).toBe(list);
      // The refund without --yes was refused and changed nothing.
      expect(runs[4]!.code).toBe(2);
      expect((await s.json(['order', 'show', id])).refundedAmount).toBe('0');
    });
  });
});
