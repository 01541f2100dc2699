import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { serveLimits } from '../../src/commands/serve.js';
import { createApp } from '../../src/server/app.js';
import { clientKey, DEFAULT_HTTP_LIMITS, listen } from '../../src/server/listen.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import {
  expectOk, expectRefused, killAll, nextOid, runCli, snapshot, spawnServe, startServer, tempDir,
  type TestServer,
} from './helpers.js';
import { checkRawRefusal } from './openapi-check.js';
import { exchange, one, open, parseResponses, type RawResponse } from './raw-http.js';

/**
 * Issue #10 item 7: a client cannot hold the server open (timeouts, a cap on connections), and
 * every answer the HTTP layer itself makes is the envelope (decisions §7). Raw sockets against a
 * real server on 127.0.0.1; the limits are shortened through listen()'s options, and the
 * defaults are read from the configuration serve uses.
 */

let s: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const so of sockets.splice(0)) so.destroy();
  if (s) {
    expect(await s.service.check()).toEqual([]);
    expect(s.errorLog).toEqual([]);
    await s.close();
    s = undefined;
  }
  killAll();
});

/** The envelope of a refusal made by the HTTP layer, as a user's client reads it. */
function expectRawRefusal(r: RawResponse | undefined, status: number, msg: string | RegExp): void {
  expect(r, 'no answer at all').toBeDefined();
  expect({ status: r!.status, body: r!.json }, r!.body).toEqual({
    status,
    body: { code: 0, msg: typeof msg === 'string' ? msg : expect.stringMatching(msg), data: null, systemTime: expect.any(Number) },
  });
  expect(r!.headers['content-type']).toBe('application/json');
  expect(r!.headers['cache-control']).toBe('no-store');
  checkRawRefusal({ status: r!.status, text: r!.body });
}

const orderCount = (t: TestServer) => Number((t.ledger.sqlite.prepare('select count(*) as n from orders').get() as { n: number | bigint }).n);

function signedOrderText(t: TestServer, m: { mchId: string; secret: string }): string {
  return JSON.stringify(t.signed(m, { oid: nextOid(), uid: 'u1', amount: '1' }));
}

const post = (path: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Opens a connection, makes one request on it and leaves it open (idle, kept alive). */
async function idleConnection(url: string, localAddress?: string): Promise<Socket> {
  const socket = await open(url, localAddress);
  sockets.push(socket);
  socket.on('error', () => {});
  const answered = new Promise<string>((resolve) => {
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      raw += d;
      if (raw.includes('\r\n\r\n') && raw.endsWith('}')) resolve(raw);
    });
  });
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  expect(parseResponses(await answered)[0]!.status).toBe(200);
  return socket;
}

describe('the cap on open connections', () => {
  it('answers a connection past the cap with the 503 envelope and serves again once one closes', async () => {
    s = await startServer({ limits: { maxConnections: 3 } });
    const held = [await idleConnection(s.url), await idleConnection(s.url), await idleConnection(s.url)];

    const [over, ...more] = await one(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expectRawRefusal(over, 503, 'the server has 3 open connections, its limit; retry shortly');
    expect(over!.headers['retry-after']).toBe('1');
    expect(over!.headers.connection).toBe('close');
    expect(more).toEqual([]);
    // The operator sees the refusal in the access log, to know when to raise the cap.
    expect(s.accessLog.at(-1)).toMatch(/^\S+ - - 503 0\.0ms -$/);

    held[0]!.destroy();
    for (let i = 0; i < 50; i++) {
      const [r] = await one(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      if (r?.status === 200) return;
      await new Promise((res) => setTimeout(res, 20));
    }
    throw new Error('no connection was served after one of the three closed');
  });

  it('caps the connections of one client address: its next one gets the 503, another address is still served', async () => {
    s = await startServer({ limits: { maxConnections: 10, maxConnectionsPerClient: 2 } });
    await idleConnection(s.url);
    await idleConnection(s.url);
    const over = await open(s.url);
    sockets.push(over);
    const answer = await new Promise<string>((resolve) => {
      let raw = '';
      over.setEncoding('latin1');
      over.on('data', (d: string) => (raw += d));
      over.on('close', () => resolve(raw));
      over.on('error', () => {});
      over.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expectRawRefusal(parseResponses(answer)[0], 503, 'this client address has reached its limit of 2 open connections; close some or retry shortly');
    expect(parseResponses(answer)[0]!.headers['retry-after']).toBe('1');
    expect(s.accessLog.at(-1)).toMatch(/^\S+ - - 503 0\.0ms -$/);
    // Another client (127.0.0.2 is this machine's loopback too) is served while the first is at its cap.
    await idleConnection(s.url, '127.0.0.2');
    // The first client is served again once one of its connections closes.
    sockets[0]!.destroy();
    for (let i = 0; i < 50; i++) {
      const [r] = await one(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      if (r?.status === 200) return;
      await new Promise((res) => setTimeout(res, 20));
    }
    throw new Error('the first client was not served after one of its connections closed');
  });

  it('counts the IPv6 addresses of one /64 as one client, and an IPv4-mapped address as its IPv4 one', () => {
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe(clientKey('2001:db8:1:2::9'));
    expect(clientKey('2001:db8:1:2::9')).not.toBe(clientKey('2001:db8:1:3::9'));
    expect(clientKey('::ffff:192.0.2.7')).toBe(clientKey('192.0.2.7'));
    expect(clientKey('192.0.2.7')).not.toBe(clientKey('192.0.2.8'));
    expect(clientKey('::1')).toBe(clientKey('0:0:0:0:0:0:0:1'));
    expect(clientKey('fe80::1%eth0')).toBe(clientKey('fe80::2%eth1'));
  });

  it('serve takes the per-client cap as --max-connections-per-client N, 0 for none (the real binary)', async () => {
    const tmp = tempDir();
    try {
      const srv = await spawnServe(join(tmp.dir, 'ledger.db'), {}, ['--max-connections-per-client', '1']);
      await idleConnection(srv.url);
      const [over] = await one(srv.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expectRawRefusal(over, 503, 'this client address has reached its limit of 1 open connection; close some or retry shortly');
      for (const so of sockets.splice(0)) so.destroy();
      expect((await srv.stop()).code, srv.stderr()).toBe(0);

      const off = await spawnServe(join(tmp.dir, 'ledger.db'), {}, ['--max-connections', '5', '--max-connections-per-client', '0']);
      for (let i = 0; i < 5; i++) await idleConnection(off.url);
      const [full] = await one(off.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expectRawRefusal(full, 503, 'the server has 5 open connections, its limit; retry shortly');
      for (const so of sockets.splice(0)) so.destroy();
      expect((await off.stop()).code, off.stderr()).toBe(0);
    } finally {
      tmp.cleanup();
    }
  });

  it.each(['-1', 'abc', '1.5', '1e3', ''])('serve refuses --max-connections-per-client %j as a usage error (exit 2)', async (value) => {
    const tmp = tempDir();
    try {
      const r = await runCli(['serve', '--port', '0', '--db', join(tmp.dir, 'l.db'), '--max-connections-per-client', value]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain('--max-connections-per-client must be a whole number from 0 (no cap) to 999999');
    } finally {
      tmp.cleanup();
    }
  });

  it('serve takes the cap as --max-connections N (the real binary)', async () => {
    const tmp = tempDir();
    try {
      const srv = await spawnServe(join(tmp.dir, 'ledger.db'), {}, ['--max-connections', '2']);
      await idleConnection(srv.url);
      await idleConnection(srv.url);
      const [over] = await one(srv.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expectRawRefusal(over, 503, 'the server has 2 open connections, its limit; retry shortly');
      for (const so of sockets.splice(0)) so.destroy();
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    } finally {
      tmp.cleanup();
    }
  });

  it.each(['0', '-1', 'abc', '1.5', '1e3', ''])('serve refuses --max-connections %j as a usage error (exit 2)', async (value) => {
    const tmp = tempDir();
    try {
      const r = await runCli(['serve', '--port', '0', '--db', join(tmp.dir, 'l.db'), '--max-connections', value]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain('--max-connections must be a whole number from 1 to 999999');
    } finally {
      tmp.cleanup();
    }
  });
});

describe('timeouts', () => {
  const short = { headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 50 };

  it('closes a connection whose headers do not arrive in time, with the 408 envelope', async () => {
    s = await startServer({ limits: short });
    const partial = await exchange(s.url, ['GET /healthz HTTP/1.1\r\nHost: x\r\n'], { waitMs: 3_000 });
    expect(partial.closedAfterMs, 'the server left the connection open').toBeLessThan(2_000);
    expect(partial.responses).toHaveLength(1);
    expectRawRefusal(partial.responses[0], 408, 'the request took too long to arrive');

    // Headers trickling in a byte at a time do not reset the clock.
    const trickle = await exchange(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: abcdefghijklmnopqrstuvwxyz'.split(''), { gapMs: 50, waitMs: 5_000 });
    expect(trickle.closedAfterMs, 'the server waited for the trickle').toBeLessThan(2_000);
    expectRawRefusal(trickle.responses[0], 408, 'the request took too long to arrive');

    // A connection that never sends a byte is closed as well.
    const silent = await exchange(s.url, [], { waitMs: 3_000 });
    expect(silent.closedAfterMs, 'the server left a silent connection open').toBeLessThan(2_000);
  });

  it('answers a body sent one byte at a time 408 once the request time is up, changing nothing', async () => {
    s = await startServer({ limits: short });
    const m = await s.addMerchant();
    const body = signedOrderText(s, m);
    const head = `POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const before = snapshot(s.ledger);
    const slow = await exchange(s.url, [head, ...body.slice(0, 40).split('')], { gapMs: 100, waitMs: 5_000 });
    expect(slow.closedAfterMs, 'the server waited for the trickle').toBeLessThan(2_500);
    expect(slow.responses).toHaveLength(1);
    expectRawRefusal(slow.responses[0], 408, 'the request took too long to arrive');
    expect(snapshot(s.ledger)).toEqual(before);
  });

  it('closes an idle keep-alive connection after the keep-alive time, and says so in Keep-Alive', async () => {
    s = await startServer({ limits: { keepAliveTimeoutMs: 1_000 } });
    const idle = await exchange(s.url, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], { waitMs: 6_000 });
    expect(idle.responses.map((r) => [r.status, r.headers['keep-alive']])).toEqual([[200, 'timeout=1']]);
    // Node grants one second of grace past the advertised time.
    expect(idle.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(idle.closedAfterMs).toBeLessThan(3_000);
  });

  it('serve runs with headers in 10 s, a request in 30 s, idle keep-alive 5 s and at most 1000 connections', async () => {
    expect(serveLimits({})).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000, maxConnectionsPerClient: 100, checkIntervalMs: 1_000 });
    expect(serveLimits({ maxConnectionsPerClient: '0' })).toEqual({ ...DEFAULT_HTTP_LIMITS, maxConnectionsPerClient: 0 });
    expect(serveLimits({ maxConnections: '25' })).toEqual({ ...DEFAULT_HTTP_LIMITS, maxConnections: 25 });
    // And the socket server really runs with them.
    const tmp = tempDir();
    const ledger = openLedger(join(tmp.dir, 'l.db'));
    const app = createApp({ backend: new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' } }) });
    const listening = await listen(app, '127.0.0.1', 0, serveLimits({}));
    try {
      expect(listening.limits).toEqual(serveLimits({}));
    } finally {
      await listening.close();
      ledger.close();
      tmp.cleanup();
    }
  });
});

describe('answers the HTTP layer makes are the envelope', () => {
  it('answers an invalid chunk size with the 400 envelope, changing nothing', async () => {
    s = await startServer();
    const before = snapshot(s.ledger);
    const r = await one(s.url, 'POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    expect(r).toHaveLength(1);
    expectRawRefusal(r[0], 400, 'malformed HTTP request');
    expect(r[0]!.headers.connection).toBe('close');
    expect(snapshot(s.ledger)).toEqual(before);
  });

  it('answers a Content-Length shorter than the body: the short body, then the rest as malformed', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const body = signedOrderText(s, m);
    const text = `POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`;
    const r = await one(s.url, text);
    expect(r.map((x) => x.status)).toEqual([400, 400]);
    expectRawRefusal(r[0], 400, 'the request body is not valid JSON');
    expectRawRefusal(r[1], 400, 'malformed HTTP request');
    expect(orderCount(s)).toBe(0);
  });

  it('answers a valid request, then the garbage pipelined after it: the order created keeps its answer', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const body = signedOrderText(s, m);
    const r = await one(s.url, `${post('/api/v1/order', body)}GARBAGE\r\n\r\n`);
    expect(r.map((x) => x.status)).toEqual([200, 400]);
    expect(r[0]!.json).toMatchObject({ code: 1, msg: 'success', data: { oid: JSON.parse(body).oid, status: 'PENDING_PAY' } });
    expectRawRefusal(r[1], 400, 'malformed HTTP request');
    expect(orderCount(s)).toBe(1);
  });

  it('answers two pipelined requests then garbage in order', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const a = signedOrderText(s, m);
    const b = signedOrderText(s, m);
    const r = await one(s.url, `${post('/api/v1/order', a)}${post('/api/v1/order', b)}\x00\x01\r\n\r\n`);
    expect(r.map((x) => [x.status, x.json?.data?.oid ?? x.json?.msg])).toEqual([
      [200, JSON.parse(a).oid],
      [200, JSON.parse(b).oid],
      [400, 'malformed HTTP request'],
    ]);
  });

  it('answers an Expect it does not meet with the 417 envelope, and still meets 100-continue', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const r = await one(s.url, post('/api/v1/order', signedOrderText(s, m), 'Expect: x\r\nConnection: close\r\n'));
    expect(r).toHaveLength(1);
    expectRawRefusal(r[0], 417, 'Expect: x is not supported (only 100-continue)');
    expect(s.accessLog.at(-1)).toMatch(/ POST \/api\/v1\/order 417 0\.0ms -$/);
    expect(orderCount(s)).toBe(0);

    const cont = await exchange(s.url, [
      `POST /api/v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: ${signedOrderText(s, m).length}\r\n\r\n`,
    ], { waitMs: 300 });
    expect(cont.raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
  });

  it('answers an HTTP/1.1 request without Host with the 400 envelope; HTTP/1.0 needs none', async () => {
    s = await startServer();
    const r = await one(s.url, 'GET /healthz HTTP/1.1\r\n\r\n');
    expect(r).toHaveLength(1);
    expectRawRefusal(r[0], 400, 'the Host header is required in HTTP/1.1');
    expect(s.accessLog.at(-1)).toMatch(/ GET \/healthz 400 0\.0ms -$/);
    const old = await one(s.url, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.map((x) => [x.status, x.json?.data])).toEqual([[200, { status: 'ok' }]]);
  });

  it('answers CONNECT with the 405 envelope instead of dropping the connection', async () => {
    s = await startServer();
    const r = await one(s.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(r).toHaveLength(1);
    expectRawRefusal(r[0], 405, 'CONNECT is not allowed: this is not a proxy');
  });

  it('sends Cache-Control: no-store on every answer', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const o = await s.order(m);
    const replies = [
      await s.get('/healthz'),
      await s.get('/api/v1/openapi.json'),
      await s.get(`/api/v1/order/${o.id}/status`),
      await s.get(`/api/v1/address/${o.id}`),
      await s.get('/api/v1/address/ord_missing'),
      await s.get('/nowhere'),
      await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '1' })),
      await s.post('/api/v1/order', '{'),
      await s.fetch('/api/v1/refund'),
    ];
    expect(replies.map((r) => r.headers.get('cache-control'))).toEqual(replies.map(() => 'no-store'));
  });
});

describe('wrong methods on the GET paths', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('%s answers 405 with Allow: GET, HEAD', async (method) => {
    s = await startServer();
    const m = await s.addMerchant();
    const o = await s.order(m);
    for (const path of [`/api/v1/address/${o.id}`, `/api/v1/order/${o.id}/status`, '/api/v1/address/ord_missing', '/api/v1/openapi.json', '/healthz']) {
      const r = await s.fetch(path, { method, ...(method === 'OPTIONS' ? {} : { body: '{}', headers: { 'Content-Type': 'application/json' } }) });
      expectRefused(r, 405, `${method} is not allowed on ${path}; use GET`);
      expect(r.headers.get('allow'), path).toBe('GET, HEAD');
    }
    expectOk(await s.get(`/api/v1/order/${o.id}/status`));
  });
});

afterAll(() => killAll());
