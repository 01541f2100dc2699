/**
 * Plain http:// and credentials in the remote's URL (issue #10 item 5). Signed bodies and the
 * answers that are printed must not cross a network in clear text: http:// is refused for any
 * host but a loopback one (127.0.0.0/8, ::1, localhost) unless the user says --insecure-http,
 * CRYPTOPAY_INSECURE_HTTP=1, or a profile saved with it. A URL holding a user name or password is
 * refused, and no message repeats them.
 *
 * pay.example.test is not a loopback name; the test resolver (resolving()) makes it 127.0.0.1
 * inside the spawned CLI, so that, were the CLI to connect, the tiny server here would see it.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, home, resolving, stopAll, tiny, type Home, type Tiny } from './_support.js';

afterAll(stopAll);

const ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };
const HOST = 'pay.example.test';
const REFUSED = (url: string) =>
  `the remote ${url} is plain http to a host that is not this machine: the signed requests and their answers would cross the network unencrypted. Use https, or pass --insecure-http (or set CRYPTOPAY_INSECURE_HTTP=1, or save the profile with --insecure-http) if that network is yours`;

let server: Tiny;
let insecure: string;
let h: Home;
const env = { ...SIGNER, ...resolving(HOST) };

beforeAll(async () => {
  server = await tiny((req, res) => (req.method === 'GET' ? envelope(res, 'PAID') : envelope(res, null, 401, 0, 'signature does not match')));
  insecure = `http://${HOST}:${server.port}`;
  h = home();
});

describe('http:// to a host that is not loopback', () => {
  it('is refused before anything is sent, by flag and by CRYPTOPAY_REMOTE, signed or not: exit 2', async () => {
    const [create, status, fromEnv, json] = await Promise.all([
      h.cli(['--remote', insecure, 'order', 'create', '--oid', 'H-1', '--uid', 'u1', '--amount', '1'], { env }),
      h.cli(['--remote', `${insecure}/api/v1`, 'order', 'status', ORDER], { env }),
      h.cli(['address', ORDER], { env: { ...env, CRYPTOPAY_REMOTE: insecure } }),
      h.cli(['--json', '--remote', insecure, 'order', 'status', ORDER], { env }),
    ]);
    expect(create).toEqual({ code: 2, stdout: '', stderr: `error: ${REFUSED(insecure)}\n` });
    expect(status).toEqual({ code: 2, stdout: '', stderr: `error: ${REFUSED(`${insecure}/api/v1`)}\n` });
    expect(fromEnv).toEqual({ code: 2, stdout: '', stderr: `error: ${REFUSED(insecure)}\n` });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'usage', message: REFUSED(insecure) } });
    expect(server.hits).toEqual([]);
  });

  it('goes through with --insecure-http, or CRYPTOPAY_INSECURE_HTTP=1', async () => {
    const before = server.hits.length;
    const [flag, variable, zero] = await Promise.all([
      h.cli(['--remote', insecure, '--insecure-http', 'order', 'status', ORDER], { env }),
      h.cli(['--remote', insecure, 'order', 'status', ORDER], { env: { ...env, CRYPTOPAY_INSECURE_HTTP: '1' } }),
      h.cli(['--remote', insecure, 'order', 'status', ORDER], { env: { ...env, CRYPTOPAY_INSECURE_HTTP: '0' } }),
    ]);
    expect(flag).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    expect(variable).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    expect(zero).toEqual({ code: 2, stdout: '', stderr: `error: ${REFUSED(insecure)}\n` });
    expect(server.hits.length - before).toBe(2);
  });

  it('profile add refuses it without --insecure-http (nothing saved); saved with it, the profile is used over http', async () => {
    const p = home();
    const refused = await p.cli(['profile', 'add', 'lan', '--url', insecure, '--mch-id', 'M100001'], { env });
    expect(refused).toEqual({ code: 2, stdout: '', stderr: `error: ${REFUSED(insecure)}\n` });
    expect(existsSync(p.configFile)).toBe(false);

    const saved = await p.cli(['profile', 'add', 'lan', '--url', insecure, '--mch-id', 'M100001', '--insecure-http', '--use', '--no-check'], { env });
    expect(saved.code).toBe(0);
    expect(JSON.parse(readFileSync(p.configFile, 'utf8')).profiles.lan).toEqual({ remote: insecure, mchId: 'M100001', secret: SIGNER.CRYPTOPAY_SECRET, insecureHttp: true });
    const list = await p.cli(['--json', 'profile', 'list']);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'lan', remote: insecure, insecureHttp: true })]);

    const before = server.hits.length;
    const used = await p.cli(['order', 'status', ORDER], { env });
    expect(used).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    expect(server.hits.length - before).toBe(1);
  });
});

describe('http:// to this machine needs no flag', () => {
  it.each(['127.0.0.1', 'localhost'])('http://%s', async (host) => {
    const before = server.hits.length;
    const r = await h.cli(['--remote', `http://${host}:${server.port}`, 'order', 'status', ORDER], { env });
    expect(r).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    expect(server.hits.length - before).toBe(1);
  });
});

describe('credentials in the URL', () => {
  const PASSWORD = 'pa55w0rd-Zq9';
  const withCredentials = () => `http://alice:${PASSWORD}@127.0.0.1:${server.port}`;
  const MESSAGE = (shown: string) =>
    `the remote URL holds a user name or password (${shown}); they are not used: requests are signed with the merchant secret, and a password in a URL ends up in shell history and server logs. Give the URL without them`;

  it('are refused wherever the URL comes from, and no message repeats them; nothing is sent', async () => {
    const url = withCredentials();
    const shown = `http://***@127.0.0.1:${server.port}/`;
    const before = server.hits.length;
    const [flag, variable, json, profile, garbled, userOnly] = await Promise.all([
      h.cli(['--remote', url, 'order', 'create', '--oid', 'C-1', '--uid', 'u1', '--amount', '1'], { env }),
      h.cli(['order', 'status', ORDER], { env: { ...env, CRYPTOPAY_REMOTE: url } }),
      h.cli(['--json', '--remote', url, 'order', 'status', ORDER], { env }),
      home().cli(['profile', 'add', 'p', '--url', url, '--mch-id', 'M100001'], { env }),
      h.cli(['--remote', `htp:/alice:${PASSWORD}@host`, 'order', 'status', ORDER], { env }),
      h.cli(['--remote', `https://alice@${HOST}`, 'order', 'status', ORDER], { env }),
    ]);
    for (const r of [flag, variable, profile]) expect(r).toEqual({ code: 2, stdout: '', stderr: `error: ${MESSAGE(shown)}\n` });
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'usage', message: MESSAGE(shown) } });
    expect(garbled).toEqual({ code: 2, stdout: '', stderr: 'error: the remote must be an http or https URL, got "htp:/***@host"\n' });
    expect(userOnly).toEqual({ code: 2, stdout: '', stderr: `error: ${MESSAGE(`https://***@${HOST}/`)}\n` });
    for (const r of [flag, variable, json, profile, garbled, userOnly]) expect(r.stdout + r.stderr).not.toMatch(/alice|pa55w0rd/);
    expect(server.hits.length).toBe(before);
  });

  it('in a profile written by hand: refused by every command, without repeating them', async () => {
    const p = home();
    mkdirSync(p.configDir, { recursive: true, mode: 0o700 });
    writeFileSync(p.configFile, JSON.stringify({ active: 'bad', profiles: { bad: { remote: withCredentials(), mchId: 'M100001' } } }), { mode: 0o600 });
    const [status, list] = await Promise.all([p.cli(['order', 'status', ORDER], { env }), p.cli(['profile', 'list'], { env })]);
    for (const r of [status, list]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('holds a user name or password');
      expect(r.stdout + r.stderr).not.toMatch(/alice|pa55w0rd/);
    }
  });
});
