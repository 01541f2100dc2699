/**
 * The local administration (merchants, balance adjust, payments recorded or decided by hand, the
 * ledger itself, the sandbox) refuses in remote mode, saying it needs a local ledger (decisions
 * §10, issue #15 item 8): exit 2, before anything is sent and without touching a local ledger,
 * whether the remote comes from --remote, CRYPTOPAY_REMOTE or the active profile. Every other
 * command works remotely (test/remote/operator-reads.test.ts, parity.test.ts).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, home, stopAll, tiny, txHash, type Tiny } from './_support.js';

afterAll(stopAll);

const ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
/** [what the message names, the command line]. */
const LOCAL_ONLY: [string, string[]][] = [
  ['merchant list', ['merchant', 'list']],
  ['merchant add', ['merchant', 'add', '--name', 'X', '--generate-wallet']],
  ['merchant show', ['merchant', 'show', 'M100001']],
  ['merchant rotate-secret', ['merchant', 'rotate-secret', 'M100001']],
  ['balance adjust', ['balance', 'adjust', 'u1', '--amount', '+5', '--reason', 'test', '--yes']],
  ['order mark-paid', ['order', 'mark-paid', ORDER, '--tx-hash', txHash(1), '--yes']],
  ['order credit-held', ['order', 'credit-held', ORDER, '--tx-hash', txHash(2), '--reason', 'r', '--yes']],
  ['order return-held', ['order', 'return-held', ORDER, '--tx-hash', txHash(2), '--reason', 'r', '--yes']],
  ['dev pay', ['dev', 'pay', ORDER]],
  ['dev pay-out', ['dev', 'pay-out', 'wd_AAAAAAAAAAAAAAAAAAAAAA']],
  ['withdraw confirm --unverified', ['withdraw', 'confirm', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--tx-hash', txHash(3), '--block-number', '5', '--unverified', '--reason', 'r', '--yes']],
  ['withdraw reject --unverified', ['withdraw', 'reject', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--unverified', '--reason', 'r', '--yes']],
  ['ledger check', ['ledger', 'check']],
  ['ledger backup', ['ledger', 'backup', '/tmp/never-written.db']],
  ['callbacks resend', ['callbacks', 'resend', 'evt_x']],
  ['callbacks test', ['callbacks', 'test', '--url', 'https://shop.example/cb']],
  ['callbacks run', ['callbacks', 'run']],
];

const refusal = (what: string, url: string, source: string) =>
  `error: ${what} needs a local ledger: it is not part of the REST interface, so it cannot run against the remote ${url} (from ${source}); pass --db PATH to use a local ledger\n`;

describe('local-only commands in remote mode', () => {
  /** Counts requests: none may arrive. */
  let remote: Tiny;
  beforeAll(async () => {
    remote = await tiny((_req, res) => {
      res.writeHead(500);
      res.end();
    });
  });

  it('with --remote: every one refuses with exit 2, naming the need for a local ledger', async () => {
    const h = home();
    const results = await Promise.all(LOCAL_ONLY.map(([, args]) => h.cli(['--remote', remote.url, ...args])));
    LOCAL_ONLY.forEach(([what], i) => {
      expect(results[i], what).toEqual({ code: 2, stdout: '', stderr: refusal(what, remote.url, '--remote') });
    });
    expect(remote.hits).toEqual([]);
    expect(existsSync(h.defaultLedger)).toBe(false);
  });

  it('with --json the refusal is the JSON error line (kind usage)', async () => {
    const h = home();
    const r = await h.cli(['--remote', remote.url, '--json', 'balance', 'adjust', 'u1', '--amount', '+1', '--reason', 'r', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ error: { kind: 'usage', message: refusal('balance adjust', remote.url, '--remote').slice(7, -1) } });
  });

  it('with CRYPTOPAY_REMOTE, and with an active profile: the same refusal, naming where the remote came from', async () => {
    const h = home();
    const down = `http://127.0.0.1:${await closedPort()}`;
    const add = await h.cli(['profile', 'add', 'prod', '--url', down, '--mch-id', 'M100001', '--use', '--no-check'], { env: { CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' } });
    expect(add.code).toBe(0);
    const some = LOCAL_ONLY.filter(([what]) => ['balance adjust', 'order mark-paid', 'ledger check'].includes(what));
    // The loops below check only what the filter kept: a renamed entry must not empty it silently.
    expect(some.map(([what]) => what)).toEqual(['balance adjust', 'order mark-paid', 'ledger check']);
    const [viaEnv, viaProfile] = await Promise.all([
      Promise.all(some.map(([, args]) => h.cli(args, { env: { CRYPTOPAY_REMOTE: remote.url } }))),
      Promise.all(some.map(([, args]) => h.cli(args))),
    ]);
    some.forEach(([what], i) => {
      expect(viaEnv[i], `${what} with CRYPTOPAY_REMOTE`).toEqual({ code: 2, stdout: '', stderr: refusal(what, remote.url, 'CRYPTOPAY_REMOTE') });
      expect(viaProfile[i], `${what} with the profile`).toEqual({ code: 2, stdout: '', stderr: refusal(what, down, 'profile prod') });
    });
    expect(remote.hits).toEqual([]);
    expect(existsSync(h.defaultLedger)).toBe(false);

    // --db overrides the profile: the same command runs on the local ledger.
    const local = await h.cli(['--db', `${h.dir}/ledger.db`, '--json', 'merchant', 'add', '--name', 'Local', '--generate-wallet']);
    expect(local.code, local.stderr).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({ mchId: expect.stringMatching(/^M\d+$/) });
    expect(remote.hits).toEqual([]);
  });
});
