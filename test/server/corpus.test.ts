import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { EVM_TO, USDT_ETH, rawRequest, snapshot, startServer, type Merchant, type Reply, type TestServer } from './helpers.js';

/**
 * A corpus of bad input sent to every endpoint: whatever arrives, the answer is the error
 * envelope with a 4xx status, never a 5xx, never a stack trace, and the ledger is left intact.
 */

const POSTS = ['/api/v1/order', '/api/v1/refund', '/api/v1/withdraw/apply', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject'] as const;
type PostPath = (typeof POSTS)[number];

let s: TestServer;
let m: Merchant;
let paidOrderId: string;
let pendingWithdrawal: string;
let before: Record<string, unknown>;
let sent = 0;

beforeAll(async () => {
  s = await startServer();
  m = await s.addMerchant();
  paidOrderId = (await s.paidOrder(m, '10')).id;
  await s.credit(m, 'u1', '50');
  pendingWithdrawal = (await s.service.applyWithdrawal({ mchId: m.mchId, uid: 'u1', amount: '5', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })).id;
  before = snapshot(s.ledger);
});

afterAll(async () => {
  // Nothing the corpus sent changed the ledger, no request failed inside, and every invariant holds.
  expect(snapshot(s.ledger)).toEqual(before);
  expect(s.errorLog).toEqual([]);
  expect(await s.service.check()).toEqual([]);
  expect(s.accessLog.length).toBe(sent);
  expect(s.accessLog.filter((l) => / 5\d\d /.test(l))).toEqual([]);
  await s.close();
});

/** The well-formed refusal: status 4xx, exactly code/msg/data/systemTime, code 0, data null, a plain msg. */
function expectCleanRefusal(r: Reply, what: string): void {
  sent++;
  expect(r.status, `${what}: ${r.text}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${what}: ${r.text}`).toBeLessThan(500);
  expect(r.headers.get('content-type'), what).toMatch(/^application\/json/);
  expect(r.json, `${what}: ${r.text}`).toBeTypeOf('object');
  expect(Object.keys(r.json).sort(), what).toEqual(['code', 'data', 'msg', 'systemTime']);
  expect(r.json.code, what).toBe(0);
  expect(r.json.data, what).toBeNull();
  expect(Number.isSafeInteger(r.json.systemTime), what).toBe(true);
  expect(r.json.msg, what).toBeTypeOf('string');
  expect(r.json.msg.length, what).toBeGreaterThan(0);
  // Bounded by what was sent: an unknown-field refusal names every unknown key of a (≤ 64 KiB) body.
  expect(r.json.msg.length, what).toBeLessThan(64 * 1024);
  expect(r.json.msg, what).not.toMatch(/\n\s*at |\.[jt]s:\d+|node_modules|TypeError|SyntaxError|RangeError|internal error|SQLITE/);
}

/** A good body for each endpoint, for corpus cases that break one field of it. */
function goodFields(path: PostPath): Record<string, unknown> {
  switch (path) {
    case '/api/v1/order':
      return { oid: 'corpus-1', uid: 'u1', amount: '10', memo: 'm', expiredAt: s.clock.now + 60_000, notifyUrl: 'https://x.example/cb', redirectUrl: 'https://x.example/r', logo: 'https://x.example/l.png' };
    case '/api/v1/refund':
      return { id: paidOrderId, amount: '1', remark: 'r' };
    case '/api/v1/withdraw/apply':
      return { uid: 'u1', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH, notifyUrl: 'https://x.example/cb' };
    case '/api/v1/withdraw/confirm':
      return { logId: pendingWithdrawal, txHash: `0x${'7'.repeat(64)}`, blockNumber: 1 };
    case '/api/v1/withdraw/reject':
      return { id: pendingWithdrawal, remark: 'r' };
  }
}

const AUTH_FIELDS = ['mchId', 'timestamp', 'nonce', 'sign'];

/** A body of `path` with `field` set to `value`, signed where the value can be signed at all. */
function withField(path: PostPath, field: string, value: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { mchId: m.mchId, timestamp: s.clock.now, nonce: `corpus-${Math.random()}`, ...goodFields(path) };
  // defineProperty, so that "__proto__" becomes an own key that JSON.stringify writes out.
  if (field !== 'sign') Object.defineProperty(body, field, { value, enumerable: true, writable: true, configurable: true });
  try {
    const { sign: _s, ...rest } = body;
    body.sign = field === 'sign' ? value : sign(rest, m.secret);
  } catch {
    body.sign = '0'.repeat(64); // nested values cannot be signed; the server refuses them first anyway
  }
  return body;
}

async function postRaw(path: string, body: string | Buffer, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Reply> {
  return rawRequest(s.url, { method: 'POST', path, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, chunks: [body] });
}

// ---------------------------------------------------------------------------- bodies

const deepArray = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

/** Raw bodies, each sent to every POST endpoint. */
const RAW_BODIES: [string, string | Buffer, Record<string, string>?][] = [
  ['an empty body', ''],
  ['whitespace only', ' \n\t '],
  ['null', 'null'],
  ['[]', '[]'],
  ['a string', '"str"'],
  ['a number', '1'],
  ['true', 'true'],
  ['{}', '{}'],
  ['garbage bytes', Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0x80, 0x81, 0xc3, 0x28, 0xa0, 0xa1])],
  ['a NUL byte', '\u0000'],
  ['truncated JSON', '{"oid":"a","uid":'],
  ['a trailing comma', '{"oid":"a",}'],
  ['single quotes', "{'oid':'a'}"],
  ['two objects', '{}{}'],
  ['a JSON comment', '{/* c */"oid":"a"}'],
  ['NaN literal', '{"amount":NaN}'],
  ['huge numbers', '{"timestamp":1e999,"amount":123456789012345678901234567890,"blockNumber":1e308,"chainId":-1e308}'],
  ['a huge exponent', `{"timestamp":1${'0'.repeat(400)}}`],
  ['an array of 10000 elements', `[${Array.from({ length: 10_000 }, () => '1').join(',')}]`],
  ['deep array nesting (20000 levels)', deepArray],
  ['deep object nesting (10000 levels)', deepObject],
  ['__proto__ with an object', '{"__proto__":{"admin":true},"oid":"a"}'],
  ['__proto__ with a string', '{"__proto__":"x"}'],
  ['constructor.prototype', '{"constructor":{"prototype":{"polluted":1}}}'],
  ['toString and hasOwnProperty keys', '{"toString":"x","hasOwnProperty":"y","valueOf":1}'],
  ['duplicate keys', '{"oid":"a","oid":{"b":1}}'],
  ['unicode escapes and lone surrogates', '{"oid":"\\ud800","uid":"\\u202e\\u0000","amount":"\\uff11"}'],
  ['emoji and RTL text', '{"oid":"💥🧨","uid":"שלום","amount":"١٠"}'],
  ['a BOM before JSON', '\ufeff{"oid":"a"}'],
  ['JSON in UTF-16', Buffer.from('{"oid":"a"}', 'utf16le')],
  ['a 5000-key object', `{${Array.from({ length: 5_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`],
  ['form encoding under a JSON type', 'oid=a&uid=b&amount=1'],
  ['XML', '<order><oid>a</oid></order>'],
  ['a good JSON body as text/plain', '{"oid":"a"}', { 'Content-Type': 'text/plain' }],
  ['no Content-Type', '{"oid":"a"}', {}],
  ['a wrong charset type', '{"oid":"a"}', { 'Content-Type': 'application/jsonx' }],
  ['a body over 64 KiB', `{"memo":"${'x'.repeat(70_000)}"}`],
];

describe('bad bodies to every POST endpoint', () => {
  it.each(RAW_BODIES)('%s', async (name, body, headers) => {
    for (const path of POSTS) expectCleanRefusal(await postRaw(path, body, headers), `${name} to ${path}`);
  });
});

/** Field values of the wrong type, or out of bounds, for whatever field they land in. */
const WRONG_VALUES: [string, unknown][] = [
  ['a number', 123],
  ['a negative fraction', -1.5],
  ['true', true],
  ['false', false],
  ['an object', { a: 1 }],
  ['an array', ['x']],
  ['an empty object', {}],
  ['a string of 5000 characters', 'x'.repeat(5000)],
  ['a NUL string', '\u0000'],
  ['an SQL fragment', "' OR '1'='1"],
  ['emoji', '💥'],
  ['a lone surrogate', '\ud800'],
];

/** Fields that take any text (1 to N characters): odd strings are valid there, so they are kept out. */
const FREE_TEXT: Record<PostPath, string[]> = {
  '/api/v1/order': ['oid', 'uid', 'memo', 'nonce'],
  '/api/v1/refund': ['remark', 'nonce'],
  '/api/v1/withdraw/apply': ['uid', 'nonce'],
  '/api/v1/withdraw/confirm': ['nonce'],
  '/api/v1/withdraw/reject': ['remark', 'nonce'],
};

describe('wrong values in every field of every POST endpoint', () => {
  it.each(WRONG_VALUES)('%s', async (name, value) => {
    for (const path of POSTS) {
      const fields = [...Object.keys(goodFields(path)), ...AUTH_FIELDS];
      for (const field of fields) {
        // A number is a valid timestamp, expiredAt, blockNumber and chainId format; keep those out of this row.
        if (typeof value === 'number' && value > 0 && ['timestamp', 'expiredAt', 'blockNumber', 'chainId'].includes(field)) continue;
        if (typeof value === 'string' && value.length <= 64 && FREE_TEXT[path].includes(field)) continue;
        const r = await s.post(path, withField(path, field, value));
        expectCleanRefusal(r, `${field} = ${name} to ${path}`);
      }
    }
  });

  it('unknown fields on every endpoint, signed correctly', async () => {
    for (const path of POSTS) {
      for (const field of ['notifyURL', 'MCHID', 'extra', '__proto__', 'constructor', '', ' ', 'sign ', 'timestamp\u0000']) {
        const r = await s.post(path, withField(path, field, 'x'));
        expectCleanRefusal(r, `unknown field ${JSON.stringify(field)} to ${path}`);
      }
    }
  });
});

// ---------------------------------------------------------------------------- paths and methods

const ODD_IDS: [string, string][] = [
  ['a NUL', '%00'],
  ['a malformed escape', '%E0%A4%A'],
  ['an encoded slash', '..%2F..%2Fetc%2Fpasswd'],
  ['1000 characters', 'x'.repeat(1000)],
  ['65 characters', 'o'.repeat(65)],
  ['unicode', encodeURIComponent('订单💥')],
  ['an SQL fragment', encodeURIComponent("' OR '1'='1")],
  ['HTML', encodeURIComponent('<script>alert(1)</script>')],
  ['a space', '%20'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['invalid UTF-8', '%ff%fe'],
  ['a withdrawal id', 'WITHDRAWAL'],
  ['a percent sign', '%25'],
];

describe('GET endpoints with odd ids and query strings', () => {
  it.each(ODD_IDS)('an id with %s', async (_name, id) => {
    const realId = id === 'WITHDRAWAL' ? pendingWithdrawal : id;
    for (const [path, msg] of [[`/api/v1/address/${realId}`, 'Not found'], [`/api/v1/order/${realId}/status`, 'Order not found']] as const) {
      const r = await s.get(path);
      expectCleanRefusal(r, path);
      expect({ status: r.status, msg: r.json.msg }, path).toEqual({ status: 404, msg });
    }
  });

  it.each([
    ['signing fields', '?id=1&sign=abc'],
    ['__proto__', '?__proto__[x]=1'],
    ['5000 characters', `?q=${'x'.repeat(5000)}`],
    ['bad escapes', '?%E0%A4%A=%ff'],
  ])('a query string with %s', async (_name, query) => {
    const q = query.slice(0, 40);
    for (const path of ['/api/v1/address/ord_missing', '/api/v1/order/ord_missing/status']) expectCleanRefusal(await s.get(path + query), path + q);
    // Also on a real order: the query is ignored, the answer is the same as without it.
    const r = await s.get(`/api/v1/order/${paidOrderId}/status${query}`);
    sent++;
    expect(r.json?.data).toBe('PAID');
  });
});

describe('wrong methods and unknown paths', () => {
  it.each(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('%s on every POST endpoint answers 405 with Allow: POST', async (method) => {
    for (const path of POSTS) {
      const r = await s.fetch(path, { method, ...(method === 'GET' || method === 'OPTIONS' ? {} : { body: '{}', headers: { 'Content-Type': 'application/json' } }) });
      expectCleanRefusal(r, `${method} ${path}`);
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('%s on the GET endpoints answers 405 with Allow: GET, HEAD', async (method) => {
    for (const path of [`/api/v1/address/${paidOrderId}`, `/api/v1/order/${paidOrderId}/status`, '/api/v1/openapi.json', '/healthz']) {
      const r = await s.fetch(path, { method, body: '{}', headers: { 'Content-Type': 'application/json' } });
      expectCleanRefusal(r, `${method} ${path}`);
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('HEAD answers with a status and no body', async () => {
    for (const path of POSTS) expect((await s.fetch(path, { method: 'HEAD' })).status).toBe(405);
    sent += POSTS.length;
    expect((await s.fetch('/api/v1/address/ord_missing', { method: 'HEAD' })).status).toBe(404);
    sent += 1;
  });

  it.each([
    '/',
    '/api',
    '/api/v1',
    '/api/v1/',
    '/api/v2/order',
    '/api/v1/orders',
    '/api/v1/order/',
    '/API/V1/ORDER',
    '/api/v1/withdraw',
    '/api/v1/withdraw/cancel',
    '/api/v1/address',
    '/api/v1/address/',
    '/api/v1/order//status',
    '/api/v1/order/x/status/extra',
    '/api/v1/order/x/status/',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/api/v1/order%2Fx%2Fstatus',
    `/${'a/'.repeat(300)}`,
    '/healthz/x',
    '/favicon.ico',
  ])('%s answers 404 Not found to GET and POST', async (path) => {
    for (const method of ['GET', 'POST']) {
      const r = await s.fetch(path, { method, ...(method === 'POST' ? { body: '{}', headers: { 'Content-Type': 'application/json' } } : {}) });
      expectCleanRefusal(r, `${method} ${path}`);
      expect(r.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe('after the corpus', () => {
  it('the server still answers good requests', async () => {
    const r = await s.get(`/api/v1/order/${paidOrderId}/status`);
    sent++;
    expect(r.json).toMatchObject({ code: 1, data: 'PAID' });
  });
});
