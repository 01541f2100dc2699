import { getAddress } from 'ethers';
import { describe, expect, it } from 'vitest';
import { isTronAddress } from '../../src/chains/address.js';
import {
  EVM_TO, MINUTE, SECOND, T0, TRON_CHAIN, TRON_TO, USDT_ETH, USDT_TRON, expectOk, expectRefused, nextOid, nextTx, useServer,
  type Merchant, type TestServer,
} from './helpers.js';

/** Every endpoint over the real socket: the success bodies of the interface and decisions. */
describe('every endpoint over HTTP', () => {
  let s: TestServer;
  let m: Merchant;

  useServer(['Shop'], {}, (server, [shop]) => {
    s = server;
    m = shop;
  });

  it('POST /api/v1/order answers the payment order of §2.2 with a canonical amount, fresh addresses and the default expiry', async () => {
    s.clock.now = T0;
    const oid = nextOid();
    const r = await s.post('/api/v1/order', s.signed(m, { oid, uid: 'user-7', amount: '010.50', memo: 'coffee', notifyUrl: 'https://shop.example/cb', redirectUrl: 'https://shop.example/done', logo: 'https://shop.example/logo.png' }));
    const data = expectOk(r, T0);
    expect(data).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      oid,
      uid: 'user-7',
      amount: '10.5',
      status: 'PENDING_PAY',
      expiredAt: T0 + 30 * MINUTE,
      addresses: { EVM: expect.any(String), TRON: expect.any(String) },
      // Decisions §11; this in-memory app was given no public address.
      payUrl: `http://localhost/pay/${data.id}`,
    });
    expect(Object.keys(data).sort()).toEqual(['addresses', 'amount', 'expiredAt', 'id', 'oid', 'payUrl', 'status', 'uid']);
    // Unguessable ids (decisions §1): at least 96 random bits, URL-safe.
    expect(data.id.replace(/^[a-z]+_/, '').length * 6).toBeGreaterThanOrEqual(96);
    expect(getAddress(data.addresses.EVM)).toBe(data.addresses.EVM);
    expect(isTronAddress(data.addresses.TRON)).toBe(true);

    const second = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'user-7', amount: '1' })));
    expect(second.id).not.toBe(data.id);
    expect(second.addresses.EVM).not.toBe(data.addresses.EVM);
    expect(second.addresses.TRON).not.toBe(data.addresses.TRON);
  });

  it.each([
    ['010.50', '10.5'],
    ['7', '7'],
    ['7.000000', '7'],
    ['0.000001', '0.000001'],
    ['000.5', '0.5'],
    ['1000000000000', '1000000000000'],
  ])('answers amount %s as %s', async (amount, canonical) => {
    const data = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u', amount })));
    expect(data.amount).toBe(canonical);
  });

  it('takes expiredAt as a number or a digit string', async () => {
    s.clock.now = T0;
    for (const expiredAt of [T0 + 60 * MINUTE, String(T0 + 61 * MINUTE)]) {
      const data = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u', amount: '1', expiredAt })));
      expect(data.expiredAt).toBe(Number(expiredAt));
    }
  });

  it('GET /api/v1/address/{id} answers the addresses of the order, unsigned', async () => {
    s.clock.now = T0;
    const o = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u', amount: '3' })));
    const data = expectOk(await s.get(`/api/v1/address/${o.id}`), T0);
    expect(data).toEqual(o.addresses);
    expect(Object.keys(data).sort()).toEqual(['EVM', 'TRON']);
  });

  it('GET /api/v1/order/{id}/status answers the status as a string through its life', async () => {
    s.clock.now = T0;
    const o = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u', amount: '3' })));
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('PENDING_PAY');
    await s.service.markPaid({ id: o.id, txHash: nextTx() });
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('PAID');
    expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '3' })));
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('REFUNDED');

    const unpaid = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u', amount: '3' })));
    s.clock.now = unpaid.expiredAt;
    expect(expectOk(await s.get(`/api/v1/order/${unpaid.id}/status`))).toBe('PENDING_PAY');
    s.clock.now = unpaid.expiredAt + 1;
    expect(expectOk(await s.get(`/api/v1/order/${unpaid.id}/status`))).toBe('EXPIRED');
    s.clock.now = T0;
  });

  it.each([
    ['/api/v1/address/ord_doesnotexist0000000000', 'Not found'],
    ['/api/v1/order/ord_doesnotexist0000000000/status', 'Order not found'],
    [`/api/v1/address/${'x'.repeat(65)}`, 'Not found'],
    [`/api/v1/order/${'x'.repeat(65)}/status`, 'Order not found'],
  ])('GET %s of a missing order: 404 and exactly %j', async (path, msg) => {
    expectRefused(await s.get(path), 404, msg);
  });

  it('POST /api/v1/refund answers the refund result of §2.5, partial then full, by id or by oid', async () => {
    s.clock.now = T0;
    const o = await s.paidOrder(m, '10');
    s.clock.now = T0 + 5 * SECOND;
    const first = expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '004.500', remark: 'broken cup' })), T0 + 5 * SECOND);
    expect(first).toEqual({ id: o.id, oid: o.oid, amount: '4.5', status: 'REFUNDED', remark: 'broken cup', refundTime: T0 + 5 * SECOND });
    expect(Object.keys(first).sort()).toEqual(['amount', 'id', 'oid', 'refundTime', 'remark', 'status']);
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('PAID');

    const second = expectOk(await s.post('/api/v1/refund', s.signed(m, { oid: o.oid, amount: '5.5' })));
    expect(second).toEqual({ id: o.id, oid: o.oid, amount: '5.5', status: 'REFUNDED', remark: '', refundTime: T0 + 5 * SECOND });
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('REFUNDED');
    expect((await s.service.balance('u1', { mchId: m.mchId })).available).toBe('0');
    s.clock.now = T0;
  });

  it('POST /api/v1/refund with both id and oid of the same order works', async () => {
    const o = await s.paidOrder(m, '2');
    const r = expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, oid: o.oid, amount: '2' })));
    expect(r).toMatchObject({ id: o.id, oid: o.oid, amount: '2', status: 'REFUNDED' });
  });

  const WITHDRAWAL_KEYS = ['amount', 'blockNumber', 'chainId', 'chainType', 'createdAt', 'id', 'remark', 'status', 'to', 'token', 'txHash', 'uid', 'updatedAt'];

  it('POST /api/v1/withdraw/apply then confirm answer the withdrawal record of §6', async () => {
    s.clock.now = T0;
    await s.credit(m, 'w1', '100');
    const applied = expectOk(
      await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'w1', amount: '025.250', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH, notifyUrl: 'https://shop.example/wd' })),
      T0,
    );
    expect(applied).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      uid: 'w1',
      amount: '25.25',
      to: EVM_TO,
      chainId: '1',
      chainType: 'EVM',
      token: USDT_ETH,
      status: 'PENDING',
      txHash: null,
      blockNumber: null,
      remark: null,
      createdAt: T0,
      updatedAt: T0,
    });
    expect(Object.keys(applied).sort()).toEqual(WITHDRAWAL_KEYS);
    expect(await s.service.balance('w1', { mchId: m.mchId })).toMatchObject({ available: '74.75', held: '25.25' });

    s.clock.now = T0 + 10 * SECOND;
    const tx = `0x${'AB'.repeat(32)}`;
    const confirmed = expectOk(await s.post('/api/v1/withdraw/confirm', s.signed(m, { logId: applied.id, txHash: tx, blockNumber: 19_000_000 })));
    expect(confirmed).toEqual({ ...applied, status: 'CONFIRMED', txHash: tx.toLowerCase(), blockNumber: 19_000_000, updatedAt: T0 + 10 * SECOND });
    expect(await s.service.balance('w1', { mchId: m.mchId })).toMatchObject({ available: '74.75', held: '0' });
    s.clock.now = T0;
  });

  it('POST /api/v1/withdraw/apply on TRON (chainId as a string) then reject with a remark releases the hold', async () => {
    s.clock.now = T0;
    await s.credit(m, 'w2', '10');
    const applied = expectOk(
      await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'w2', amount: '10', to: TRON_TO, chainId: String(TRON_CHAIN), chainType: 'TRON', token: USDT_TRON })),
    );
    expect(applied).toMatchObject({ uid: 'w2', amount: '10', to: TRON_TO, chainId: String(TRON_CHAIN), chainType: 'TRON', token: USDT_TRON, status: 'PENDING' });
    expect(await s.service.balance('w2', { mchId: m.mchId })).toMatchObject({ available: '0', held: '10' });

    s.clock.now = T0 + 20 * SECOND;
    const rejected = expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: applied.id, remark: 'address on a sanctions list' })));
    expect(rejected).toEqual({ ...applied, status: 'REJECTED', remark: 'address on a sanctions list', updatedAt: T0 + 20 * SECOND });
    expect(Object.keys(rejected).sort()).toEqual(WITHDRAWAL_KEYS);
    expect(await s.service.balance('w2', { mchId: m.mchId })).toMatchObject({ available: '10', held: '0' });
    s.clock.now = T0;
  });

  it('confirm takes a TRON hash (64 hex) and blockNumber as a digit string', async () => {
    await s.credit(m, 'w3', '5');
    const applied = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'w3', amount: '5', to: TRON_TO, chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON })));
    const tx = 'c'.repeat(64);
    const confirmed = expectOk(await s.post('/api/v1/withdraw/confirm', s.signed(m, { logId: applied.id, txHash: tx, blockNumber: '61234567' })));
    expect(confirmed).toMatchObject({ status: 'CONFIRMED', txHash: tx, blockNumber: 61234567 });
  });

  it('serves JSON with the envelope on the wire (raw text, not only parsed)', async () => {
    const r = await s.get('/healthz');
    expect(r.text).toMatch(/^\{"code":1,"msg":"success","data":\{"status":"ok"\},"systemTime":\d+\}$/);
  });
});
