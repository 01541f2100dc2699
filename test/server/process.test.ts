import { copyFileSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { mnemonicIn } from './first-run.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { checkReply } from './openapi-check.js';
import { httpJson, killAll, ledgerWithMerchant, nextNonce, nextOid, runCli, spawnServe, tempDir, type Merchant, type Spawned } from './helpers.js';

/**
 * The real binary: `cryptopay serve --port 0 --db FILE` (dist/, so run `npx tsc -p
 * tsconfig.build.json` after a change to src/). Every process is stopped by the test.
 */

const tmp = tempDir();
let n = 0;
const newDb = () => join(tmp.dir, `ledger-${++n}.db`);

afterEach(() => killAll());
afterAll(() => tmp.cleanup());

const postJson = (url: string, path: string, body: string) => httpJson(url, path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

function signedText(m: Merchant, fields: Record<string, unknown>): { text: string; sign: string; nonce: string } {
  const body = { mchId: m.mchId, timestamp: Date.now(), nonce: nextNonce(), ...fields };
  const s = sign(body, m.secret);
  return { text: JSON.stringify({ ...body, sign: s }), sign: s, nonce: body.nonce };
}

describe('serve --dev on an empty ledger', () => {
  it('prints mchId, secret and a curl line whose body creates an order, and never the wallet words', async () => {
    const db = newDb();
    const srv = await spawnServe(db, {}, ['--dev']);
    await srv.waitFor(/Sign your own bodies:\n.*--json\n/);
    const err = srv.stderr();
    expect(err).toContain('  wallet  the public anvil test mnemonic: PUBLIC AND UNSAFE, anyone can take what its addresses receive');
    expect(mnemonicIn(err + srv.stdout())).toBeUndefined();
    const mchId = /^ {2}mchId {3}(M\d+)$/m.exec(err)?.[1];
    const secret = /^ {2}secret {2}(sk_\S+)$/m.exec(err)?.[1];
    expect(mchId, err).toBeDefined();
    expect(secret, err).toBeDefined();
    const curl = /^ {2}curl -s -X POST (\S+) -H 'Content-Type: application\/json' -d '(.+)'$/m.exec(err);
    expect(curl, err).not.toBeNull();
    expect(curl![1]).toBe(`${srv.url}/api/v1/order`);
    const body = JSON.parse(curl![2]!);
    expect(body).toMatchObject({ mchId, uid: expect.any(String), amount: expect.any(String), timestamp: expect.any(Number), nonce: expect.any(String), sign: expect.any(String) });
    const { sign: given, ...rest } = body;
    expect(given).toBe(sign(rest, secret!));

    const r = await postJson(srv.url, '/api/v1/order', curl![2]!);
    expect(r.json, r.text).toMatchObject({ code: 1, msg: 'success', data: { oid: body.oid, status: 'PENDING_PAY', amount: '12.5' } });
    // The same curl line a second time is a replay.
    const again = await postJson(srv.url, '/api/v1/order', curl![2]!);
    expect({ status: again.status, msg: again.json.msg }).toEqual({ status: 401, msg: 'nonce has already been used' });

    await srv.waitFor(/POST \/api\/v1\/order 401 /, 'stdout');
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
    // The access log on stdout never repeats the secret, the signature or the nonce.
    for (const secretish of [secret!, body.sign, body.nonce]) expect(srv.stdout()).not.toContain(secretish);
  });
});

describe('a public URL on a port browsers refuse', () => {
  // Found by an operator review: serve on port 6666 answered curl, while browsers and the CLI's
  // --remote (fetch) refuse the port before sending anything. serve says so when it starts.
  it('is served, with a warning that payment pages and --remote cannot reach it', async () => {
    const db = newDb();
    await ledgerWithMerchant(db);
    const srv = await spawnServe(db, {}, ['--public-url', 'http://127.0.0.1:6666']);
    await srv.waitFor(/sign requests with a merchant's secret: .*\n/);
    expect(srv.stderr()).toContain(
      "  warning: port 6666 is one that browsers and fetch (the HTTP client of this CLI) refuse to connect to, whatever answers there: payment pages there will not open, and cryptopay --remote cannot reach it; choose another --port (or a --public-url on another port)\n",
    );
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
    const plain = await spawnServe(newDb());
    await plain.waitFor(/payment pages at .*\n/);
    expect(plain.stderr()).not.toContain('warning: port');
    expect((await plain.stop()).code, plain.stderr()).toBe(0);
  });
});

// A durability review: with the ledger file deleted, or replaced (a backup restored with mv)
// while serve ran, serve went on answering 200 to hundreds of creates that were gone once it
// stopped, and /healthz said ok.
describe('the ledger file deleted or replaced under serve', () => {
  it.each([
    ['deleted', (db: string) => unlinkSync(db)],
    ['replaced by a backup', (db: string) => renameSync(`${db}.bak`, db)],
  ])('%s: no change is acknowledged from then on: 503 saying so, healthz 503, logged', async (name, swap) => {
    const db = newDb();
    const m = await ledgerWithMerchant(db);
    copyFileSync(db, `${db}.bak`);
    const srv = await spawnServe(db);
    const create = () => postJson(srv.url, '/api/v1/order', signedText(m, { oid: nextOid(), uid: 'u1', amount: '10' }).text);
    const before = await create();
    expect(before.json, before.text).toMatchObject({ code: 1 });
    swap(db);
    const after = [await create(), await create()];
    for (const r of after) {
      expect(r.status, r.text).toBe(503);
      expect(r.json).toMatchObject({ code: 0, msg: expect.stringContaining(`the ledger file ${db} is not the file serve opened any more (deleted, moved or replaced while serve ran)`) });
    }
    const health = await httpJson(srv.url, '/healthz');
    expect(health.status).toBe(503);
    await srv.waitFor(/the ledger file .* is not the file serve opened any more/);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
    // The file put there is whole afterwards: serve's WAL went into the file it had, not into this one.
    if (name === 'replaced by a backup') {
      const check = await runCli(['ledger', 'check', '--db', db]);
      expect(check.code, check.stderr + check.stdout).toBe(0);
    }
  });
});

// A durability review: a start that failed after the port was open (the ledger's write lock
// held by another process past the busy timeout, a full disk) printed the error and went on
// holding the port, answering 500 to everything and ignoring SIGTERM.
describe('a start that fails after the port is open', () => {
  it('closes the port and exits with the error', async () => {
    const db = newDb();
    await ledgerWithMerchant(db);
    // The first write of serve's start refused, as a full disk or a lock held too long refuses it.
    const ledger = openLedger(db);
    try {
      ledger.sqlite.exec(`CREATE TRIGGER refuse_settings BEFORE INSERT ON settings BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END`);
    } finally {
      ledger.close();
    }
    const r = await runCli(['serve', '--host', '127.0.0.1', '--port', '0', '--db', db]);
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.stderr).toContain('disk I/O error (test)');
    expect(r.stderr).not.toContain('cryptopay serving');
  }, 20_000);
});

describe('replay across a restart', () => {
  it('refuses the same signed body after serve was stopped and started again on the same ledger', async () => {
    const db = newDb();
    const m = await ledgerWithMerchant(db);
    const { text } = signedText(m, { oid: nextOid(), uid: 'u1', amount: '10' });

    const first = await spawnServe(db);
    await first.waitFor(/sign requests with a merchant's secret: .*\n/);
    expect(first.stderr()).not.toContain(m.secret);
    const r1 = await postJson(first.url, '/api/v1/order', text);
    expect(r1.json, r1.text).toMatchObject({ code: 1 });
    expect(await first.stop(), first.stderr()).toEqual({ code: 0, signal: null });

    const second = await spawnServe(db);
    const r2 = await postJson(second.url, '/api/v1/order', text);
    expect({ status: r2.status, body: r2.json }).toEqual({ status: 401, body: { code: 0, msg: 'nonce has already been used', data: null, systemTime: expect.any(Number) } });
    expect(await second.stop(), second.stderr()).toEqual({ code: 0, signal: null });

    const ledger = openLedger(db);
    try {
      expect(Number((ledger.sqlite.prepare('select count(*) as n from orders').get() as { n: bigint }).n)).toBe(1);
    } finally {
      ledger.close();
    }
  });
});

describe('serve\'s threads', () => {
  it.runIf(process.platform === 'linux')('the address derivation thread alone runs at the lowest priority; the serving thread and the thread pool that runs the fsyncs keep the process\'s', async () => {
    const db = newDb();
    const m = await ledgerWithMerchant(db);
    const srv = await spawnServe(db);
    await srv.waitFor(/sign requests with a merchant's secret: .*\n/);
    // Orders: their commits are fsync'ed on libuv's pool, so its threads exist by now.
    for (let i = 0; i < 3; i++) {
      const r = await postJson(srv.url, '/api/v1/order', signedText(m, { oid: nextOid(), uid: 'u1', amount: '10' }).text);
      expect(r.json, r.text).toMatchObject({ code: 1 });
    }
    const pid = srv.child.pid!;
    const nice = (tid: string) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    // The derivation thread lowers itself just after it starts.
    let nices: number[] = [];
    for (let i = 0; i < 50; i++) {
      nices = readdirSync(`/proc/${pid}/task`).map(nice);
      if (nices.includes(19)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(nices.filter((n) => n === 19)).toHaveLength(1);
    expect(nices.filter((n) => n !== 19 && n !== 0)).toEqual([]);
    expect(nice(String(pid))).toBe(0);
    expect(await srv.stop(), srv.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('stopping', () => {
  it('on SIGTERM lets a slow request in flight finish, refuses new connections, exits 0 with the stop lines, ledger intact', async () => {
    const db = newDb();
    const m = await ledgerWithMerchant(db);
    const srv = await spawnServe(db);
    const { text } = signedText(m, { oid: nextOid(), uid: 'slow', amount: '7' });
    const url = new URL(srv.url);

    // Headers now, with Expect: 100-continue, so that Node's "100 Continue" proves the request has
    // reached the app; then half the body, and the rest only after SIGTERM.
    let resolveReply!: (v: { status: number; body: string }) => void;
    const reply = new Promise<{ status: number; body: string }>((r) => (resolveReply = r));
    let resolveContinue!: () => void;
    const continued = new Promise<void>((r) => (resolveContinue = r));
    const req = httpRequest(
      {
        host: url.hostname, port: url.port, method: 'POST', path: '/api/v1/order', agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), Expect: '100-continue' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolveReply({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (e) => resolveReply({ status: -1, body: String(e) }));
    req.on('continue', () => resolveContinue());
    req.flushHeaders();
    await continued;
    const half = Math.floor(text.length / 2);
    req.write(text.slice(0, half));
    await new Promise((r) => setTimeout(r, 100));

    const t0 = Date.now();
    srv.child.kill('SIGTERM');
    await srv.waitFor(/SIGTERM: finishing requests in flight, then stopping/);
    expect(srv.child.exitCode).toBeNull(); // still running: a request is in flight

    // No new connection is taken once stopping.
    await expect(fetch(`${srv.url}/healthz`)).rejects.toThrow();

    req.end(text.slice(half));
    const r = await reply;
    expect(r.status, r.body).toBe(200);
    checkReply('POST', '/api/v1/order', { status: r.status, text: r.body });
    expect(JSON.parse(r.body)).toMatchObject({ code: 1, data: { uid: 'slow', amount: '7', status: 'PENDING_PAY' } });

    const exit = await srv.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(srv.stderr()).toMatch(/SIGTERM: finishing requests in flight, then stopping\nstopped; ledger closed\n$/);

    const check = await runCli(['ledger', 'check', '--db', db]);
    expect(check).toMatchObject({ code: 0, stdout: 'ledger ok: every invariant holds\n' });
    const ledger = openLedger(db);
    try {
      expect((ledger.sqlite.prepare("select uid, status from orders where uid = 'slow'").all() as unknown[]).length).toBe(1);
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      ledger.close();
    }
  });

  it('on SIGTERM while idle, and on SIGINT, exits 0 promptly with the stop lines', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const db = newDb();
      await ledgerWithMerchant(db);
      const srv: Spawned = await spawnServe(db);
      // A keep-alive connection left open by a client must not hold the process up.
      expect((await httpJson(srv.url, '/healthz')).status).toBe(200);
      const t0 = Date.now();
      srv.child.kill(signal);
      expect(await srv.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(srv.stderr()).toContain(`${signal}: finishing requests in flight, then stopping\nstopped; ledger closed\n`);
      expect((await runCli(['ledger', 'check', '--db', db])).code).toBe(0);
    }
  });
});

describe('logs of a spawned server', () => {
  it('stdout has one access line per request; neither stdout nor stderr ever shows the secret, a sign value or a nonce', async () => {
    const db = newDb();
    const m = await ledgerWithMerchant(db);
    const srv = await spawnServe(db);
    const shown: string[] = [m.secret];
    const send = async (path: string, fields: Record<string, unknown>, tamper = false) => {
      const s = signedText(m, fields);
      shown.push(s.sign, s.nonce);
      const text = tamper ? s.text.replace(s.sign, 'f'.repeat(64)) : s.text;
      return postJson(srv.url, path, text);
    };
    const o = (await send('/api/v1/order', { oid: nextOid(), uid: 'u1', amount: '3' })).json.data;
    await send('/api/v1/order', { oid: nextOid(), uid: 'u1', amount: '3' }, true);
    await send('/api/v1/refund', { id: o.id, amount: '1' });
    await send('/api/v1/withdraw/apply', { uid: 'u1', amount: '1', to: 'nope', chainId: 1, chainType: 'EVM', token: 'x' });
    await httpJson(srv.url, `/api/v1/address/${o.id}`);
    await httpJson(srv.url, `/api/v1/order/${o.id}/status?sign=${shown[1]}`);
    await httpJson(srv.url, '/healthz');
    await postJson(srv.url, '/api/v1/order', '{not json');

    await srv.waitFor(/(?:.*\n){8}/, 'stdout');
    expect(await srv.stop(), srv.stderr()).toEqual({ code: 0, signal: null });
    const lines = srv.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(8);
    const line = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (GET|POST) (\S+) (\d{3}) \d+\.\dms (M\d+|-)$/;
    expect(lines.map((l) => line.exec(l)?.slice(1))).toEqual([
      ['POST', '/api/v1/order', '200', m.mchId],
      ['POST', '/api/v1/order', '401', '-'],
      ['POST', '/api/v1/refund', '409', m.mchId],
      ['POST', '/api/v1/withdraw/apply', '400', m.mchId],
      ['GET', `/api/v1/address/${o.id}`, '200', '-'],
      ['GET', `/api/v1/order/${o.id}/status`, '200', '-'],
      ['GET', '/healthz', '200', '-'],
      ['POST', '/api/v1/order', '400', '-'],
    ]);
    for (const secretish of shown) {
      expect(srv.stdout()).not.toContain(secretish);
      expect(srv.stderr()).not.toContain(secretish);
    }
  });
});
