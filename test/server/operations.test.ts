import { beforeAll, describe, expect, it } from 'vitest';
import { createOrderSchema, refundSchema, withdrawApplySchema, withdrawConfirmSchema, withdrawRejectSchema, authFields } from '../../src/core/schemas.js';
import {
  EVM_TO, T0, USDT_ETH, expectOk, expectRefused, nextOid, useServer, type Merchant, type TestServer,
} from './helpers.js';

/** What an operator relies on: the access log, health, the OpenAPI document, the audit log. */

let s: TestServer;
let m: Merchant;

useServer(['Shop'], {}, (server, [shop]) => {
  s = server;
  m = shop;
});

describe('access log', () => {
  it('writes one line per request: time, method, path, status, duration, merchant; never a secret, sign or nonce', async () => {
    s.accessLog.length = 0;
    const bodies: Record<string, unknown>[] = [];
    const send = async (path: string, body: Record<string, unknown>) => {
      bodies.push(body);
      return s.post(path, body);
    };
    const o = expectOk(await send('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '5' })));
    await send('/api/v1/order', { ...s.signed(m, { oid: nextOid(), uid: 'u1', amount: '5' }), sign: 'ab'.repeat(32) }); // 401
    const replayed = s.signed(m, { oid: nextOid(), uid: 'u1', amount: '5' });
    await send('/api/v1/order', replayed);
    await send('/api/v1/order', replayed); // 401 nonce
    await send('/api/v1/refund', s.signed(m, { id: o.id, amount: '1' })); // 409
    await s.get(`/api/v1/address/${o.id}?sign=${'cd'.repeat(32)}&secret=${m.secret}`);
    await s.get(`/api/v1/order/${o.id}/status`);
    await s.get('/api/v1/nowhere');
    await s.get('/healthz');
    await s.post('/api/v1/order', 'not json');

    expect(s.accessLog).toEqual([
      expect.stringMatching(new RegExp(`^2025-01-15T12:00:00\\.000Z POST /api/v1/order 200 \\d+\\.\\dms ${m.mchId}$`)),
      expect.stringMatching(/^\S+ POST \/api\/v1\/order 401 \d+\.\dms -$/),
      expect.stringMatching(new RegExp(`^\\S+ POST /api/v1/order 200 \\S+ ${m.mchId}$`)),
      expect.stringMatching(new RegExp(`^\\S+ POST /api/v1/order 401 \\S+ ${m.mchId}$`)),
      expect.stringMatching(new RegExp(`^\\S+ POST /api/v1/refund 409 \\S+ ${m.mchId}$`)),
      expect.stringMatching(new RegExp(`^\\S+ GET /api/v1/address/${o.id} 200 \\S+ -$`)),
      expect.stringMatching(new RegExp(`^\\S+ GET /api/v1/order/${o.id}/status 200 \\S+ -$`)),
      expect.stringMatching(/^\S+ GET \/api\/v1\/nowhere 404 \S+ -$/),
      expect.stringMatching(/^\S+ GET \/healthz 200 \S+ -$/),
      expect.stringMatching(/^\S+ POST \/api\/v1\/order 400 \S+ -$/),
    ]);
    const secrets = [m.secret, 'cd'.repeat(32), ...bodies.flatMap((b) => [b.sign as string, b.nonce as string])];
    for (const line of [...s.accessLog, ...s.errorLog]) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
  });
});

describe('health', () => {
  it('GET /healthz answers the 200 envelope with status ok', async () => {
    s.clock.now = T0;
    const r = await s.get('/healthz');
    expect(expectOk(r, T0)).toEqual({ status: 'ok' });
  });
});

describe('OpenAPI document', () => {
  let doc: any;
  beforeAll(async () => {
    const r = await s.get('/api/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    doc = r.json;
  });

  it('is OpenAPI 3.1 with all seven operations', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((verb) => `${verb.toUpperCase()} ${path}`));
    expect(ops).toEqual(
      expect.arrayContaining([
        'GET /api/v1/address/{id}',
        'POST /api/v1/order',
        'GET /api/v1/order/{id}/status',
        'POST /api/v1/refund',
        'POST /api/v1/withdraw/apply',
        'POST /api/v1/withdraw/confirm',
        'POST /api/v1/withdraw/reject',
      ]),
    );
  });

  const SCHEMAS = [
    ['/api/v1/order', createOrderSchema, ['mchId']],
    ['/api/v1/refund', refundSchema, []],
    ['/api/v1/withdraw/apply', withdrawApplySchema, []],
    ['/api/v1/withdraw/confirm', withdrawConfirmSchema, []],
    ['/api/v1/withdraw/reject', withdrawRejectSchema, []],
  ] as const;

  it.each(SCHEMAS)('%s: the request schema lists the fields of the zod schema, required as the server requires them', (path, zodSchema, alsoRequired) => {
    const body = doc.paths[path].post.requestBody.content['application/json'].schema;
    const shape = { ...zodSchema.shape, ...authFields } as Record<string, { safeParse(v: unknown): { success: boolean } }>;
    expect(Object.keys(body.properties).sort()).toEqual(Object.keys(shape).sort());
    const required = Object.keys(shape).filter((k) => !shape[k]!.safeParse(undefined).success);
    expect([...body.required].sort()).toEqual([...required, ...alsoRequired].sort());
    expect(body.additionalProperties).toBe(false);
  });

  it('create order requires exactly oid, uid, amount, mchId, timestamp, nonce and sign', () => {
    const body = doc.paths['/api/v1/order'].post.requestBody.content['application/json'].schema;
    expect([...body.required].sort()).toEqual(['amount', 'mchId', 'nonce', 'oid', 'sign', 'timestamp', 'uid']);
  });

  it('documents the statuses of decisions §7 on every signed operation, and 429 on create order', () => {
    for (const [path] of SCHEMAS) {
      const codes = Object.keys(doc.paths[path].post.responses);
      expect(codes).toEqual(expect.arrayContaining(['200', '400', '401', '404', '409', '413']));
    }
    expect(Object.keys(doc.paths['/api/v1/order'].post.responses)).toContain('429');
  });

  it('describes the success data with the very keys the server answers', async () => {
    const dataSchema = (path: string, verb = 'post') => doc.paths[path][verb].responses['200'].content['application/json'].schema.properties.data;
    const o = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '2' })));
    expect(Object.keys(o).sort()).toEqual([...dataSchema('/api/v1/order').required].sort());
    await s.service.markPaid({ id: o.id, txHash: `0x${'4'.repeat(64)}` });
    const r = expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '1' })));
    expect(Object.keys(r).sort()).toEqual([...dataSchema('/api/v1/refund').required].sort());
    await s.credit(m, 'u9', '1');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'u9', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    for (const p of ['/api/v1/withdraw/apply', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject']) {
      expect(Object.keys(w).sort()).toEqual([...dataSchema(p).required].sort());
    }
    expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: w.id })));
  });
});

describe('audit log', () => {
  it('records the API’s changes with the actor api:<mchId>, and refused requests not at all', async () => {
    const o = await s.paidOrder(m, '10', 'aud');
    const before = (await s.service.log({ mchId: m.mchId, limit: 1000 })).length;
    expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '2', remark: 'partial' })));
    expectRefused(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '20' })), 400);
    const w1 = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'aud', amount: '3', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    const w2 = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'aud', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    expectOk(await s.post('/api/v1/withdraw/confirm', s.signed(m, { logId: w1.id, txHash: `0x${'5'.repeat(64)}`, blockNumber: 7 })));
    expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: w2.id, remark: 'no' })));

    const entries = await s.service.log({ limit: 1000 });
    const mine = (await s.service.log({ mchId: m.mchId, limit: 1000 })).slice(0, -before || undefined);
    expect(mine.map((e) => [e.actor, e.action, e.subject])).toEqual([
      [`api:${m.mchId}`, 'withdrawal.rejected', `withdrawal:${w2.id}`],
      [`api:${m.mchId}`, 'withdrawal.confirmed', `withdrawal:${w1.id}`],
      [`api:${m.mchId}`, 'withdrawal.applied', `withdrawal:${w2.id}`],
      [`api:${m.mchId}`, 'withdrawal.applied', `withdrawal:${w1.id}`],
      [`api:${m.mchId}`, 'order.refunded', `order:${o.id}`],
    ]);
    expect(mine[4]!.detail).toMatchObject({ amount: '2', remark: 'partial', statusAfter: 'PAID' });
    // What the test did through the service directly is recorded under its own actor.
    expect(entries.find((e) => e.action === 'order.payment_recorded' && e.subject === `order:${o.id}`)?.actor).toBe('test');
    for (const e of entries) expect(JSON.stringify(e)).not.toContain(m.secret);
  });
});
