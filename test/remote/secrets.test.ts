/**
 * A merchant secret is never printed, logged or put in an error message (decisions §10): a
 * whole remote session, every operation in success and failure, plain and --json, profiles and
 * secret files, and the server's access log and stderr, never show it (nor any 12 characters of
 * it). The only place it appears is the one-time output of `merchant add`. It is passed only by
 * environment or file, so it never shows in the argv that `ps` lists either.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  addMerchant,
  closedPort,
  EVM_TO,
  home,
  pathIn,
  serve,
  stopAll,
  tiny,
  USDT_ETH,
  type CliResult,
} from './_support.js';

afterAll(stopAll);

/** Every 12-character piece of the secret's random part: a partial leak is a leak. */
function pieces(secret: string): string[] {
  const random = secret.replace(/^sk_/, '');
  const out: string[] = [];
  for (let i = 0; i + 12 <= random.length; i++) out.push(random.slice(i, i + 12));
  return out;
}

function expectNoSecret(label: string, text: string, secrets: string[]): void {
  for (const s of secrets) {
    expect(text.includes(s), `${label} shows the secret`).toBe(false);
    const leaked = pieces(s).find((p) => text.includes(p));
    expect(leaked, `${label} shows part of the secret`).toBeUndefined();
  }
}

const apply = (uid: string, amount: string) => ['withdraw', 'apply', '--uid', uid, '--amount', amount, '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH];

describe('the merchant secret never leaks', () => {
  it('across a whole remote session: CLI stdout and stderr, the server access log and stderr', async () => {
    const h = home();
    // The one place a secret is shown: merchant add, once. (It also proves the check below finds it.)
    const add = await h.cli(['--db', h.db, 'merchant', 'add', '--name', 'Shop', '--generate-wallet']);
    expect(add.code).toBe(0);
    const m = { mchId: /^mchId +(\S+)$/m.exec(add.stdout)![1]!, secret: /^secret +(\S+)$/m.exec(add.stdout)![1]! };
    expect(() => expectNoSecret('merchant add', add.stdout, [m.secret])).toThrow(/shows the secret/);
    expect(() => expectNoSecret('a piece', `…${m.secret.slice(5, 20)}…`, [m.secret])).toThrow(/part of the secret/);
    const server = await serve(h);
    const wrongSecret = `sk_${'Wr0ngSecretValue'.repeat(2)}`;
    const env = { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: m.secret };
    const seen: [string, CliResult][] = [];
    /** Runs a command twice, plain and --json, and keeps both outputs. */
    const both = async (label: string, args: string[], opts: { env?: Record<string, string | undefined> } = {}) => {
      const [plain, json] = await Promise.all([h.cli(args, { env: { ...env, ...opts.env } }), h.cli(['--json', ...args], { env: { ...env, ...opts.env } })]);
      seen.push([label, plain], [`${label} --json`, json]);
      return [plain, json] as const;
    };
    const remote = ['--remote', server.url];

    // Every operation in success and refusal, plain and --json, is covered by the remote side of
    // parity.test.ts. Here: one success of each kind of request, then the paths that build
    // their own messages (signature, merchant, usage, unreachable, not the envelope, timeout).
    const [created] = await both('order create', [...remote, 'order', 'create', '--oid', 'S-1', '--uid', 'u1', '--amount', '10']);
    const id = /^id +(\S+)$/m.exec(created.stdout)![1]!;
    await Promise.all([
      both('order status', [...remote, 'order', 'status', id]),
      both('refund, not paid', [...remote, 'refund', '--id', id, '--amount', '1', '--yes']),
      both('wrong secret', [...remote, 'order', 'create', '--oid', 'S-3', '--uid', 'u1', '--amount', '1'], { env: { CRYPTOPAY_SECRET: wrongSecret } }),
      both('unknown merchant', [...remote, 'refund', '--id', id, '--amount', '1', '--yes'], { env: { CRYPTOPAY_MCH_ID: 'M999999' } }),
      both('no merchant id', [...remote, 'order', 'create', '--oid', 'S-4', '--uid', 'u1', '--amount', '1'], { env: { CRYPTOPAY_MCH_ID: undefined } }),
      both('local-only command', [...remote, 'merchant', 'show', m.mchId]),
    ]);

    // Remotes that fail, with the secret set.
    const [down, html, hang] = await Promise.all([
      closedPort().then((p) => `http://127.0.0.1:${p}`),
      tiny((_req, res) => res.end('<html>hello</html>')).then((t) => t.url),
      tiny(() => {}).then((t) => t.url),
    ]);
    await Promise.all([
      both('unreachable', ['--remote', down, 'order', 'create', '--oid', 'S-5', '--uid', 'u1', '--amount', '1']),
      both('html', ['--remote', html, 'refund', '--id', id, '--amount', '1', '--yes']),
      both('timeout', ['--remote', hang, '--timeout', '200ms', ...apply('u2', '1')]),
    ]);

    // Secret files and profiles.
    const file = pathIn(h, 'secret.txt');
    writeFileSync(file, `${m.secret}\n`, { mode: 0o600 });
    const openFile = pathIn(h, 'open-secret.txt');
    writeFileSync(openFile, `${m.secret}\n`, { mode: 0o644 });
    const noSecret = { CRYPTOPAY_SECRET: undefined };
    await Promise.all([
      both('secret file', ['--secret-file', file, ...remote, 'order', 'create', '--oid', 'S-6', '--uid', 'u1', '--amount', '1'], { env: noSecret }),
      both('secret file readable by others', ['--secret-file', openFile, ...remote, 'order', 'create', '--oid', 'S-7', '--uid', 'u1', '--amount', '1'], { env: noSecret }),
    ]);
    // Plain and --json at once on the same name: one of them replaces the other's profile (--yes).
    await both('profile add', ['profile', 'add', 'prod', '--url', server.url, '--use', '--yes']);
    await both('profile add, secret file', ['profile', 'add', 'filed', '--url', server.url, '--secret-file', file, '--yes'], { env: noSecret });
    await Promise.all([
      both('profile list', ['profile', 'list']),
      both('order via the profile', ['order', 'create', '--oid', 'S-8', '--uid', 'u1', '--amount', '1'], { env: noSecret }),
      both('order via the secret-file profile', ['--profile', 'filed', 'order', 'create', '--oid', 'S-10', '--uid', 'u1', '--amount', '1'], { env: noSecret }),
      both('refusal via the profile', ['refund', '--id', id, '--amount', '1000', '--yes'], { env: noSecret }),
    ]);
    // A secret given as a flag is refused, and the refusal does not repeat it.
    const decoy = 'sk_DecoyFlagValue_DecoyFlagValue';
    const flag = await h.cli([...remote, '--secret', decoy, 'order', 'create', '--oid', 'S-9', '--uid', 'u1', '--amount', '1']);
    expect(flag).toMatchObject({ code: 2, stdout: '' });
    expect(flag.stderr).toContain('never taken from a command-line flag');
    expectNoSecret('--secret refusal', flag.stderr, [decoy]);

    // The session did what it should (so the absence of the secret means something).
    const byLabel = Object.fromEntries(seen.map(([l, r]) => [l, r.code]));
    expect(byLabel).toMatchObject({
      'order create': 0,
      'order create --json': 0,
      'order status': 0,
      'refund, not paid': 1,
      'wrong secret': 1,
      'wrong secret --json': 1,
      'unknown merchant': 1,
      'no merchant id': 2,
      'local-only command': 2,
      unreachable: 3,
      html: 3,
      timeout: 3,
      'secret file': 0,
      'secret file readable by others': 2,
      'profile add': 0,
      'profile add, secret file': 0,
      'profile list --json': 0,
      'order via the profile': 0,
      'order via the secret-file profile': 0,
      'refusal via the profile': 1,
    });
    expect(seen.length).toBe(36);

    for (const [label, r] of seen) {
      expectNoSecret(`${label}: stdout`, r.stdout, [m.secret, wrongSecret]);
      expectNoSecret(`${label}: stderr`, r.stderr, [m.secret, wrongSecret]);
    }
    expect(server.stdout()).toMatch(/POST \/api\/v1\/order 401 /); // the access log did log the refusals
    expectNoSecret('server access log', server.stdout(), [m.secret, wrongSecret]);
    expectNoSecret('server stderr', server.stderr(), [m.secret, wrongSecret]);
  }, 120_000);

  it('never shows in the argv of the CLI or the server (what ps lists)', async () => {
    const h = home();
    const m = await addMerchant(h);
    const server = await serve(h);
    let arrived!: () => void;
    const waiting = new Promise<void>((r) => (arrived = r));
    const hang = await tiny(() => arrived());
    const oid = `ps-check-${process.pid}`;
    const run = h.cli(['--remote', hang.url, '--timeout', '20s', 'order', 'create', '--oid', oid, '--uid', 'u1', '--amount', '1'], {
      env: { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: m.secret },
    });
    // While the CLI waits for its answer, it is in the process list.
    await waiting;
    const ps = execFileSync('ps', ['-eo', 'pid,args', '--no-headers', '-ww'], { encoding: 'utf8' });
    await hang.close();
    await run;
    expect(ps).toContain(oid);
    expect(ps).toContain(`${server.pid} `);
    expectNoSecret('ps', ps, [m.secret]);
  });
});
