import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SLOW, sandbox, withMerchant } from './_support.js';

const journal = JSON.parse(readFileSync(new URL('../../src/store/migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const SCHEMA = journal.entries.length;

/** Issue #15 item 9: version, completion. */
describe.concurrent('habits of good CLIs', { timeout: SLOW }, () => {
  it('--version and version name the build and the ledger schema; version reads a ledger without creating one', async () => {
    const s = sandbox();
    expect(await s.bare(['--version'])).toEqual({ code: 0, stdout: `cryptopay ${pkg.version} (ledger schema ${SCHEMA})\n`, stderr: '' });
    // Every way of asking (the text is read only when the line asks: src/main.ts asksVersion).
    for (const line of [['-V'], ['--yes', '-V'], ['-yV'], ['--json', '--version']]) {
      expect(await s.bare(line), line.join(' ')).toEqual({ code: 0, stdout: `cryptopay ${pkg.version} (ledger schema ${SCHEMA})\n`, stderr: '' });
    }
    const none = await s.run(['version']);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(new RegExp(`^cryptopay\\s+${pkg.version.replace(/\./g, '\\.')}$`, 'm'));
    expect(none.stdout).toMatch(new RegExp(`^ledger schema\\s+${SCHEMA}$`, 'm'));
    expect(none.stdout).toContain(`${s.db} (none yet)`);
    expect(spawnSync('test', ['-e', s.db]).status).toBe(1);
    const m = await withMerchant();
    const json = JSON.parse((await m.run(['--json', 'version'])).stdout);
    expect(json).toEqual({ version: pkg.version, schema: SCHEMA, node: process.versions.node, ledger: { path: m.db, exists: true, schema: SCHEMA }, remote: null });
  });

  it('version names the remote that operations go to when one is in effect (an operator walkthrough read only the local path)', async () => {
    const s = sandbox();
    const env = { CRYPTOPAY_REMOTE: 'http://127.0.0.1:2', CRYPTOPAY_MCH_ID: 'M100001' };
    const r = await s.bare(['version'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^remote +http:\/\/127\.0\.0\.1:2 \(CRYPTOPAY_REMOTE\): every command that has a remote form goes there$/m);
    expect(r.stdout).toMatch(/^local ledger +/m);
    const json = JSON.parse((await s.bare(['--json', 'version'], { env })).stdout);
    expect(json.remote).toEqual({ url: 'http://127.0.0.1:2', source: 'CRYPTOPAY_REMOTE' });
  });

  it('completion bash completes subcommands and each command\'s own options, in a real bash', async () => {
    const s = sandbox();
    const script = (await s.bare(['completion', 'bash'])).stdout;
    const complete = (...words: string[]) => {
      const r = spawnSync('bash', ['-c', `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _cryptopay; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.trim().split('\n').filter(Boolean).sort();
    };
    expect(complete('cryptopay', 'or')).toEqual(['order']);
    expect(complete('cryptopay', 'order', '')).toEqual(expect.arrayContaining(['create', 'status', 'show', 'list', 'mark-paid', 'held', 'credit-held', 'return-held', '--json']));
    expect(complete('cryptopay', 'order', 'create', '--o')).toEqual(['--oid', '--operator']);
    expect(complete('cryptopay', '--json', 'withdraw', 'con')).toEqual(['confirm']);
    expect(complete('cryptopay', 'ledger', 'b')).toEqual(['backup']);
    expect(complete('cryptopay', 'order', 'create', '--')).not.toContain('--version');
    // Registered for the name the README has a new user type (./bin/cryptopay from the checkout)
    // as well as for `cryptopay` on PATH: a new user's Tab did nothing.
    const registered = spawnSync('bash', ['-c', `${script}\ncomplete -p cryptopay; complete -p ./bin/cryptopay`], { encoding: 'utf8' });
    expect(registered.stderr).toBe('');
    expect(registered.stdout).toBe('complete -o default -F _cryptopay cryptopay\ncomplete -o default -F _cryptopay ./bin/cryptopay\n');
  });

  it('completion zsh and fish print scripts for those shells; another shell is a usage error', async () => {
    const s = sandbox();
    const zsh = await s.bare(['completion', 'zsh']);
    expect(zsh.stdout.split('\n')[0]).toBe('#compdef cryptopay');
    expect(zsh.stdout).toContain('complete -o default -F _cryptopay cryptopay');
    const fish = await s.bare(['completion', 'fish']);
    expect(fish.stdout).toContain(`complete -c cryptopay -n 'test "(__cryptopay_path)" = "order"' -a 'create status show find list mark-paid held credit-held return-held'`);
    expect(fish.stdout).toContain(`complete -c cryptopay -n 'test "(__cryptopay_path)" = "order:create"' -l oid`);
    const bad = await s.bare(['completion', 'tcsh']);
    expect(bad).toEqual({ code: 2, stdout: '', stderr: 'error: completion is for bash, zsh or fish, not "tcsh": cryptopay completion bash\n' });
  });
});
