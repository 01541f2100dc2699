/**
 * Remote mode when things go wrong: a refused signature, a remote that cannot be reached, one
 * that answers something other than the envelope, one that never answers, and a remote mode
 * missing the merchant id or secret. Exit codes of decisions §10: 1 refused, 2 usage, 3 the
 * remote could not be reached (or did not speak the interface).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMerchant,
  closedPort,
  envelope,
  EVM_TO,
  home,
  pathIn,
  serve,
  stopAll,
  tiny,
  txHash,
  USDT_ETH,
  type Home,
  type Merchant,
  type Served,
} from './_support.js';

afterAll(stopAll);

const ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
const apply = ['withdraw', 'apply', '--uid', 'u1', '--amount', '5', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH];
const NOT_RETRIED = 'a signed request is not sent again automatically';
/** A merchant and a secret that sign well-formed requests (for servers that never check them). */
const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };

/** A JSON error line of --json mode. */
const jsonError = (stderr: string) => JSON.parse(stderr).error as { kind: string; message: string };

describe('a wrong secret', () => {
  let h: Home;
  let m: Merchant;
  let server: Served;
  let paid: string;

  beforeAll(async () => {
    h = home();
    m = await addMerchant(h);
    server = await serve(h);
    const o = await h.json(['--db', h.db, 'order', 'create', '--oid', 'PAID-1', '--uid', 'u1', '--amount', '10']);
    paid = o.id;
    await h.json(['--db', h.db, 'order', 'mark-paid', paid, '--tx-hash', txHash(1), '--yes']);
    await h.json(['--db', h.db, 'balance', 'adjust', 'u1', '--amount', '+70', '--reason', 'seed', '--yes']);
  });

  it('is refused by the server: exit 1, "signature does not match", and nothing changes on its ledger', async () => {
    const before = await Promise.all([
      h.json(['--db', h.db, 'order', 'list']),
      h.json(['--db', h.db, 'withdraw', 'list']),
      h.json(['--db', h.db, 'balance', 'u1']),
      h.json(['--db', h.db, 'log', '--limit', '1000']),
    ]);
    const wrong = { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: `${m.secret.slice(0, -1)}${m.secret.endsWith('x') ? 'y' : 'x'}` };
    const remote = (args: string[]) => h.cli(['--remote', server.url, ...args], { env: wrong });
    const results = await Promise.all([
      remote(['order', 'create', '--oid', 'NEW-1', '--uid', 'u1', '--amount', '10']),
      remote(['refund', '--id', paid, '--amount', '1', '--yes']),
      remote(apply),
      remote(['withdraw', 'reject', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--yes']),
    ]);
    for (const r of results) {
      expect(r).toEqual({
        code: 1, stdout: '',
        stderr: `error: signature does not match: the remote ${server.url} refused the signature of merchant ${m.mchId}, made with the secret from CRYPTOPAY_SECRET (check that merchant id and that secret)\n`,
      });
    }
    const json = await remote(['--json', 'order', 'create', '--oid', 'NEW-2', '--uid', 'u1', '--amount', '10']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(jsonError(json.stderr)).toEqual({ kind: 'unauthorized', message: 'signature does not match' });

    // The server saw and refused them (401), and its ledger is exactly as before.
    expect(server.stdout().match(/ POST \/api\/v1\/\S+ 401 /g)).toHaveLength(5);
    const after = await Promise.all([
      h.json(['--db', h.db, 'order', 'list']),
      h.json(['--db', h.db, 'withdraw', 'list']),
      h.json(['--db', h.db, 'balance', 'u1']),
      h.json(['--db', h.db, 'log', '--limit', '1000']),
    ]);
    expect(after).toEqual(before);
    expect(after[0]).toHaveLength(1);
    expect(after[0][0]).toMatchObject({ oid: 'PAID-1', status: 'PAID' });
    expect(after[2]).toMatchObject({ available: '80', held: '0' }); // 10 paid + 70 by hand
  });

  it('of an unknown merchant id: exit 1, refused exactly like a bad signature (merchant ids cannot be probed)', async () => {
    const r = await h.cli(['--remote', server.url, 'order', 'create', '--oid', 'NEW-3', '--uid', 'u1', '--amount', '1'], {
      env: { CRYPTOPAY_MCH_ID: 'M999999', CRYPTOPAY_SECRET: m.secret },
    });
    expect(r).toEqual({
      code: 1, stdout: '',
      stderr: `error: signature does not match: the remote ${server.url} refused the signature of merchant M999999, made with the secret from CRYPTOPAY_SECRET (check that merchant id and that secret)\n`,
    });
  });

  it("a CRYPTOPAY_SECRET that overrides the active profile's own secret says so when it is refused", async () => {
    // Found by an operator walkthrough: a stale CRYPTOPAY_SECRET in the shell beat the profile's
    // stored secret, and the refusal said only "signature does not match".
    const p = home();
    const add = await p.cli(['profile', 'add', 'shop', '--url', server.url, '--mch-id', m.mchId, '--use', '--no-check'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(add.code, add.stderr).toBe(0);
    expect((await p.cli(['order', 'status', paid])).stdout).toBe('PAID\n');
    const stale = await p.cli(['order', 'list'], { env: { CRYPTOPAY_SECRET: `${m.secret}x` } });
    expect(stale).toEqual({
      code: 1, stdout: '',
      stderr: `error: signature does not match: the remote ${server.url} refused the signature of merchant ${m.mchId}, made with the secret from CRYPTOPAY_SECRET, which overrides the secret profile shop stores (check that merchant id and that secret)\n`,
    });
    expect((await p.cli(['order', 'list', '--json'])).code).toBe(0);
  });

  it("a secret given over a profile's secret file does not read that file: one made readable by others does not stop it", async () => {
    const p = home();
    const file = pathIn(p, 'secrets', 'shop.txt');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${m.secret}\n`, { mode: 0o600 });
    const add = await p.cli(['profile', 'add', 'filed', '--url', server.url, '--mch-id', m.mchId, '--secret-file', file, '--use', '--no-check']);
    expect(add.code, add.stderr).toBe(0);
    chmodSync(file, 0o644);
    // The profile's own file is refused when it is the secret used...
    expect((await p.cli(['order', 'list'])).code).toBe(2);
    // ...and never opened when CRYPTOPAY_SECRET gives the secret.
    const over = await p.cli(['order', 'list', '--json'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(over.code, over.stderr).toBe(0);
  });
});

describe('a remote that cannot be reached', () => {
  let url: string;
  beforeAll(async () => {
    url = `http://127.0.0.1:${await closedPort()}`;
  });

  it('a signed operation: exit 3, the reason, and that it was not retried (plain and --json)', async () => {
    const h = home();
    const [plain, json, refund] = await Promise.all([
      h.cli(['--remote', url, 'order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1'], { env: SIGNER }),
      h.cli(['--remote', url, '--json', ...apply], { env: SIGNER }),
      // --repeat: no read of the order's refunds first (it would be what fails), the refund itself.
      h.cli(['--remote', url, 'refund', '--id', ORDER, '--amount', '1', '--repeat', '--yes'], { env: SIGNER }),
    ]);
    for (const r of [plain, refund]) {
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: cannot reach the remote ${url}: ECONNREFUSED; ${NOT_RETRIED} (its nonce would be refused anyway): check whether it took effect before repeating it\n`);
    }
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(jsonError(json.stderr)).toMatchObject({ kind: 'unavailable', message: expect.stringContaining(NOT_RETRIED) });
    // Nothing was written locally instead.
    expect(existsSync(h.defaultLedger)).toBe(false);
  });

  it('a GET: exit 3 with the reason, after retrying with back-off (100 ms, then 200 ms)', async () => {
    const h = home();
    const start = Date.now();
    const [status, address] = await Promise.all([h.cli(['--remote', url, 'order', 'status', ORDER]), h.cli(['--remote', url, '--json', 'address', ORDER])]);
    const took = Date.now() - start;
    expect(status).toEqual({ code: 3, stdout: '', stderr: `error: cannot reach the remote ${url}: ECONNREFUSED\n` });
    expect(address.code).toBe(3);
    expect(jsonError(address.stderr)).toEqual({ kind: 'unavailable', message: `cannot reach the remote ${url}: ECONNREFUSED` });
    expect(took).toBeGreaterThanOrEqual(300);
  });
});

describe('a remote whose connections break', () => {
  /** Drops the connection of the first `breaks` requests, then answers like the interface. */
  const breaking = (breaks: number) =>
    tiny((req, res, n) => {
      if (n <= breaks) return req.socket.destroy();
      if (req.method === 'GET') return envelope(res, 'PAID');
      envelope(res, null, 401, 0, 'signature does not match');
    });

  it('a GET is tried again, and succeeds when the remote comes back', async () => {
    const server = await breaking(2);
    const r = await home().cli(['--remote', server.url, 'order', 'status', ORDER]);
    expect(r).toEqual({ code: 0, stdout: 'PAID\n', stderr: '' });
    expect(server.hits).toEqual(Array(3).fill(`GET /api/v1/order/${ORDER}/status`));
  });

  it('a GET gives up after 3 attempts: exit 3', async () => {
    const server = await breaking(10);
    const r = await home().cli(['--remote', server.url, 'address', ORDER]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`^error: cannot reach the remote ${server.url}: \\S+\\n$`));
    expect(r.stderr).not.toContain(NOT_RETRIED);
    expect(server.hits).toEqual(Array(3).fill(`GET /api/v1/address/${ORDER}`));
  });

  it('a signed request is sent once, never again: exit 3 saying so', async () => {
    const server = await breaking(1);
    const r = await home().cli(['--remote', server.url, 'withdraw', 'confirm', 'wd_x', '--tx-hash', txHash(2), '--block-number', '5', '--yes'], { env: SIGNER });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^error: cannot reach the remote ${server.url}: .*; ${NOT_RETRIED}`));
    expect(server.hits).toEqual(['POST /api/v1/withdraw/confirm']);
  });
});

describe('a remote that is not the cryptopay interface', () => {
  const HTML = 'did not answer with the cryptopay envelope';

  it('an HTML page: exit 3, "did not answer with the cryptopay envelope" (GET and signed, plain and --json)', async () => {
    const server = await tiny((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><h1>Welcome to nginx!</h1></body></html>');
    });
    const h = home();
    const [get, post, json] = await Promise.all([
      h.cli(['--remote', server.url, 'order', 'status', ORDER]),
      h.cli(['--remote', server.url, 'order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1'], { env: SIGNER }),
      h.cli(['--remote', server.url, '--json', 'address', ORDER]),
    ]);
    const expected = `error: the remote ${server.url} ${HTML} (HTTP 200, text/html): is --remote the service's base URL?\n`;
    expect(get).toEqual({ code: 3, stdout: '', stderr: expected });
    expect(post).toEqual({ code: 3, stdout: '', stderr: expected });
    expect(json.code).toBe(3);
    expect(jsonError(json.stderr)).toEqual({ kind: 'unavailable', message: expected.slice('error: '.length, -1) });
    // An answer is not a connection failure: nothing is retried.
    expect(server.hits).toHaveLength(3);
  });

  // Found by a new user: --remote http://127.0.0.1:8080/cryptopay (a path under which the
  // interface is not) made `order status` of an existing order say "Not found" (exit 1), and
  // balance and refund too. The service's own "no such path" is told from its answers about
  // orders (the status lookup says "Order not found"; a signed operation names what it missed).
  it('a cryptopay server under another path: exit 3 asking whether --remote is the base URL, not "Not found"', async () => {
    const server = await tiny((_req, res) => envelope(res, null, 404, 0, 'Not found'));
    const h = home();
    const [status, balance] = await Promise.all([
      h.cli(['--remote', `${server.url}/cryptopay`, 'order', 'status', ORDER]),
      h.cli(['--remote', `${server.url}/cryptopay`, 'balance', 'u1'], { env: SIGNER }),
    ]);
    expect(status).toEqual({ code: 3, stdout: '', stderr: `error: the remote ${server.url}/cryptopay has no GET /api/v1/order/{id}/status: is --remote the service's base URL (the address serve prints, without /api/v1)?\n` });
    expect(balance.code).toBe(3);
    expect(balance.stderr).toBe(`error: the remote ${server.url}/cryptopay has no POST /api/v1/balance: is --remote the service's base URL (the address serve prints, without /api/v1)?\n`);
  });

  it('JSON that is not the envelope, or an error page of a proxy: exit 3', async () => {
    const server = await tiny((req, res) => {
      if (req.url!.includes('status')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ status: 'PAID' }));
      }
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    const h = home();
    const [json, proxy] = await Promise.all([h.cli(['--remote', server.url, 'order', 'status', ORDER]), h.cli(['--remote', server.url, 'address', ORDER])]);
    expect(json).toMatchObject({ code: 3, stdout: '', stderr: expect.stringContaining(`${HTML} (HTTP 200, application/json)`) });
    expect(proxy).toMatchObject({ code: 3, stdout: '', stderr: expect.stringContaining(`${HTML} (HTTP 502, text/html)`) });
  });

  it('a success envelope whose data this client does not understand: exit 3', async () => {
    const server = await tiny((_req, res) => envelope(res, { surprise: true }));
    const r = await home().cli(['--remote', server.url, 'order', 'status', ORDER]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^error: the remote ${server.url} answered success with data this client does not understand \\(.*PENDING_PAY.*\\); nothing of it is printed\n$`));
  });

  it('an envelope with code 0 is a refusal: exit 1 with its msg, whatever the HTTP status', async () => {
    const server = await tiny((req, res) => {
      if (req.method === 'GET') return envelope(res, null, 200, 0, 'the remote says no');
      envelope(res, null, 409, 0, 'order status is not Paid (it is EXPIRED)');
    });
    const h = home();
    const [get, post] = await Promise.all([
      h.cli(['--remote', server.url, 'order', 'status', ORDER]),
      h.cli(['--remote', server.url, 'refund', '--id', ORDER, '--amount', '1', '--yes'], { env: SIGNER }),
    ]);
    expect(get).toEqual({ code: 1, stdout: '', stderr: 'error: the remote says no\n' });
    expect(post).toEqual({ code: 1, stdout: '', stderr: 'error: order status is not Paid (it is EXPIRED)\n' });
  });
});

describe('a remote that never answers', () => {
  it('--timeout 300ms: exit 3, "did not answer within 0.3 s"; a signed request says it was not retried', async () => {
    const server = await tiny(() => {
      // never answers
    });
    const h = home();
    // The signed request gets 2 s: the test asserts it reached the server, which on a loaded
    // machine took longer than 300 ms now and then (the time counts from the request's start).
    const [get, post] = await Promise.all([
      h.cli(['--remote', server.url, '--timeout', '300ms', 'order', 'status', ORDER]),
      h.cli(['--remote', server.url, '--timeout', '2s', ...apply], { env: SIGNER }),
    ]);
    expect(get).toEqual({ code: 3, stdout: '', stderr: `error: the remote ${server.url} did not answer within 0.3 s\n` });
    expect(post.code).toBe(3);
    expect(post.stdout).toBe('');
    expect(post.stderr).toMatch(new RegExp(`^error: the remote ${server.url} did not answer within 2 s; ${NOT_RETRIED}`));
    expect(server.hits.filter((x) => x.startsWith('POST'))).toEqual(['POST /api/v1/withdraw/apply']);
  });

  it('CRYPTOPAY_TIMEOUT sets it too; a malformed timeout is a usage error (exit 2)', async () => {
    const server = await tiny(() => {});
    const h = home();
    const [env, bad] = await Promise.all([
      h.cli(['--remote', server.url, 'address', ORDER], { env: { CRYPTOPAY_TIMEOUT: '200ms' } }),
      h.cli(['--remote', server.url, '--timeout', 'soon', 'address', ORDER]),
    ]);
    expect(env).toEqual({ code: 3, stdout: '', stderr: `error: the remote ${server.url} did not answer within 0.2 s\n` });
    expect(bad).toEqual({ code: 2, stdout: '', stderr: 'error: --timeout must look like 10s, 500ms or 2m, got "soon"\n' });
  });
});

describe('remote mode without a merchant id or secret', () => {
  it('a signed operation without --mch-id: exit 2 with a clear message, and nothing is sent', async () => {
    const server = await tiny((_req, res) => envelope(res, null, 500, 0, 'should not be asked'));
    const h = home();
    const secret = { CRYPTOPAY_SECRET: SIGNER.CRYPTOPAY_SECRET };
    const results = await Promise.all([
      h.cli(['--remote', server.url, 'order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1'], { env: secret }),
      h.cli(['--remote', server.url, 'refund', '--oid', 'A-1', '--amount', '1', '--yes'], { env: secret }),
      h.cli(['--remote', server.url, ...apply], { env: secret }),
      h.cli(['--remote', server.url, 'withdraw', 'confirm', 'wd_x', '--tx-hash', txHash(3), '--block-number', '1', '--yes'], { env: secret }),
      h.cli(['--remote', server.url, 'withdraw', 'reject', 'wd_x', '--yes'], { env: secret }),
    ]);
    for (const r of results) {
      expect(r).toEqual({ code: 2, stdout: '', stderr: 'error: remote mode needs the merchant id: --mch-id, CRYPTOPAY_MCH_ID or a profile\n' });
    }
    const json = await h.cli(['--remote', server.url, '--json', 'order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1'], { env: secret });
    expect(json.code).toBe(2);
    expect(jsonError(json.stderr)).toEqual({ kind: 'usage', message: 'remote mode needs the merchant id: --mch-id, CRYPTOPAY_MCH_ID or a profile' });
    expect(server.hits).toEqual([]);
  });

  it('a signed operation without a secret: exit 2 naming where a secret comes from; nothing is sent', async () => {
    const server = await tiny((_req, res) => envelope(res, null, 500, 0, 'should not be asked'));
    const r = await home().cli(['--remote', server.url, '--mch-id', 'M100001', 'order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1']);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: remote mode needs the merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, or store it in a profile\n',
    });
    expect(server.hits).toEqual([]);
  });

  // Found by a new user: `--operator bob refund …` on a remote was logged as api:M100001 without a
  // word; locally the same flag names bob. The remote's audit log cannot take it: say so.
  it('--operator on a remote: a note that the remote logs the signing merchant instead', async () => {
    const server = await tiny((req, res) => envelope(res, 'PENDING_PAY'));
    const r = await home().cli(['--remote', server.url, '--mch-id', 'M100001', '--operator', 'bob', 'order', 'status', ORDER]);
    expect(r).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: 'note: --operator is not sent to a remote: its audit log names the merchant whose secret signs (api:M100001)\n' });
  });

  // Found by a new user: `withdraw apply --chain-id 31337` on a profile said only "missing
  // required option --chain-type", though the help says it follows from the chain: on a remote
  // it does only for the built-in chains. The refusal now says why, and nothing is sent.
  // Since POST /api/v1/chains the CLI asks the service which chains it knows (test/remote/
  // server-chains.test.ts); a service from before it answers 404, and the refusal is as it was.
  it('withdraw apply on a remote that cannot list its chains, a chain the CLI does not know, no --chain-type or --token: exit 2 saying why', async () => {
    const server = await tiny((req, res) => (req.url === '/api/v1/chains' ? envelope(res, null, 404, 0, 'Not found') : envelope(res, null, 500, 0, 'should not be asked')));
    const h = home();
    const base = ['--remote', server.url, '--mch-id', 'M100001', 'withdraw', 'apply', '--uid', 'u1', '--amount', '7', '--chain-id', '31337', '--to', EVM_TO];
    const [noType, noToken] = await Promise.all([h.cli(base, { env: SIGNER }), h.cli([...base, '--chain-type', 'EVM'], { env: SIGNER })]);
    // The reason the list is missing is said too: a release before the endpoint, or a --remote
    // that is not the service's base URL (a code review: the hint was lost).
    const why = `chain 31337 is not one this command knows on a remote (built in: 1, 56, 137, 728126428), so its type and token do not follow from it; give --chain-type and --token (the service refuses a chain it does not know). The service did not list its chains: the remote ${server.url} has no POST /api/v1/chains: is --remote the service's base URL (the address serve prints, without /api/v1)?`;
    expect(noType).toEqual({ code: 2, stdout: '', stderr: `error: missing required option --chain-type: ${why}\n` });
    expect(noToken).toEqual({ code: 2, stdout: '', stderr: `error: missing required option --token: ${why}\n` });
    expect(server.hits).toEqual(['POST /api/v1/chains', 'POST /api/v1/chains']);
  });

  it('the GET operations need neither (they are not signed)', async () => {
    const server = await tiny((req, res) => envelope(res, req.url!.includes('status') ? 'PENDING_PAY' : { EVM: EVM_TO }));
    const h = home();
    const [status, address] = await Promise.all([h.cli(['--remote', server.url, 'order', 'status', ORDER]), h.cli(['--remote', server.url, 'address', ORDER])]);
    expect(status).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(address).toEqual({ code: 0, stdout: `EVM  ${EVM_TO}\n`, stderr: '' });
  });

  // Found by a new user: `order status ord_doesnotexist` on a remote, without a secret, answered
  // "remote mode needs the merchant secret" (exit 2), while an existing id needed none. An id the
  // interface does not know is "Order not found" (exit 1); the message says an oid needs the secret.
  it('order status of an unknown id without a secret: not found (exit 1), not a demand for a secret', async () => {
    const server = await tiny((_req, res) => envelope(res, null, 404, 0, 'Order not found'));
    const r = await home().cli(['--remote', server.url, 'order', 'status', 'ord_doesnotexist']);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: Order not found (no order has this id; looking it up as an oid needs the merchant secret: CRYPTOPAY_SECRET, --secret-file FILE or a profile)\n',
    });
    expect(server.hits).toEqual(['GET /api/v1/order/ord_doesnotexist/status']);
  });

  it('a remote that is not an http(s) URL, or both --db and a remote: exit 2', async () => {
    const h = home();
    const [ftp, both] = await Promise.all([
      h.cli(['--remote', 'ftp://example.com', 'order', 'status', ORDER]),
      h.cli(['--remote', 'http://127.0.0.1:1', '--db', h.db, 'order', 'status', ORDER]),
    ]);
    expect(ftp).toEqual({ code: 2, stdout: '', stderr: 'error: the remote must be an http or https URL, got "ftp://example.com"\n' });
    expect(both).toEqual({ code: 2, stdout: '', stderr: 'error: give either --db (local ledger) or a remote, not both\n' });
  });

  it('a remote with a query or a fragment: exit 2 before anything is sent, the query not repeated (it may hold a token)', async () => {
    const h = home();
    const [query, fragment, env] = await Promise.all([
      h.cli(['--remote', 'http://127.0.0.1:1/?key=QUERYSECRET', 'order', 'status', ORDER]),
      h.cli(['--remote', 'http://127.0.0.1:1/base#frag', 'order', 'status', ORDER]),
      h.cli(['order', 'status', ORDER], { env: { CRYPTOPAY_REMOTE: 'https://pay.example.com/?token=QUERYSECRET' } }),
    ]);
    const refusal = (shown: string) => `error: the remote ${shown} has a query or a fragment, which a request to it would drop: give the service's base URL alone, such as https://pay.example.com\n`;
    expect(query).toEqual({ code: 2, stdout: '', stderr: refusal('http://127.0.0.1:1/?…') });
    expect(fragment).toEqual({ code: 2, stdout: '', stderr: refusal('http://127.0.0.1:1/base#…') });
    expect(env).toEqual({ code: 2, stdout: '', stderr: refusal('https://pay.example.com/?…') });
    // Nor when the URL is refused for another reason first.
    const others = await Promise.all(['ftp://pay.example.com/?token=QUERYSECRET', 'https://pay.example.com:99999/?token=QUERYSECRET', 'https://pay example.com/#QUERYSECRET'].map((u) => h.cli(['--remote', u, 'order', 'status', ORDER])));
    for (const r of others) expect(r).toMatchObject({ code: 2, stderr: expect.not.stringContaining('QUERYSECRET') });
  });
});
