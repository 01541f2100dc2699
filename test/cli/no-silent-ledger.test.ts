import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOW, sandbox } from './_support.js';

/** Issue #15 item 1 (spec decisions §10): a command that only reads never creates a ledger. */
describe.concurrent('never a silent empty ledger', { timeout: SLOW }, () => {
  it.each([
    [['order', 'list']],
    [['ledger', 'check']],
    [['order', 'status', 'ord_x']],
    [['balance', 'u1']],
    [['log']],
    [['merchant', 'list']],
    [['withdraw', 'list']],
    [['callbacks', 'list']],
    [['callbacks', 'show', 'evt_x']],
  ])('%j on a path with no ledger: exit 3 naming the path, and nothing is created', async (args) => {
    const s = sandbox();
    const typo = join(s.dir, 'typo', 'x.db');
    const r = await s.bare(['--db', typo, ...args]);
    expect(r).toEqual({
      code: 3,
      stdout: '',
      stderr: `error: no ledger at ${typo} (nothing was created): check --db or CRYPTOPAY_DB, or start a ledger with cryptopay merchant add\n`,
    });
    expect(existsSync(join(s.dir, 'typo'))).toBe(false);
  });

  it('--json gives the same refusal as JSON', async () => {
    const s = sandbox();
    const typo = join(s.dir, 'nope.db');
    const r = await s.bare(['--db', typo, '--json', 'order', 'list']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr)).toEqual({ error: { kind: 'unavailable', message: expect.stringContaining(`no ledger at ${typo}`) } });
  });

  it('merchant add starts a ledger where there was none', async () => {
    const s = sandbox();
    const fresh = join(s.dir, 'new', 'ledger.db');
    expect((await s.bare(['--db', fresh, 'merchant', 'add', '--name', 'Shop', '--generate-wallet'])).code).toBe(0);
    expect(existsSync(fresh)).toBe(true);
    expect((await s.bare(['--db', fresh, 'order', 'list'])).code).toBe(0);
  });
});
