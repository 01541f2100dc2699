import { describe, expect, it } from 'vitest';
import { RemotePaymentService } from '../../src/remote/client.js';
import { EVM_TO, USDT_ETH, expectOk, snapshot, useServer, type Merchant, type TestServer } from './helpers.js';

/**
 * A signed body answers at one endpoint only. The signature covers the body, not the path, so a
 * body that one endpoint and another both accept would let whoever captures it (a wrong remote
 * URL, a proxy that logs bodies, a body pasted into a ticket) send it to the other endpoint
 * within the 5 minutes of its timestamp: found by an outside review, a captured
 * `withdraw show` body `{mchId, id}` rejected the withdrawal at /api/v1/withdraw/reject, which
 * hands the amount back to the user. Each extension's body names its operation in a signed
 * field (`op`) that no operation of the interface accepts (decisions §12, docs/decisions.md).
 */
let s: TestServer;
let m: Merchant;
useServer(['Shop'], { resetClock: true }, (server, [mm]) => {
  s = server;
  m = mm!;
});

/** The bodies the CLI's remote client signs for each extension, captured: never delivered. */
async function capturedBodies(ids: { order: string; withdrawal: string }): Promise<{ what: string; path: string; body: Record<string, unknown> }[]> {
  const out: { what: string; path: string; body: Record<string, unknown> }[] = [];
  let what = '';
  const client = new RemotePaymentService({
    baseUrl: 'http://capture.invalid',
    mchId: m.mchId,
    secret: m.secret,
    now: () => s.clock.now,
    getRetries: 0,
    fetch: async (url, init) => {
      out.push({ what, path: new URL(url).pathname, body: JSON.parse(String(init.body)) });
      throw new TypeError('fetch failed');
    },
  });
  const reads: [string, () => Promise<unknown>][] = [
    ['withdraw show', () => client.getWithdrawal(ids.withdrawal, m.mchId)],
    ['withdraw verify', () => client.verifyWithdrawal({ mchId: m.mchId, id: ids.withdrawal })],
    ['order show', () => client.showOrder({ mchId: m.mchId, id: ids.order })],
    ['order list', () => client.listOrders({ mchId: m.mchId })],
    ['order find', () => client.findOrders(ids.order, { mchId: m.mchId })],
    ['order held', () => client.heldPayments({ mchId: m.mchId, orderId: ids.order })],
    ['withdraw list', () => client.listWithdrawals({ mchId: m.mchId })],
    ['refund list', () => client.listRefunds({ mchId: m.mchId, orderId: ids.order })],
    ['balance', () => client.balance('u1', { mchId: m.mchId })],
    ['log', () => client.log({ mchId: m.mchId, withdrawalId: ids.withdrawal })],
    ['log follow', () => client.followLog({ mchId: m.mchId })],
    ['callbacks list', () => client.listCallbacks({ mchId: m.mchId })],
    ['callbacks show', () => client.showCallback(ids.withdrawal, m.mchId)],
    ['merchant', () => client.whoami(m.mchId)],
    ['summary', () => client.summary({ mchId: m.mchId })],
  ];
  for (const [name, read] of reads) {
    what = name;
    await read().catch(() => undefined);
  }
  return out;
}

const CHANGES = ['/api/v1/order', '/api/v1/refund', '/api/v1/withdraw/apply', '/api/v1/withdraw/confirm', '/api/v1/withdraw/reject'];

describe('a signed body answers at its own endpoint only', () => {
  it("a read's body, captured on its way, changes nothing at any endpoint that changes something", async () => {
    const order = await s.paidOrder(m, '10', 'u1');
    const wd = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'u1', amount: '4', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    const bodies = await capturedBodies({ order: order.id, withdrawal: wd.id });
    expect(bodies.map((b) => b.what)).toHaveLength(15);
    for (const { what, path, body } of bodies) {
      for (const target of CHANGES) {
        const before = snapshot(s.ledger);
        const r = await s.post(target, body);
        expect(r.json?.code, `${what} body at ${target}: ${r.text}`).toBe(0);
        expect(r.status, `${what} body at ${target}: ${r.text}`).toBe(400);
        expect(snapshot(s.ledger), `${what} body at ${target}`).toEqual(before);
      }
      expect(body.op, what).toBe(path.replace('/api/v1/', ''));
    }
    // The withdrawal is still pending; the read itself, delivered, answers.
    const show = bodies.find((b) => b.what === 'withdraw show')!;
    expect(expectOk(await s.post(show.path, show.body))).toMatchObject({ id: wd.id, status: 'PENDING' });
  });

  it('an extension refuses a body without its op, or with another endpoint\'s, and says why', async () => {
    const order = await s.paidOrder(m, '10', 'u1');
    const none = await s.post('/api/v1/order/show', s.signed(m, { id: order.id }));
    expect(none.status).toBe(400);
    expect(none.json.msg).toBe('op is required: an extension endpoint names its operation in the signed body (op=order/show), so that the body cannot be used at another endpoint');
    const other = await s.post('/api/v1/order/show', s.signed(m, { id: order.id, op: 'order/list' }));
    expect(other.status).toBe(400);
    expect(other.json.msg).toBe('op must be order/show at this endpoint');
    expect(expectOk(await s.post('/api/v1/order/show', s.signed(m, { id: order.id, op: 'order/show' })))).toMatchObject({ id: order.id });
  });
});
