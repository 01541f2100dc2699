import { describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { EVM_TO, USDT_ETH, expectOk, expectRefused, nextNonce, nextOid, useServer, type Merchant, type TestServer } from './helpers.js';

/** Issue #10 items 2 and 3 (decisions §1): a verified nonce is spent whatever the answer; text is well-formed. */
describe('a refused request is spent', () => {
  let s: TestServer;
  let m: Merchant;
  useServer(['Shop'], {}, (srv, [mm]) => {
    s = srv;
    m = mm!;
  });

  const nonceRows = () => Number((s.ledger.sqlite.prepare('select count(*) as n from nonces').get() as { n: bigint }).n);

  it('a withdrawal refused for lack of funds is not accepted later, unchanged, after a top-up', async () => {
    await s.credit(m, 'u-poor', '5');
    const body = s.signed(m, { uid: 'u-poor', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH });
    expectRefused(await s.post('/api/v1/withdraw/apply', body), 409, /insufficient balance/);
    await s.credit(m, 'u-poor', '100');
    expectRefused(await s.post('/api/v1/withdraw/apply', body), 401, 'nonce has already been used');
    expect(await s.service.balance('u-poor', { mchId: m.mchId })).toMatchObject({ available: '105', held: '0' });
    // Signed again with a new nonce, it goes through.
    const again = s.signed(m, { uid: 'u-poor', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH });
    expectOk(await s.post('/api/v1/withdraw/apply', again));
  });

  it('every kind of refusal after the signature verifies uses the nonce up: validation, not found, conflict', async () => {
    const o = await s.order(m);
    const refusals: [string, Record<string, unknown>, number][] = [
      ['/api/v1/withdraw/apply', { uid: 'u1', amount: '1', to: '0x123', chainId: 1, chainType: 'EVM', token: USDT_ETH }, 400],
      ['/api/v1/refund', { id: 'ord_nope', amount: '1' }, 404],
      ['/api/v1/refund', { id: o.id, amount: '1' }, 409],
      ['/api/v1/withdraw/reject', { id: 'wd_nope' }, 404],
      ['/api/v1/order', { oid: nextOid(), uid: 'u1', amount: '1', expiredAt: s.clock.now - 1 }, 400],
    ];
    for (const [path, fields, status] of refusals) {
      const body = s.signed(m, fields);
      const before = nonceRows();
      expectRefused(await s.post(path, body), status);
      expect(nonceRows(), path).toBe(before + 1);
      expectRefused(await s.post(path, body), 401, 'nonce has already been used');
    }
  });

  it('a body refused before its signature verifies spends nothing (a bad signature, unknown fields)', async () => {
    const before = nonceRows();
    const forged = { ...s.signed(m, { oid: nextOid(), uid: 'u1', amount: '1' }), sign: 'ab'.repeat(32) };
    expectRefused(await s.post('/api/v1/order', forged), 401);
    expect(nonceRows()).toBe(before);
  });

  it('idempotent create-order retries keep working: same oid, same fields, new nonce', async () => {
    const fields = { oid: nextOid(), uid: 'u1', amount: '7.5', memo: 'x' };
    const first = expectOk(await s.post('/api/v1/order', s.signed(m, fields)));
    const second = expectOk(await s.post('/api/v1/order', s.signed(m, fields)));
    expect(second.id).toBe(first.id);
  });
});

describe('every string is well-formed text', () => {
  let s: TestServer;
  let m: Merchant;
  useServer(['Shop'], {}, (srv, [mm]) => {
    s = srv;
    m = mm!;
  });

  /** A JSON text with a raw escape sequence in it, signed as the server would read it. */
  function rawBody(fields: Record<string, string>, escaped: [string, string]) {
    const body: Record<string, unknown> = { mchId: m.mchId, timestamp: s.clock.now, nonce: nextNonce(), ...fields };
    const parsed = { ...body, [escaped[0]]: JSON.parse(`"${escaped[1]}"`) };
    const text = JSON.stringify({ ...body, sign: sign(parsed, m.secret) }).replace(/}$/, `,"${escaped[0]}":"${escaped[1]}"}`);
    return text;
  }

  it('refuses a lone surrogate in uid (it would be stored as other bytes than it was signed as)', async () => {
    for (const bad of ['u\\udc00', 'u\\ud800', '\\ud800x', 'a\\udfff\\ud800']) {
      const r = await s.post('/api/v1/order', rawBody({ oid: nextOid(), amount: '1' }, ['uid', bad]));
      expectRefused(r, 400, 'uid is not well-formed Unicode (it holds a lone surrogate)');
    }
    // A proper pair is one character and is fine.
    expectOk(await s.post('/api/v1/order', rawBody({ oid: nextOid(), amount: '1' }, ['uid', 'u\\ud83d\\ude00'])));
    expect(await s.service.listOrders({ uid: 'u\ufffd' })).toEqual([]);
  });

  it('refuses lone surrogates in every text field: memo, remark, URLs', async () => {
    expectRefused(await s.post('/api/v1/order', rawBody({ oid: nextOid(), uid: 'u1', amount: '1' }, ['memo', 'hi\\ud800'])), 400, /memo is not well-formed/);
    const o = await s.paidOrder(m, '5');
    expectRefused(await s.post('/api/v1/refund', rawBody({ id: o.id, amount: '1' }, ['remark', '\\udc00'])), 400, /remark is not well-formed/);
  });

  it('refuses control characters in oid, uid, ids and nonces', async () => {
    const o = await s.paidOrder(m, '5');
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['/api/v1/order', { oid: 'A-1\u0007', uid: 'u1', amount: '1' }, /oid must not contain control characters/],
      ['/api/v1/order', { oid: nextOid(), uid: 'u\n1', amount: '1' }, /uid must not contain control characters/],
      ['/api/v1/order', { oid: nextOid(), uid: 'u\u009b1', amount: '1' }, /uid must not contain control characters/],
      ['/api/v1/refund', { id: `${o.id}\u0000`, amount: '1' }, /id must not contain control characters/],
      ['/api/v1/withdraw/confirm', { logId: 'wd\u001b[31m', txHash: `0x${'1'.repeat(64)}`, blockNumber: 1 }, /logId must not contain control characters/],
      ['/api/v1/order', { oid: nextOid(), uid: 'u1', amount: '1', nonce: 'n\u0000' }, /nonce/],
    ];
    for (const [path, fields, msg] of cases) expectRefused(await s.post(path, s.signed(m, fields)), 400, msg);
  });
});
