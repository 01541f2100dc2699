import { describe, expect, it } from 'vitest';
import { EVM_TO, USDT_ETH, expectOk, expectRefused, useServer, type Merchant, type TestServer } from './helpers.js';

/**
 * The extension endpoints of remote mode (decisions §12, issue #15 item 8) against the OpenAPI
 * document: every reply below is checked against it by the helpers (openapi-check.ts), success
 * and refusal alike, and each path is documented as a signed POST.
 */
let s: TestServer;
let a: Merchant;
let b: Merchant;
useServer(['A', 'B'], { resetClock: true, noErrors: true }, (server, [ma, mb]) => {
  s = server;
  a = ma!;
  b = mb!;
});

const PATHS = [
  '/api/v1/merchant', '/api/v1/order/list', '/api/v1/order/show', '/api/v1/order/held', '/api/v1/withdraw/list', '/api/v1/withdraw/show',
  '/api/v1/refund/list', '/api/v1/balance', '/api/v1/log', '/api/v1/callbacks/list', '/api/v1/callbacks/show',
];

describe('the extension endpoints', () => {
  it('are documented as signed POSTs', async () => {
    const doc = (await s.get('/api/v1/openapi.json')).json;
    for (const path of PATHS) {
      expect(doc.paths[path]?.post?.security, path).toEqual([{ merchantSignature: [] }]);
      expect(doc.paths[path].post.summary, path).toMatch(/^Extension/);
    }
  });

  it("answer what the document says, for the signing merchant's data only", async () => {
    const oa = await s.paidOrder(a, '10', 'u1');
    const ob = await s.paidOrder(b, '20', 'u1');
    expectOk(await s.post('/api/v1/refund', s.signed(a, { id: oa.id, amount: '1', remark: 'r' })));
    const wa = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(a, { uid: 'u1', amount: '2', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    const wb = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(b, { uid: 'u1', amount: '3', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));

    expect(expectOk(await s.post('/api/v1/merchant', s.signed(a, { op: 'merchant' })))).toEqual({ mchId: a.mchId, name: 'A', asset: 'USDT' });
    expect(expectOk(await s.post('/api/v1/order/list', s.signed(a, { op: 'order/list', limit: '10' }))).map((o: { id: string }) => o.id)).toEqual([oa.id]);
    expect(expectOk(await s.post('/api/v1/order/show', s.signed(a, { op: 'order/show', oid: oa.oid })))).toMatchObject({ id: oa.id, refundedAmount: '1', onChain: [] });
    expect(expectOk(await s.post('/api/v1/order/held', s.signed(a, { op: 'order/held' })))).toEqual([]);
    expect(expectOk(await s.post('/api/v1/withdraw/list', s.signed(a, { op: 'withdraw/list', status: 'PENDING' }))).map((w: { id: string }) => w.id)).toEqual([wa.id]);
    expect(expectOk(await s.post('/api/v1/withdraw/show', s.signed(a, { op: 'withdraw/show', id: wa.id })))).toMatchObject({ id: wa.id, mchId: a.mchId, verification: null });
    expect(expectOk(await s.post('/api/v1/refund/list', s.signed(a, { op: 'refund/list' })))).toMatchObject([{ id: oa.id, amount: '1', refundId: expect.stringMatching(/^rf_/) }]);
    expect(expectOk(await s.post('/api/v1/balance', s.signed(a, { op: 'balance', uid: 'u1' })))).toEqual({ mchId: a.mchId, uid: 'u1', asset: 'USDT', available: '7', held: '2' });
    const log = expectOk(await s.post('/api/v1/log', s.signed(a, { op: 'log', orderId: oa.id })));
    expect(log.map((e: { action: string }) => e.action)).toEqual(['order.refunded', 'order.payment_recorded']);
    expect(expectOk(await s.post('/api/v1/callbacks/list', s.signed(a, { op: 'callbacks/list', status: 'failed' })))).toEqual([]);

    // B's ids: as if they did not exist.
    expectRefused(await s.post('/api/v1/order/show', s.signed(a, { op: 'order/show', id: ob.id })), 404, 'Order not found');
    expectRefused(await s.post('/api/v1/withdraw/show', s.signed(a, { op: 'withdraw/show', id: wb.id })), 404, 'withdrawal not found');
    expectRefused(await s.post('/api/v1/callbacks/show', s.signed(a, { op: 'callbacks/show', id: 'evt_AAAAAAAAAAAAAAAAAAAAAA' })), 404, 'callback evt_AAAAAAAAAAAAAAAAAAAAAA not found');
    expect(expectOk(await s.post('/api/v1/log', s.signed(a, { op: 'log', withdrawalId: wb.id })))).toEqual([]);
    expect(expectOk(await s.post('/api/v1/refund/list', s.signed(a, { op: 'refund/list', orderId: ob.id })))).toEqual([]);
    // As cursors too: B's ids answer exactly as ids that do not exist (they would otherwise say
    // that B's row exists, and with `page`, where it falls among A's).
    expectOk(await s.post('/api/v1/refund', s.signed(b, { id: ob.id, amount: '1', remark: 'r' })));
    const rb = expectOk(await s.post('/api/v1/refund/list', s.signed(b, { op: 'refund/list' })))[0].refundId as string;
    await s.paidOrder(b, '1', 'u1', { notifyUrl: 'https://shop.example/notify' });
    const cb = expectOk(await s.post('/api/v1/callbacks/list', s.signed(b, { op: 'callbacks/list' })))[0].id as string;
    for (const [path, id, what] of [['order/list', ob.id, 'an order'], ['withdraw/list', wb.id, 'a withdrawal'], ['refund/list', rb, 'a refund'], ['callbacks/list', cb, 'a callback']] as const) {
      for (const page of [false, true]) {
        const unknown = `${id.slice(0, 3)}${'A'.repeat(id.length - 3)}`;
        for (const cursor of [id, unknown]) {
          expectRefused(await s.post(`/api/v1/${path}`, s.signed(a, { op: path, cursor, page })), 400, `cursor ${cursor} is not ${what} of this ledger: pass the id the previous page named`);
        }
      }
    }

    // Refusals of input, before anything is read.
    expectRefused(await s.post('/api/v1/order/show', s.signed(a, { op: 'order/show' })), 400, 'id or oid is required');
    expectRefused(await s.post('/api/v1/order/list', s.signed(a, { op: 'order/list', limit: 0 })), 400, /limit must be a whole number from 1 to 1000/);
    expectRefused(await s.post('/api/v1/balance', s.signed(a, { op: 'balance' })), 400, 'uid is required');
    expectRefused(await s.post('/api/v1/balance', s.signed(a, { op: 'balance', uid: 'u1', asset: 'eth' })), 400, 'asset ETH is not one this service knows (USDT)');
  });
});
