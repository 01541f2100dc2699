import { describe, expect, it } from 'vitest';
import { canonicalString } from '../../src/signing/index.js';
import {
  EVM_TO, USDT_ETH, evmTx, expectOk, expectRefused, nextNonce, nextOid, snapshot, useServer,
  type Merchant, type TestServer,
} from './helpers.js';

/**
 * Re-split bodies (issue #10 item 1, decisions §1): the canonical string does not escape `&`
 * or `=`, so a captured body could be sent again with its fields cut at other places: the same
 * string, the same signature, but a "new" request. Every body built here has exactly the
 * canonical string of a real captured request, so it carries a valid signature; each must be
 * refused and change nothing.
 */

/** Every body whose canonical string equals the captured one's, made by moving one field boundary. */
function resplits(captured: Record<string, unknown>): { how: string; body: Record<string, unknown> }[] {
  const keys = Object.keys(captured).filter((k) => k !== 'sign' && captured[k] !== '' && captured[k] != null).sort();
  const out: { how: string; body: Record<string, unknown> }[] = [];
  // Field i swallows field i+1: `a=x&b=y` read as `a="x&b=y"`.
  for (let i = 0; i + 1 < keys.length; i++) {
    const [a, b] = [keys[i]!, keys[i + 1]!];
    const body = { ...captured };
    body[a] = `${String(captured[a])}&${b}=${String(captured[b])}`;
    delete body[b];
    out.push({ how: `${a} swallows ${b}`, body });
  }
  // Field i swallows every field after it.
  for (let i = 0; i + 2 < keys.length; i++) {
    const body = { ...captured };
    const a = keys[i]!;
    body[a] = [String(captured[a]), ...keys.slice(i + 1).map((k) => `${k}=${String(captured[k])}`)].join('&');
    for (const k of keys.slice(i + 1)) delete body[k];
    out.push({ how: `${a} swallows the rest`, body });
  }
  return out;
}

describe('a captured signed body cannot be re-split into another request', () => {
  let s: TestServer;
  let m: Merchant;
  useServer(['Shop'], {}, (srv, [mm]) => {
    s = srv;
    m = mm!;
  });

  /** Sends the captured body (must succeed), then every re-split of it: each refused, nothing changed. */
  async function attack(path: string, fields: Record<string, unknown>) {
    const captured = s.signed(m, fields);
    expectOk(await s.post(path, captured));
    const attempts = resplits(captured);
    expect(attempts.length).toBeGreaterThan(3);
    for (const { how, body } of attempts) {
      expect(canonicalString(body), how).toBe(canonicalString(captured));
      const before = snapshot(s.ledger);
      const r = await s.post(path, body);
      expect([400, 401], `${how}: ${r.text}`).toContain(r.status);
      expect(r.json.code, how).toBe(0);
      expect(snapshot(s.ledger), how).toEqual(before);
    }
  }

  it('the reviewers\' refund: nonce "N&remark=damaged" without remark pays nothing a second time', async () => {
    const o = await s.paidOrder(m, '100', 'u-refund');
    const captured = s.signed(m, { id: o.id, amount: '10', remark: 'damaged' });
    expectOk(await s.post('/api/v1/refund', captured));
    const { remark: _r, ...rest } = captured;
    const replay = { ...rest, nonce: `${String(captured.nonce)}&remark=damaged` };
    expect(canonicalString(replay)).toBe(canonicalString(captured));
    const r = await s.post('/api/v1/refund', replay);
    expectRefused(r, 400, /nonce/);
    expect((await s.service.balance('u-refund', { mchId: m.mchId })).available).toBe('90');
  });

  it('the reviewers\' withdrawal: nonce swallowing notifyUrl applies nothing a second time', async () => {
    await s.credit(m, 'u-wd', '100');
    const captured = s.signed(m, { uid: 'u-wd', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH, notifyUrl: 'https://shop.example/cb' });
    expectOk(await s.post('/api/v1/withdraw/apply', captured));
    const { notifyUrl: _u, ...rest } = captured;
    const replay = { ...rest, nonce: `${String(captured.nonce)}&notifyUrl=https://shop.example/cb` };
    expect(canonicalString(replay)).toBe(canonicalString(captured));
    expectRefused(await s.post('/api/v1/withdraw/apply', replay), 400, /nonce/);
    expect((await s.service.balance('u-wd', { mchId: m.mchId })).available).toBe('90');
  });

  it('a fresh nonce hidden in a URL of the captured body cannot be moved out of it', async () => {
    // The signer sent a notifyUrl whose query reads like a field of the request: once refused,
    // no memo can swallow the real nonce and hand the URL's "nonce=fresh" to the attacker.
    const fields = { oid: nextOid(), uid: 'u1', amount: '5', memo: 'hi', notifyUrl: 'https://shop.example/cb?o=1&nonce=fresh' };
    const body = s.signed(m, fields);
    const r = await s.post('/api/v1/order', body);
    expectRefused(r, 400, /notifyUrl.*&nonce=/);
    // What the attacker would have sent: memo swallows the real nonce and the URL's start.
    const attackBody = { ...body, memo: `hi&nonce=${String(body.nonce)}&notifyUrl=https://shop.example/cb?o=1`, nonce: 'fresh' } as Record<string, unknown>;
    delete attackBody.notifyUrl;
    expect(canonicalString(attackBody)).toBe(canonicalString(body));
    expectRefused(await s.post('/api/v1/order', attackBody), 400, /^memo must not contain "&(nonce|notifyUrl)="/);
  });

  it('create order: every field an endpoint accepts, moved at every boundary', async () => {
    await attack('/api/v1/order', {
      oid: nextOid(), uid: 'u1', amount: '12.5', memo: 'gift wrap', expiredAt: s.clock.now + 3_600_000,
      notifyUrl: 'https://shop.example/cb?a=1', redirectUrl: 'https://shop.example/done', logo: 'https://shop.example/logo.png',
    });
  });

  it('refund: every field', async () => {
    const o = await s.paidOrder(m, '50', 'u-r2');
    await attack('/api/v1/refund', { id: o.id, oid: o.oid, amount: '1', remark: 'late delivery' });
  });

  it('withdraw apply: every field', async () => {
    await s.credit(m, 'u-w2', '100');
    await attack('/api/v1/withdraw/apply', { uid: 'u-w2', amount: '3', to: EVM_TO, chainId: '1', chainType: 'EVM', token: USDT_ETH, notifyUrl: 'https://shop.example/w' });
  });

  it('withdraw confirm and reject: every field', async () => {
    await s.credit(m, 'u-w3', '100');
    const apply = () => s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'u-w3', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }));
    const w1 = expectOk(await apply());
    await attack('/api/v1/withdraw/confirm', { logId: w1.id, txHash: evmTx(0xc0ffee), blockNumber: 123 });
    const w2 = expectOk(await apply());
    await attack('/api/v1/withdraw/reject', { id: w2.id, remark: 'wrong address' });
  });

  it('nonces are 1-64 characters of A-Za-z0-9_.:- only', async () => {
    for (const nonce of ['a&b', 'a=b', 'a b', 'ä', 'a/b', 'x'.repeat(65), 'a\u0000']) {
      const r = await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '1', nonce }));
      expectRefused(r, 400, /nonce/);
    }
    for (const nonce of ['A', 'a_b.c:d-e', 'x'.repeat(64), nextNonce()]) {
      expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '1', nonce })));
    }
  });

  it('an oid, uid or remark that a signed callback would carry holds no "&" (an outside review forged a callback\'s paidAmount with one)', async () => {
    // The reviewer's order: once paid, its order.paid read with oid "Z", paidAmount "1000" and a
    // new field paidAmountX had the same canonical string, so the same valid signature, as the
    // real one (paidAmount "1"). The callback's fields are not the request's, so the request's
    // own rule let it in.
    const refusedFor = async (path: string, fields: Record<string, unknown>, field: string) => {
      const before = snapshot(s.ledger);
      expectRefused(await s.post(path, s.signed(m, fields)), 400, new RegExp(`^${field} must not contain "&": it is sent back in signed callbacks`));
      expect(snapshot(s.ledger), `${path} ${field}`).toEqual(before);
    };
    await refusedFor('/api/v1/order', { oid: 'Z&paidAmount=1000&paidAmountX=x', uid: 'resplit', amount: '1', notifyUrl: 'https://shop.example/cb' }, 'oid');
    await refusedFor('/api/v1/order', { oid: nextOid(), uid: 'tom&jerry', amount: '1' }, 'uid');
    await s.credit(m, 'u-amp', '100');
    await refusedFor('/api/v1/withdraw/apply', { uid: 'u-amp&status=CONFIRMED', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }, 'uid');
    const o = await s.paidOrder(m, '10', 'u-amp2');
    await refusedFor('/api/v1/refund', { id: o.id, amount: '1', remark: 'damaged & returned' }, 'remark');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'u-amp', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    await refusedFor('/api/v1/withdraw/reject', { id: w.id, remark: 'wrong & lost' }, 'remark');
    // Looking an order up by an oid is not sending it anywhere: an old order's oid still finds it.
    expectRefused(await s.post('/api/v1/refund', s.signed(m, { oid: 'no&such', amount: '1' })), 404, /^Order not found/);
  });
});

