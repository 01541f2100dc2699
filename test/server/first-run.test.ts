/**
 * serve's first run (issue #10 item 6, decisions §10). A plain `serve` on an empty ledger
 * creates nothing: it starts, listens and says how to add a merchant, which it then serves
 * without a restart (merchants are read per request). Only `serve --dev` creates a development
 * merchant (process.test.ts), and only on an empty ledger. No server command prints a mnemonic.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { chainsConfigPath } from '../../src/context.js';
import { sign } from '../../src/signing/index.js';
import { mnemonicIn } from './first-run.js';
import { httpJson, killAll, nextNonce, runCli, spawnServe, tempDir } from './helpers.js';

const tmp = tempDir();
let n = 0;
const newDb = () => join(tmp.dir, `first-run-${++n}.db`);

afterEach(() => killAll());
afterAll(() => tmp.cleanup());

const merchants = async (db: string) => {
  const r = await runCli(['merchant', 'list', '--db', db, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { mchId: string }[];
};

/**
 * serve names itself as it was run, so the lines can be pasted: a new user found `cryptopay …`
 * "command not found" after npm ci. These tests run it from the checkout, as the README does.
 */
const CLI = './bin/cryptopay';
const HINT = (db: string) =>
  [
    'The ledger has no merchant yet, so every signed request is refused. Add one; the server picks it up at once, no restart needed:',
    `  ${CLI} merchant add --db ${db} --name "My shop" --generate-wallet`,
    `Or, to try it out, start with \`${CLI} serve --dev\`: on an empty ledger it creates a development merchant and prints how to use it.`,
  ].join('\n');

// The file by its path, CRYPTOPAY_CHAINS set or not (it named "the file CRYPTOPAY_CHAINS names" when unset: a new-user trial).
const NO_CHAIN =
  `no chain is watched (none in the chains config has an rpcUrl and a token): payments on chain are not seen, and orders turn PAID only by order mark-paid; give a chain an rpcUrl in the chains config, ${chainsConfigPath(process.env)} (docs/operations.md, "Chains and tokens")`;

describe('plain serve on an empty ledger', () => {
  it('starts, creates no merchant, prints how to add one; a merchant added while it runs is served at once', async () => {
    const db = newDb();
    const srv = await spawnServe(db);
    await srv.waitFor(/no chain is watched.*\n/);
    // No chain with an rpcUrl: the operator hears that payments on chain will not be seen (a new
    // user's payment pages listed four mainnets that nothing watched, without a word).
    expect(srv.stderr()).toBe(`cryptopay serving ${srv.url}/api/v1 on the ledger ${db}\npayment pages at ${srv.url}/pay/{order id}\n${HINT(db)}\n${NO_CHAIN}\n`);
    expect((await httpJson(srv.url, '/healthz')).status).toBe(200);
    expect(await merchants(db)).toEqual([]);

    // The command the hint gives, run as printed by a shell, while the server runs.
    const { execFileSync } = await import('node:child_process');
    expect(process.cwd()).toBe(fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, ''));
    const printed = `${CLI} merchant add --db ${db} --name "My shop" --generate-wallet`;
    const added = { code: 0, stderr: '', stdout: execFileSync('sh', ['-c', `${printed} --json`], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } }) };
    expect(added.code, added.stderr).toBe(0);
    const m = JSON.parse(added.stdout) as { mchId: string; secret: string };
    const body = { mchId: m.mchId, oid: 'first', uid: 'u1', amount: '12.5', timestamp: Date.now(), nonce: nextNonce() };
    const r = await httpJson(srv.url, '/api/v1/order', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, sign: sign(body, m.secret) }),
    });
    expect(r.json, r.text).toMatchObject({ code: 1, data: { oid: 'first', status: 'PENDING_PAY', amount: '12.5' } });

    expect(await srv.stop(), srv.stderr()).toEqual({ code: 0, signal: null });
    expect(mnemonicIn(srv.stderr() + srv.stdout())).toBeUndefined();
    expect(srv.stderr()).not.toContain(m.secret);
  });

  it('quotes a ledger path that the shell would split', async () => {
    const db = join(tmp.dir, "my ledgers", "it's here.db");
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(tmp.dir, 'my ledgers'), { recursive: true });
    const srv = await spawnServe(db);
    await srv.waitFor(/--dev`: .*\n/);
    const quoted = `'${db.replace(/'/g, `'\\''`)}'`;
    expect(srv.stderr()).toContain(`  ${CLI} merchant add --db ${quoted} --name "My shop" --generate-wallet\n`);
    expect(await srv.stop(), srv.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('serve --dev on a ledger that has a merchant', () => {
  it('creates no second merchant and prints no secret', async () => {
    const db = newDb();
    const added = await runCli(['--json', 'merchant', 'add', '--db', db, '--name', 'Shop', '--generate-wallet']);
    const m = JSON.parse(added.stdout) as { mchId: string; secret: string };
    const srv = await spawnServe(db, {}, ['--dev']);
    await srv.waitFor(/sign requests with a merchant's secret: .*\n/);
    expect(srv.stderr()).toContain('development mode: the ledger already has a merchant, so none was created\n');
    // The one merchant is named, and a lost secret's way out said (a new-user trial met M... and nothing more).
    expect(srv.stderr()).toContain(`sign requests with a merchant's secret: ${CLI} sign --fill --mch-id ${m.mchId} key=value ... (the secret was printed once, when the merchant was added; if it is lost, ${CLI} merchant rotate-secret ${m.mchId} makes a new one and the old one stops working)\n`);
    expect(await merchants(db)).toEqual([expect.objectContaining({ mchId: m.mchId })]);
    expect(srv.stderr()).not.toContain(m.secret);
    expect(mnemonicIn(srv.stderr())).toBeUndefined();
    expect(await srv.stop(), srv.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('a port that is taken', () => {
  it('serve exits at once with a clear message and the --port 0 hint (exit 3); with --dev it creates no merchant', async () => {
    const { createServer } = await import('node:net');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as { port: number }).port;
    try {
      const db = newDb();
      for (const extra of [[], ['--dev']]) {
        const t0 = Date.now();
        const r = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port), '--db', db, ...extra]);
        expect(r).toEqual({
          code: 3,
          stdout: '',
          stderr: `error: cannot listen on 127.0.0.1:${port}: the port is in use (by another cryptopay serve?); pick another with --port, or --port 0 for any free one\n`,
        });
        expect(Date.now() - t0).toBeLessThan(10_000);
      }
      expect(await merchants(db)).toEqual([]);
    } finally {
      busy.close();
    }
  });
});

describe('stopped the moment it says it serves', () => {
  it('still stops cleanly (exit 0, the stop lines), every time', async () => {
    // The signal used to be listened for only after the start-up lines: a supervisor that
    // stopped serve as soon as it read them could kill it outright (about 1 start in 3 here).
    for (let i = 0; i < 6; i++) {
      const srv = await spawnServe(newDb());
      srv.child.kill('SIGTERM');
      expect(await srv.exited).toEqual({ code: 0, signal: null });
      expect(srv.stderr()).toMatch(/SIGTERM: finishing requests in flight, then stopping\nstopped; ledger closed\n$/);
    }
  });
});

it('the mnemonic detector finds a mnemonic (so its silence above means something)', () => {
  const phrase = 'test test test test test test test test test test test junk';
  expect(mnemonicIn(`  wallet  ${phrase}\n`)).toBe(phrase);
  expect(mnemonicIn('The ledger was empty, so a development merchant was created')).toBeUndefined();
});
