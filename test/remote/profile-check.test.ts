/**
 * Issue #15 item 8: `profile add` checks the credentials against the server before saving (one
 * signed read), `profile show NAME` never prints the secret, `profile test [NAME]` says whether
 * the server accepts the profile (exit 0, 1 refused, 3 unreachable); and a money change on a
 * profile asks with the same before/after summary as locally, led by the remote it changes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_SCRIPT, runPty, SLOW } from '../cli/_support.js';
import { addMerchant, closedPort, home, serve, stopAll, txHash, type Home, type Merchant, type Served } from './_support.js';

afterAll(stopAll);

let h: Home;
let m: Merchant;
let server: Served;

beforeAll(async () => {
  h = home();
  m = await addMerchant(h);
  server = await serve(h);
});

const NOT_SAVED = '; the profile was not saved (--no-check saves it without asking the server)';
const refusedCredentials = (url: string, mchId: string) =>
  `error: the remote ${url} refused the credentials of merchant ${mchId}: signature does not match (the secret is wrong, or the service has no merchant ${mchId})${NOT_SAVED}\n`;

describe('profile add checks the credentials first', () => {
  it('a wrong secret and an unknown merchant are refused alike (exit 1) and nothing is saved', async () => {
    const p = home();
    const [wrong, unknown] = await Promise.all([
      p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', m.mchId], { env: { CRYPTOPAY_SECRET: 'sk_wrong_wrong_wrong_wrong_wrong' } }),
      p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', 'M199999'], { env: { CRYPTOPAY_SECRET: m.secret } }),
    ]);
    expect(wrong).toEqual({ code: 1, stdout: '', stderr: refusedCredentials(server.url, m.mchId) });
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: refusedCredentials(server.url, 'M199999') });
    expect(existsSync(p.configFile)).toBe(false);
  });

  it('without a secret to sign with it refuses (exit 2) unless --no-check', async () => {
    const p = home();
    const r = await p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', m.mchId]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: profile add checks the credentials with a signed request, and there is no secret to sign it with: .*--no-check/);
    expect(existsSync(p.configFile)).toBe(false);
    const unchecked = await p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', m.mchId, '--no-check']);
    expect(unchecked.code).toBe(0);
    expect(JSON.parse(readFileSync(p.configFile, 'utf8')).profiles.prod).toEqual({ remote: server.url, mchId: m.mchId });
  });
});

describe('profile show and profile test', () => {
  let p: Home;
  let down: string;
  beforeAll(async () => {
    p = home();
    down = `http://127.0.0.1:${await closedPort()}`;
    const add = await p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', m.mchId, '--use'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(add).toMatchObject({ code: 0, stderr: expect.stringContaining(`checked: ${server.url} accepts the credentials of ${m.mchId} (Shop)`) });
    expect(await p.cli(['profile', 'add', 'down', '--url', down, '--mch-id', m.mchId, '--timeout', '2s', '--no-check'], { env: { CRYPTOPAY_SECRET: m.secret } })).toMatchObject({ code: 0 });
  });

  it('profile show NAME: where it goes and as whom, never the secret (plain and --json)', async () => {
    const [plain, json, none] = await Promise.all([p.cli(['profile', 'show', 'prod']), p.cli(['--json', 'profile', 'show', 'down']), p.cli(['profile', 'show', 'nope'])]);
    expect(plain).toEqual({
      code: 0,
      stdout: `name        prod\nactive      yes\nremote      ${server.url}\nmchId       ${m.mchId}\nsecret      stored in the config file (not shown)\ntimeout     10s (default)\nplain http  only to this machine\n`,
      stderr: '',
    });
    expect(JSON.parse(json.stdout)).toEqual({ name: 'down', active: false, remote: down, mchId: m.mchId, secret: 'stored', timeout: '2s', insecureHttp: false });
    expect(none).toEqual({ code: 2, stdout: '', stderr: 'error: there is no profile named nope: see cryptopay profile list\n' });
    for (const r of [plain, json]) expect(r.stdout).not.toContain(m.secret);
  });

  it('profile test: 0 when accepted, 1 when the secret in use is refused, 3 when the server is down', async () => {
    const [ok, json, wrong, unreachable] = await Promise.all([
      p.cli(['profile', 'test']),
      p.cli(['--json', 'profile', 'test', 'prod']),
      p.cli(['profile', 'test', 'prod'], { env: { CRYPTOPAY_SECRET: 'sk_wrong_wrong_wrong_wrong_wrong' } }),
      p.cli(['profile', 'test', 'down']),
    ]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(new RegExp(`^profile +prod\\nremote +${server.url}\\nmerchant +${m.mchId} \\(Shop\\)\\nasset +USDT\\nanswer +credentials accepted, in \\d+ ms\\n$`));
    expect(JSON.parse(json.stdout)).toMatchObject({ profile: 'prod', remote: server.url, ok: true, mchId: m.mchId, name: 'Shop', asset: 'USDT' });
    expect(wrong).toEqual({ code: 1, stdout: '', stderr: refusedCredentials(server.url, m.mchId).replace(NOT_SAVED, '') });
    expect(unreachable).toEqual({
      code: 3, stdout: '',
      stderr: `error: cannot reach the remote ${down}, the URL profile down keeps: ECONNREFUSED; if its service moved (serve --port 0 listens on a new port each start), save the profile again with the new URL: cryptopay profile add down --url URL (this replaces the saved profile, its secret included)\n`,
    });
  });
});

describe.skipIf(!HAS_SCRIPT)('a money change on a profile, on a terminal', () => {
  it('shows the remote and its profile, then the same before/after as locally', { timeout: SLOW }, async () => {
    const p = home();
    expect(await p.cli(['profile', 'add', 'prod', '--url', server.url, '--mch-id', m.mchId, '--use'], { env: { CRYPTOPAY_SECRET: m.secret } })).toMatchObject({ code: 0 });
    const order = JSON.parse((await h.cli(['--db', h.db, '--json', 'order', 'create', '--oid', 'T-1', '--uid', 'ut', '--amount', '10'])).stdout).id as string;
    expect(await h.cli(['--db', h.db, 'order', 'mark-paid', order, '--tx-hash', txHash(0x7e), '--yes'])).toMatchObject({ code: 0 });
    const env = { XDG_CONFIG_HOME: p.env.XDG_CONFIG_HOME, XDG_DATA_HOME: p.env.XDG_DATA_HOME };
    const refund = ['refund', '--id', order, '--amount', '2', '--remark', 'dented'];
    const [remote, local] = await Promise.all([
      runPty(refund, { env, steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] }),
      runPty(['--db', h.db, ...refund], { env, steps: [{ waitFor: /Go ahead\?/, send: 'n\r' }] }),
    ]);
    for (const r of [remote, local]) {
      expect(r.code, r.text).toBe(1);
      expect(r.text).toMatch(new RegExp(`order\\s+${order} \\(oid T-1\\), PAID`));
      expect(r.text).toMatch(/refunded\s+0 -> 2 USDT of 10 USDT paid/);
      expect(r.text).toMatch(/user\s+ut: available 10 -> 8 USDT/);
      expect(r.text).toMatch(/cancelled: nothing was changed/);
    }
    expect(remote.text).toMatch(new RegExp(`Refund:\\s+remote\\s+${server.url} \\(profile prod\\)\\s+order`));
    expect(local.text).not.toMatch(/remote/);
    // Nothing moved.
    expect(JSON.parse((await h.cli(['--db', h.db, '--json', 'balance', 'ut'])).stdout)).toMatchObject({ available: '10', held: '0' });

    // Withdrawals: apply (held 4), then reject asks with the same rows on the profile.
    const w = JSON.parse((await p.cli(['--json', 'withdraw', 'apply', '--uid', 'ut', '--amount', '4', '--to', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '--chain-id', '1', '--chain-type', 'EVM', '--token', '0xdAC17F958D2ee523a2206206994597C13D831ec7'])).stdout).id as string;
    const reject = await runPty(['withdraw', 'reject', w], { env, steps: [{ waitFor: /Go ahead\?/, send: 'y\r' }] });
    expect(reject.code, reject.text).toBe(0);
    expect(reject.text).toMatch(new RegExp(`Reject withdrawal:\\s+remote\\s+${server.url} \\(profile prod\\)\\s+withdrawal\\s+${w}`));
    expect(reject.text).toMatch(/status\s+PENDING -> REJECTED/);
    expect(reject.text).toMatch(/available\s+6 -> 10 USDT/);
    expect(reject.text).toMatch(/held\s+4 -> 0 USDT/);
    // A rejected withdrawal: refused before any question, as locally, in the service's words.
    const confirm = await runPty(['withdraw', 'confirm', w, '--tx-hash', txHash(0x7f), '--block-number', '5'], { env, timeoutMs: 20_000 });
    expect({ code: confirm.code, text: confirm.text.trim() }).toEqual({ code: 1, text: 'error: withdrawal is REJECTED, not PENDING: only a pending withdrawal can be confirmed' });
  });
});
