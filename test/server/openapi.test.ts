import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EVM_TO, T0, TRON_CHAIN, TRON_TO, USDT_ETH, USDT_TRON, evmTx, expectOk, nextOid, nextTx, useServer, type Merchant, type TestServer,
} from './helpers.js';
import { checkedReplies, checkReply, requestValidator } from './openapi-check.js';

/**
 * Issue #10 item 11: the OpenAPI document tells the truth. What it lets a client send, the server
 * takes, and what it forbids, the server refuses with 400; every reply of the server tests is
 * checked against it (openapi-check.ts, called by helpers.ts).
 */

let s: TestServer;
let m: Merchant;
let doc: any;

useServer(['Shop'], { resetClock: true, noErrors: true }, (server, [shop]) => {
  s = server;
  m = shop!;
});

describe('the reply check of the test helpers', () => {
  it('runs on every reply and refuses what the document does not allow', async () => {
    const before = checkedReplies.count;
    doc = (await s.get('/api/v1/openapi.json')).json;
    expect(checkedReplies.count).toBe(before + 1);

    const good = { code: 1, msg: 'success', data: 'PAID', systemTime: T0 };
    expect(() => checkReply('GET', '/api/v1/order/ord_x/status', { status: 200, text: JSON.stringify(good) })).not.toThrow();
    expect(() => checkReply('GET', '/api/v1/order/ord_x/status', { status: 200, text: JSON.stringify({ ...good, data: 'LOST' }) })).toThrow(/does not allow/);
    expect(() => checkReply('GET', '/api/v1/order/ord_x/status', { status: 418, text: '{}' })).toThrow(/not documented/);
    expect(() => checkReply('POST', '/api/v1/order', { status: 400, text: '' })).toThrow(/not JSON/);
    expect(() => checkReply('POST', '/api/v1/order', { status: 400, text: JSON.stringify({ code: 0, msg: 'x', data: null }) })).toThrow(/does not allow/);
    expect(() => checkReply('POST', '/api/v1/refund', { status: 429, text: '{}' })).toThrow(/not documented/);
    expect(() => checkReply('GET', '/nowhere', { status: 200, text: '{}' })).toThrow(/no documented path/);
    const refusal = JSON.stringify({ code: 0, msg: 'x', data: null, systemTime: T0 });
    expect(() => checkReply('GET', '/api/v1/refund', { status: 405, text: refusal, headers: new Headers() })).toThrow(/documented header Allow/);
    expect(() => checkReply('POST', '/api/v1/order', { status: 429, text: refusal, headers: new Headers({ 'Retry-After': 'soon' }) })).toThrow(/Retry-After: soon/);
  });
});

describe('the document', () => {
  // A new-user trial (session 20) counted 27 paths where docs/api.md said 26.
  it('has the paths docs/api.md names, and as many as it says', () => {
    const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const said = Number(/It covers (\d+) paths/.exec(api)?.[1]);
    const excerpt = /```\n\{\n  "openapi": "3\.1\.0",\n  "paths": (\{[\s\S]*?\n  \}),/.exec(api)?.[1];
    expect(Object.keys(doc.paths).length).toBe(said);
    const listed = JSON.parse(excerpt!) as Record<string, string[]>;
    expect(Object.fromEntries(Object.entries<any>(doc.paths).map(([p, ops]) => [p, Object.keys(ops).filter((m) => m !== 'head')]))).toEqual(listed);
  });

  it('declares how requests are signed, and which operations are signed', () => {
    expect(doc.components.securitySchemes.merchantSignature).toMatchObject({ type: 'apiKey', description: expect.stringContaining('SHA-256') });
    for (const path of ['/api/v1/order', '/api/v1/refund', '/api/v1/withdraw/apply', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject']) {
      expect(doc.paths[path].post.security, path).toEqual([{ merchantSignature: [] }]);
    }
    for (const path of ['/api/v1/address/{id}', '/api/v1/order/{id}/status', '/healthz', '/api/v1/openapi.json']) {
      expect(doc.paths[path].get.security, path).toEqual([]);
    }
  });

  it('documents the answers of the HTTP layer on every operation, and 413 and 429 where they happen', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const status of ['400', '405', '408', '417', '431', '500', '503']) expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
        if (method === 'post') expect(op.responses['413'], path).toBeDefined();
        expect(op.responses['429'] !== undefined, `${method} ${path} 429`).toBe(['/api/v1/order', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject', '/api/v1/withdraw/verify'].includes(path));
      }
    }
    for (const path of ['/api/v1/order', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject', '/api/v1/withdraw/verify']) expect(doc.paths[path].post.responses['429'].headers['Retry-After']).toBeDefined();
    expect(doc.paths['/api/v1/refund'].post.responses['405'].headers.Allow).toBeDefined();
    expect(doc.paths['/healthz'].get.responses['200'].content['application/json'].schema.properties.data).toMatchObject({ properties: { status: { const: 'ok' } } });
  });
});

/**
 * One field varied in an otherwise good body: the document and the server must agree on it.
 * Rules the document cannot state (a checksum, a chain's kind, a known chain or token, a time
 * relative to now) are left out; the nonce charset is enforced by the ledger work (decisions §1).
 */
type Case = [field: string, value: unknown];
const cases: Record<string, Case[]> = {
  '/api/v1/order': [
    ...['10', '0.000001', '010.50', '1000000000000', '999999999999.999999', '1e3', '-1', '+1', '1.1234567', '0', '0.000000', ' 1', '1,000', '.5', '5.', '1000000000000.000001', '1000000000001', '', null, 10].map((v): Case => ['amount', v]),
    ...['', null, 'thanks', 'm'.repeat(256), 'm'.repeat(257), 5, true].map((v): Case => ['memo', v]),
    ...['', null, 'https://shop.example/notify?x=1', 'http://127.0.0.1:8/x', 'ftp://shop.example/x', 'not a url', 'https://', 'shop.example/x', `https://x.example/${'a'.repeat(2048 - 18)}`, `https://x.example/${'a'.repeat(2049 - 18)}`, 7].map((v): Case => ['redirectUrl', v]),
    ...['', null, 'https://cdn.example/logo.png', 'javascript:alert(1)'].map((v): Case => ['logo', v]),
    ...[T0 + 60_000, String(T0 + 60_000), '', null, 'soon', -1, 1.5, '1.5e12'].map((v): Case => ['expiredAt', v]),
    ...['o'.repeat(64), 'o'.repeat(65), '', null, 12].map((v): Case => ['oid', v]),
    ...['u'.repeat(64), 'u'.repeat(65), ''].map((v): Case => ['uid', v]),
    ['notifyURL', 'https://shop.example/n'],
    // Text that reads as another field would re-split the signed body (decisions.md, "Why a signed body has one reading").
    ['memo', 'a&uid=b'], ['memo', 'a&nonce=b'], ['memo', 'a&sign=b'], ['memo', 'a&other=b'], ['memo', 'a&uid'],
    ['redirectUrl', 'https://shop.example/r?a=1&amount=2'], ['redirectUrl', 'https://shop.example/r?a=1&b=2'], ['oid', 'o&memo=x'],
    // A lone surrogate is refused (it would hash as U+FFFD); a paired one is a character like any other.
    ['memo', 'a\udc00'], ['memo', '\ud800b'], ['memo', 'a\ud83d\ude00'], ['uid', 'u\udc00'],
  ],
  '/api/v1/withdraw/apply': [
    ...[1, '1', 'abc', 1.5, -1, 0, '01', '1e0', ''].map((v): Case => ['chainId', v]),
    ...[EVM_TO, EVM_TO.toLowerCase(), '0x123', `${EVM_TO}0`, '', 'zz'].map((v): Case => ['to', v]),
    ...[USDT_ETH, USDT_ETH.toLowerCase(), '0xzz', ''].map((v): Case => ['token', v]),
    ...['1', '1.1234567', '-1', '0'].map((v): Case => ['amount', v]),
    ...['EVM', 'evm', ''].map((v): Case => ['chainType', v]),
    ...['', null, 'https://shop.example/w', 'mailto:a@b.example'].map((v): Case => ['notifyUrl', v]),
  ],
  '/api/v1/withdraw/confirm': [
    ...['GOOD', `0x${'a'.repeat(63)}`, `0x${'g'.repeat(64)}`, '0x', '', 5].map((v): Case => ['txHash', v]),
    ...[1, '7', 0, -1, 1.5, 'x', '', null, '01'].map((v): Case => ['blockNumber', v]),
  ],
  '/api/v1/withdraw/reject': [...['', null, 'user cancelled', 'r'.repeat(256), 'r'.repeat(257), 'x&id=y', 'x&timestamp=1', 'x&mchId=1', 'x&ids=1'].map((v): Case => ['remark', v])],
};

async function goodFields(path: string): Promise<Record<string, unknown>> {
  switch (path) {
    case '/api/v1/order':
      return { oid: nextOid(), uid: 'u1', amount: '1' };
    case '/api/v1/withdraw/apply':
      await s.credit(m, 'u1', '5');
      return { uid: 'u1', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH };
    default: {
      await s.credit(m, 'u1', '1');
      const w = await s.service.applyWithdrawal({ mchId: m.mchId, uid: 'u1', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH });
      return path === '/api/v1/withdraw/confirm' ? { logId: w.id, txHash: nextTx(), blockNumber: 1 } : { id: w.id };
    }
  }
}

describe('the document and the server agree on each field', () => {
  for (const [path, list] of Object.entries(cases)) {
    it.each(list)(`${path}: %s = %j`, async (field, value) => {
      const fields = await goodFields(path);
      const body = s.signed(m, { ...fields, [field]: value === 'GOOD' ? fields[field] : value });
      const documented = requestValidator(path)(body);
      const r = await s.post(path, body);
      expect([200, 400], r.text).toContain(r.status);
      expect(documented ? 'the document takes it' : 'the document refuses it', r.text).toBe(r.status === 200 ? 'the document takes it' : 'the document refuses it');
    });
  }

  it('agrees that a refund names its order by id or oid, "" and null being absent', async () => {
    const agree = async (fields: (o: { id: string; oid: string }) => Record<string, unknown>, expected: 200 | 400) => {
      const o = await s.paidOrder(m, '10');
      const body = s.signed(m, { amount: '1', ...fields(o) });
      const r = await s.post('/api/v1/refund', body);
      expect(r.status, r.text).toBe(expected);
      expect(requestValidator('/api/v1/refund')(body), JSON.stringify(body)).toBe(expected === 200);
    };
    await agree((o) => ({ id: o.id }), 200);
    await agree((o) => ({ oid: o.oid }), 200);
    await agree((o) => ({ id: o.id, oid: o.oid }), 200);
    await agree((o) => ({ id: '', oid: o.oid }), 200);
    await agree((o) => ({ id: o.id, oid: null }), 200);
    await agree(() => ({}), 400);
    await agree(() => ({ id: '', oid: null }), 400);
    await agree(() => ({ id: null, oid: '' }), 400);
  });

  // The document cannot know the withdrawal's chain: it takes 64 hex digits with or without 0x.
  it('takes a TRON withdrawal with 64 hex digits as its transaction hash', async () => {
    for (const txHash of [evmTx(0x7a01).slice(2)]) {
      await s.credit(m, 'u2', '1');
      const w = await s.service.applyWithdrawal({ mchId: m.mchId, uid: 'u2', amount: '1', to: TRON_TO, chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON });
      const body = s.signed(m, { logId: w.id, txHash, blockNumber: 3 });
      expect(requestValidator('/api/v1/withdraw/confirm')(body)).toBe(true);
      expectOk(await s.post('/api/v1/withdraw/confirm', body));
    }
  });
});

describe('the document\'s pattern for a digit string read as a number', () => {
  it('takes exactly 1 to 2^53 - 1 without leading zeros: the numbers the server reads exactly', async () => {
    const { safeIntegerPattern } = await import('../../src/server/openapi-request.js');
    const re = new RegExp(`^${safeIntegerPattern()}$`);
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    const wrong: string[] = [];
    const check = (n: bigint) => {
      if (re.test(n.toString()) !== (n >= 1n && n <= max)) wrong.push(n.toString());
    };
    for (let i = 0n; i < 1000n; i++) [i, max - i, max + i].forEach(check);
    for (let d = 1n; d <= 10n ** 17n; d *= 10n) [d - 1n, d, d + 1n, 9n * d].forEach(check);
    for (let k = 0; k < 20_000; k++) check(BigInt(Math.floor(Math.random() * 1e16)));
    expect(wrong).toEqual([]);
    for (const s of ['0', '01', '', '1e3', ' 1']) expect(re.test(s), s).toBe(false);
  });
});
