import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BAD_SIGNATURE } from '../../src/server/app.js';
import { sign } from '../../src/signing/index.js';
import {
  refusedAndHarmless as refused,
  EVM_TO, MINUTE, SECOND, T0, USDT_ETH, expectOk, expectRefused, nextNonce, nextOid, snapshot, startServer, useServer,
  type Merchant, type TestServer,
} from './helpers.js';

/** Decisions §1: every refusal of a signed request, over HTTP; a refusal changes nothing. */

const orderFields = () => ({ oid: nextOid(), uid: 'u1', amount: '10' });
const signWith = (body: Record<string, unknown>, secret: string) => {
  const { sign: _drop, ...rest } = body;
  return { ...rest, sign: sign(rest, secret) };
};

describe('signed requests (decisions §1)', () => {
  let s: TestServer;
  let m: Merchant;
  let other: Merchant;

  useServer(['Shop', 'Other'], { resetClock: true }, (server, [shop, second]) => {
    s = server;
    m = shop;
    other = second;
  });

  const refusedAndHarmless = (body: Record<string, unknown> | string, status: number, msg: string | RegExp, path = '/api/v1/order') =>
    refused(s, m, path, body, status, msg);

  const good = () => s.signed(m, orderFields());

  it.each<[string, () => Record<string, unknown>, number, string | RegExp]>([
    ['a wrong signature (valid hex)', () => ({ ...good(), sign: createHash('sha256').update('nope').digest('hex') }), 401, BAD_SIGNATURE],
    ['a signature that is not hex', () => ({ ...good(), sign: 'z'.repeat(64) }), 401, BAD_SIGNATURE],
    ['a signature of 63 hex digits', () => ({ ...good(), sign: 'a'.repeat(63) }), 401, BAD_SIGNATURE],
    ['a signature made with another secret', () => signWith(good(), other.secret), 401, BAD_SIGNATURE],
    ['a body changed after signing (amount)', () => ({ ...good(), amount: '11' }), 401, BAD_SIGNATURE],
    ['a body with a field added after signing', () => ({ ...good(), memo: 'added later' }), 401, BAD_SIGNATURE],
    // (A blank at either end is refused as a field first: docs/decisions.md, ids that read alike.)
    ['a body whose string value gained a space after signing', () => {
      const b = good();
      return { ...b, uid: `${String(b.uid).slice(0, 1)} ${String(b.uid).slice(1)}` };
    }, 401, BAD_SIGNATURE],
    ['a signature with the secret prepended instead of appended', () => {
      const b = good();
      const { sign: _s, ...rest } = b;
      const canonical = Object.keys(rest).sort().map((k) => `${k}=${String(rest[k])}`).join('&');
      return { ...b, sign: createHash('sha256').update(m.secret + canonical).digest('hex') };
    }, 401, BAD_SIGNATURE],
    ['the sign field left empty', () => ({ ...good(), sign: '' }), 400, 'sign is required'],
    ['no sign field', () => { const { sign: _s, ...b } = good(); return b; }, 400, 'sign is required'],
    ['a timestamp 5 min + 1 s in the past', () => s.signed(m, { ...orderFields(), timestamp: T0 - 5 * MINUTE - SECOND }), 401, /^timestamp is not within 5 minutes/],
    ['a timestamp 5 min + 1 s in the future', () => s.signed(m, { ...orderFields(), timestamp: T0 + 5 * MINUTE + SECOND }), 401, /^timestamp is not within 5 minutes/],
    ['a timestamp as a digit string 5 min + 1 s old', () => s.signed(m, { ...orderFields(), timestamp: String(T0 - 5 * MINUTE - SECOND) }), 401, /^timestamp is not within 5 minutes/],
    // A merchant's `date +%s` is the usual mistake: the answer says so.
    ['a timestamp in seconds', () => s.signed(m, { ...orderFields(), timestamp: Math.floor(T0 / 1000) }), 401,
      `timestamp is not within 5 minutes of server time (see systemTime): ${Math.floor(T0 / 1000)} looks like seconds; timestamps are milliseconds since 1970`],
    ['no timestamp', () => { const b = s.signed(m, orderFields()); delete b.timestamp; return signWith(b, m.secret); }, 400, 'timestamp is required'],
    ['a timestamp that is not digits', () => s.signed(m, { ...orderFields(), timestamp: '2025-01-15T12:00:00Z' }), 400, 'timestamp must be a milliseconds timestamp (digits)'],
    ['a fractional timestamp', () => s.signed(m, { ...orderFields(), timestamp: T0 + 0.5 }), 400, 'timestamp must be a milliseconds timestamp (digits)'],
    ['no nonce', () => { const b = s.signed(m, orderFields()); delete b.nonce; return signWith(b, m.secret); }, 400, 'nonce is required'],
    ['an empty nonce', () => s.signed(m, { ...orderFields(), nonce: '' }), 400, 'nonce is required'],
    ['a nonce of 65 characters', () => s.signed(m, { ...orderFields(), nonce: 'n'.repeat(65) }), 400, 'nonce must be 1 to 64 characters of A-Z a-z 0-9 _ . : - (no & or =: they would let a signed body be re-split)'],
    ['a numeric nonce', () => s.signed(m, { ...orderFields(), nonce: 12345 }), 400, 'nonce must be a string'],
    ['an unknown mchId', () => s.signed({ mchId: 'M999999', secret: m.secret }, orderFields()), 401, BAD_SIGNATURE],
    ['no mchId on create order', () => s.signed(m, orderFields(), { noMchId: true }), 400, 'mchId is required'],
    ['a nested object', () => ({ ...good(), memo: { a: 1 } }), 400, 'field memo must be a string, number or boolean; nested values are not accepted in a signed request'],
    ['an array', () => ({ ...good(), uid: ['u1'] }), 400, 'field uid must be a string, number or boolean; nested values are not accepted in a signed request'],
    ['an empty array', () => ({ ...good(), memo: [] }), 400, /nested values are not accepted/],
    ['a nested value in an unknown field', () => ({ ...good(), extra: { deep: [1] } }), 400, /field extra .*nested values are not accepted/],
  ])('refuses %s', async (_name, make, status, msg) => {
    await refusedAndHarmless(make(), status, msg);
  });

  it.each<[string, number]>([
    ['4 min 59 s in the past', -(4 * MINUTE + 59 * SECOND)],
    ['4 min 59 s in the future', 4 * MINUTE + 59 * SECOND],
    ['exactly 5 min in the past', -5 * MINUTE],
    ['now', 0],
  ])('accepts a timestamp %s', async (_name, offset) => {
    expectOk(await s.post('/api/v1/order', s.signed(m, { ...orderFields(), timestamp: T0 + offset })));
  });

  it('accepts a timestamp as a digit string and a nonce of 64 characters', async () => {
    expectOk(await s.post('/api/v1/order', s.signed(m, { ...orderFields(), timestamp: String(T0) })));
    expectOk(await s.post('/api/v1/order', s.signed(m, { ...orderFields(), nonce: `x${nextNonce()}`.padEnd(64, 'z') })));
  });

  it('accepts a nonce of exactly one character once', async () => {
    const r1 = await s.post('/api/v1/order', s.signed(m, { ...orderFields(), nonce: 'Q' }));
    expectOk(r1);
    expectRefused(await s.post('/api/v1/order', s.signed(m, { ...orderFields(), nonce: 'Q' })), 401, 'nonce has already been used');
  });

  it('says to check the mchId too when a signature is refused, in the same words for an unknown merchant', async () => {
    // A mistyped mchId met "signature does not match" with a lesson in hashing alone, and the
    // integrator debugged a correct hash (a trial); the answer still must not tell the two apart.
    const wrongSecret = await s.post('/api/v1/order', signWith(good(), other.secret));
    const unknownMerchant = await s.post('/api/v1/order', s.signed({ mchId: 'M999999', secret: m.secret }, orderFields()));
    const otherMerchantsSecret = await s.post('/api/v1/order', s.signed({ mchId: other.mchId, secret: m.secret }, orderFields()));
    for (const r of [wrongSecret, unknownMerchant, otherMerchantsSecret]) {
      expect(r.status).toBe(401);
      expect(r.json.msg).toMatch(/^signature does not match: .*secret of the merchant mchId names.*an unknown mchId is answered the same/);
    }
    expect(unknownMerchant.json.msg).toBe(wrongSecret.json.msg);
    expect(otherMerchantsSecret.json.msg).toBe(wrongSecret.json.msg);
  });

  it('accepts an upper-case hex signature', async () => {
    const b = good();
    expectOk(await s.post('/api/v1/order', { ...b, sign: (b.sign as string).toUpperCase() }));
  });

  it('leaves null and "" out of the signed string', async () => {
    const b = s.signed(m, { ...orderFields(), memo: '', notifyUrl: null });
    const { sign: _s, memo: _m, notifyUrl: _n, ...without } = b;
    expect(b.sign).toBe(sign(without, m.secret));
    expectOk(await s.post('/api/v1/order', b));
  });

  it('refuses a nonce used before by the same merchant, and the replay changes nothing', async () => {
    const b = good();
    const first = expectOk(await s.post('/api/v1/order', b));
    const before = snapshot(s.ledger);
    expectRefused(await s.post('/api/v1/order', b), 401, 'nonce has already been used');
    // The same nonce with another (correctly signed) body is refused too.
    expectRefused(await s.post('/api/v1/order', signWith({ ...b, oid: nextOid() }, m.secret)), 401, 'nonce has already been used');
    expect(snapshot(s.ledger)).toEqual(before);
    expect(first.oid).toBe(b.oid);
  });

  it('remembers a nonce as long as its timestamp stays acceptable, even while old nonces are purged', async () => {
    // Math.random drives the occasional purge of expired nonces: make it purge on every write.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const used: string[] = [];
      for (const offset of [-(4 * MINUTE + 59 * SECOND), 0, 4 * MINUTE + 59 * SECOND]) {
        s.clock.now = T0;
        const b = s.signed(m, { ...orderFields(), timestamp: T0 + offset });
        used.push(b.nonce as string);
        expectOk(await s.post('/api/v1/order', b));
        // The last moment the replay's timestamp is still within the window.
        s.clock.now = T0 + offset + 5 * MINUTE;
        expectOk(await s.post('/api/v1/order', s.signed(m, orderFields()))); // a write, so a purge
        expectRefused(await s.post('/api/v1/order', b), 401, 'nonce has already been used');
        // One second later the timestamp itself is refused.
        s.clock.now = T0 + offset + 5 * MINUTE + SECOND;
        expectRefused(await s.post('/api/v1/order', b), 401, /^timestamp is not within 5 minutes/);
      }
      // The purge did run: the first nonce, long unusable, is gone.
      expectOk(await s.post('/api/v1/order', s.signed(m, orderFields())));
      const kept = (s.ledger.sqlite.prepare('select nonce from nonces').all() as { nonce: string }[]).map((r) => r.nonce);
      expect(kept).not.toContain(used[0]);
    } finally {
      random.mockRestore();
      s.clock.now = T0;
    }
  });

  it('keeps nonces per merchant: another merchant may use the same nonce', async () => {
    const nonce = nextNonce();
    expectOk(await s.post('/api/v1/order', s.signed(m, { ...orderFields(), nonce })));
    expectOk(await s.post('/api/v1/order', s.signed(other, { ...orderFields(), nonce })));
  });

  it('refuses a reused nonce on refund, withdraw apply, confirm and reject as well', async () => {
    const o = await s.paidOrder(m, '10');
    const refund = s.signed(m, { id: o.id, amount: '1' });
    expectOk(await s.post('/api/v1/refund', refund));

    await s.credit(m, 'nonce-user', '100');
    const apply = s.signed(m, { uid: 'nonce-user', amount: '5', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH });
    const w1 = expectOk(await s.post('/api/v1/withdraw/apply', apply));
    const w2 = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { ...apply, nonce: nextNonce() })));
    const confirm = s.signed(m, { logId: w1.id, txHash: `0x${'1'.repeat(64)}`, blockNumber: 5 });
    expectOk(await s.post('/api/v1/withdraw/confirm', confirm));
    const reject = s.signed(m, { id: w2.id });
    expectOk(await s.post('/api/v1/withdraw/reject', reject));

    const before = snapshot(s.ledger);
    for (const [path, body] of [
      ['/api/v1/refund', refund],
      ['/api/v1/withdraw/apply', apply],
      ['/api/v1/withdraw/confirm', confirm],
      ['/api/v1/withdraw/reject', reject],
    ] as const) {
      expectRefused(await s.post(path, body), 401, 'nonce has already been used');
    }
    expect(snapshot(s.ledger)).toEqual(before);
    expect(await s.service.balance('nonce-user', { mchId: m.mchId })).toMatchObject({ available: '95', held: '0' });
  });

  it('checks the timestamp window and the signature on every signed operation', async () => {
    const o = await s.paidOrder(m, '10');
    const cases: [string, Record<string, unknown>][] = [
      ['/api/v1/refund', { id: o.id, amount: '1' }],
      ['/api/v1/withdraw/apply', { uid: 'u1', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }],
      ['/api/v1/withdraw/confirm', { logId: 'wd_x', txHash: `0x${'2'.repeat(64)}`, blockNumber: 1 }],
      ['/api/v1/withdraw/reject', { id: 'wd_x' }],
    ];
    for (const [path, fields] of cases) {
      await refusedAndHarmless(s.signed(m, { ...fields, timestamp: T0 - 5 * MINUTE - SECOND }), 401, /^timestamp is not within 5 minutes/, path);
      await refusedAndHarmless(s.signed(m, { ...fields, timestamp: T0 + 5 * MINUTE + SECOND }), 401, /^timestamp is not within 5 minutes/, path);
      await refusedAndHarmless({ ...s.signed(m, fields), sign: 'f'.repeat(64) }, 401, BAD_SIGNATURE, path);
      await refusedAndHarmless(s.signed(m, fields, { secret: other.secret }), 401, BAD_SIGNATURE, path);
      await refusedAndHarmless({ ...s.signed(m, fields), remark: ['x'] }, 400, /nested values are not accepted/, path);
      await refusedAndHarmless(s.signed({ mchId: 'M1', secret: 'x' }, fields), 401, BAD_SIGNATURE, path);
    }
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('PAID');
  });

  it('answers an unknown merchant exactly like a bad signature, so merchant ids cannot be probed (issue #10 item 8)', async () => {
    const seen = (r: Awaited<ReturnType<typeof s.post>>) => ({
      status: r.status,
      headers: [...r.headers].filter(([k]) => k !== 'date' && k !== 'content-length'),
      body: { ...r.json, systemTime: 0 },
    });
    for (const path of ['/api/v1/order', '/api/v1/refund', '/api/v1/withdraw/reject']) {
      const fields = path === '/api/v1/order' ? orderFields() : path === '/api/v1/refund' ? { id: 'ord_x', amount: '1' } : { id: 'wd_x' };
      const unknown = seen(await s.post(path, s.signed({ mchId: 'M999999', secret: m.secret }, fields)));
      const badSign = seen(await s.post(path, { ...s.signed(m, fields), sign: 'f'.repeat(64) }));
      const wrongSecret = seen(await s.post(path, s.signed(m, fields, { secret: other.secret })));
      expect(unknown, path).toEqual(badSign);
      expect(wrongSecret, path).toEqual(badSign);
      expect(JSON.stringify(unknown)).not.toContain('M999999');
    }
  });

  it('answers another merchant’s order exactly like an order that does not exist', async () => {
    const theirs = await s.paidOrder(other, '10');
    const byId = await refusedAndHarmless(s.signed(m, { id: theirs.id, amount: '1' }), 404, 'Order not found', '/api/v1/refund');
    const missing = await refusedAndHarmless(s.signed(m, { id: 'ord_nosuchorder000000000000', amount: '1' }), 404, 'Order not found', '/api/v1/refund');
    const byOid = await refusedAndHarmless(s.signed(m, { oid: theirs.oid, amount: '1' }), 404, 'Order not found', '/api/v1/refund');
    const missingOid = await refusedAndHarmless(s.signed(m, { oid: 'no-such-oid', amount: '1' }), 404, 'Order not found', '/api/v1/refund');
    for (const r of [byId, byOid, missingOid]) expect({ status: r.status, msg: r.json.msg }).toEqual({ status: missing.status, msg: missing.json.msg });
    expect(expectOk(await s.get(`/api/v1/order/${theirs.id}/status`))).toBe('PAID');
    expect((await s.service.balance('u1', { mchId: other.mchId })).available).not.toBe('0');
  });

  it('answers another merchant’s withdrawal exactly like a withdrawal that does not exist', async () => {
    await s.credit(other, 'theirs', '50');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(other, { uid: 'theirs', amount: '50', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    const pairs: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'3'.repeat(64)}`, blockNumber: 9 }, { logId: 'wd_nosuchwithdrawal00000000', txHash: `0x${'3'.repeat(64)}`, blockNumber: 9 }],
      ['/api/v1/withdraw/reject', { id: w.id }, { id: 'wd_nosuchwithdrawal00000000' }],
    ];
    for (const [path, theirs, missing] of pairs) {
      const a = await refusedAndHarmless(s.signed(m, theirs), 404, 'withdrawal not found', path);
      const b = await refusedAndHarmless(s.signed(m, missing), 404, 'withdrawal not found', path);
      expect({ status: a.status, msg: a.json.msg }).toEqual({ status: b.status, msg: b.json.msg });
    }
    expect((await s.service.getWithdrawal(w.id)).status).toBe('PENDING');
  });
});

describe('mchId left out of a signed request (decisions §1)', () => {
  let s: TestServer;
  afterEach(async () => {
    expect(await s.service.check()).toEqual([]);
    await s.close();
  });

  it('means the only merchant of the ledger on refund and withdrawals, signed without mchId', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const o = await s.paidOrder(m, '10');
    const r = expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '2' }, { noMchId: true })));
    expect(r).toMatchObject({ id: o.id, amount: '2', status: 'REFUNDED' });
    await s.credit(m, 'solo', '3');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'solo', amount: '3', to: EVM_TO, chainId: '1', chainType: 'EVM', token: USDT_ETH }, { noMchId: true })));
    expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: w.id }, { noMchId: true })));
    // The audit log still names the merchant the request was resolved to.
    const entries = await s.service.log({ mchId: m.mchId });
    expect(entries.filter((e) => e.actor === `api:${m.mchId}`).map((e) => e.action)).toEqual(['withdrawal.rejected', 'withdrawal.applied', 'order.refunded']);
    // Create order still requires it, even with one merchant.
    expectRefused(await s.post('/api/v1/order', s.signed(m, orderFields(), { noMchId: true })), 400, 'mchId is required');
    // An empty body names it with the other missing fields, first, as the spec lists them.
    expectRefused(await s.post('/api/v1/order', {}), 400, 'mchId is required; oid is required; uid is required; amount is required; timestamp is required; nonce is required; sign is required');
  });

  it('is refused with a clear message when the ledger holds two merchants, and changes nothing', async () => {
    s = await startServer();
    const m = await s.addMerchant({ name: 'A' });
    await s.addMerchant({ name: 'B' });
    const o = await s.paidOrder(m, '10');
    const before = snapshot(s.ledger);
    const body = s.signed(m, { id: o.id, amount: '2' }, { noMchId: true });
    expectRefused(await s.post('/api/v1/refund', body), 400, 'mchId is required: the ledger holds more than one merchant');
    expectRefused(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: 'wd_x' }, { noMchId: true })), 400, 'mchId is required: the ledger holds more than one merchant');
    expect(snapshot(s.ledger)).toEqual(before);
    // The same nonce, now with mchId, passes.
    expectOk(await s.post('/api/v1/refund', signWith({ ...body, mchId: m.mchId }, m.secret)));
  });
});
