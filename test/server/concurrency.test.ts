import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import {
  EVM_TO, USDT_ETH, expectOk, expectRefused, httpJson, killAll, nextNonce, nextTx, runCli, spawnServe, startServer, tempDir,
  type Merchant, type TestServer,
} from './helpers.js';

/** Decisions §4, §5, §6 under concurrent HTTP requests: no double spend, the ledger stays sound. */

describe('concurrent requests to one server', () => {
  let s: TestServer;
  afterEach(async () => {
    expect(await s.service.check()).toEqual([]);
    expect(s.errorLog).toEqual([]);
    await s.close();
  });

  it('20 concurrent refunds of 1 on an order paid 10: exactly 10 succeed', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const o = await s.paidOrder(m, '10', 'buyer');
    const replies = await Promise.all(Array.from({ length: 20 }, () => s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '1' }))));
    const ok = replies.filter((r) => r.status === 200);
    expect(ok.length).toBe(10);
    for (const r of ok) expect(expectOk(r)).toMatchObject({ id: o.id, amount: '1', status: 'REFUNDED' });
    for (const r of replies.filter((x) => x.status !== 200)) expectRefused(r, 409, /^order status is not Paid \(it is REFUNDED\)$|above what remains refundable/);
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('REFUNDED');
    expect(await s.service.balance('buyer', { mchId: m.mchId })).toMatchObject({ available: '0', held: '0' });
    expect((await s.service.getOrder(o.id)).refundedAmount).toBe('10');
  });

  it('20 concurrent withdraw applies of 10 on a balance of 70: exactly 7 succeed', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    await s.credit(m, 'saver', '70');
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'saver', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }))),
    );
    const ok = replies.filter((r) => r.status === 200);
    expect(ok.length).toBe(7);
    for (const r of replies.filter((x) => x.status !== 200)) expectRefused(r, 409, /^insufficient balance: user saver has 0 USDT available \(and 70 USDT held by pending withdrawals\), 10 needed$/);
    expect(new Set(ok.map((r) => r.json.data.id)).size).toBe(7);
    expect(await s.service.balance('saver', { mchId: m.mchId })).toMatchObject({ available: '0', held: '70' });

    // Confirm and reject them concurrently too, each twice: every withdrawal moves exactly once.
    const ids = ok.map((r) => r.json.data.id as string);
    const moves = await Promise.all(
      ids.flatMap((id, i) => [0, 1].map(() =>
        i < 4
          ? s.post('/api/v1/withdraw/confirm', s.signed(m, { logId: id, txHash: `0x${(i + 1).toString(16).padStart(64, '0')}`, blockNumber: 100 + i }))
          : s.post('/api/v1/withdraw/reject', s.signed(m, { id })),
      )),
    );
    expect(moves.filter((r) => r.status === 200).length).toBe(7);
    for (const r of moves.filter((x) => x.status !== 200)) expectRefused(r, 409, /not PENDING|is already recorded in this ledger/);
    expect(await s.service.balance('saver', { mchId: m.mchId })).toMatchObject({ available: '30', held: '0' });
  });

  it('the same signed request sent 10 times at once is carried out once', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const o = await s.paidOrder(m, '10');
    const body = s.signed(m, { id: o.id, amount: '1' });
    const replies = await Promise.all(Array.from({ length: 10 }, () => s.post('/api/v1/refund', body)));
    expect(replies.filter((r) => r.status === 200).length).toBe(1);
    for (const r of replies.filter((x) => x.status !== 200)) expectRefused(r, 401, 'nonce has already been used');
    expect((await s.service.getOrder(o.id)).refundedAmount).toBe('1');
  });

  it('concurrent creates with one oid and the same fields answer one order', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const replies = await Promise.all(Array.from({ length: 10 }, () => s.post('/api/v1/order', s.signed(m, { oid: 'same-oid', uid: 'u1', amount: '3' }))));
    const ids = new Set(replies.map((r) => expectOk(r).id));
    expect(ids.size).toBe(1);
  });
});

describe('two serve processes on one ledger file', () => {
  const tmp = tempDir();
  afterAll(() => {
    killAll();
    tmp.cleanup();
  });

  it('split 20 refunds of 1 and 20 applies of 10 (balance 70) between them: exactly 10 and 7 succeed, ledger check clean', async () => {
    const db = join(tmp.dir, 'ledger.db');
    const ledger = openLedger(db);
    const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' } });
    const created = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0 });
    const m: Merchant = { mchId: created.merchant.mchId, secret: created.secret };
    const o = await service.createOrder({ mchId: m.mchId, oid: 'two-procs', uid: 'buyer', amount: '10' });
    await service.markPaid({ id: o.id, txHash: nextTx() });
    await service.adjustBalance({ mchId: m.mchId, uid: 'saver', amount: '70', reason: 'test' });
    ledger.close();

    const [a, b] = await Promise.all([spawnServe(db), spawnServe(db)]);
    const signed = (fields: Record<string, unknown>) => {
      const body = { mchId: m.mchId, timestamp: Date.now(), nonce: nextNonce(), ...fields };
      return JSON.stringify({ ...body, sign: sign(body, m.secret) });
    };
    const post = (url: string, path: string, body: string) => httpJson(url, path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

    const refunds = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? a.url : b.url, '/api/v1/refund', signed({ id: o.id, amount: '1' }))));
    expect(refunds.filter((r) => r.status === 200).length).toBe(10);
    for (const r of refunds.filter((x) => x.status !== 200)) expect(r.status).toBe(409);

    const applies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? a.url : b.url, '/api/v1/withdraw/apply', signed({ uid: 'saver', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }))),
    );
    expect(applies.filter((r) => r.status === 200).length).toBe(7);
    for (const r of applies.filter((x) => x.status !== 200)) expect(r.status).toBe(409);

    // The same body to both processes at once: one ledger, one nonce table.
    const pending = applies.find((r) => r.status === 200)!.json.data.id as string;
    const twice = signed({ id: pending });
    const replay = await Promise.all([post(a.url, '/api/v1/withdraw/reject', twice), post(b.url, '/api/v1/withdraw/reject', twice)]);
    expect(replay.map((r) => r.status).sort()).toEqual([200, 401]);
    expect(replay.find((r) => r.status === 401)!.json.msg).toBe('nonce has already been used');

    expect((await a.stop()).code, a.stderr()).toBe(0);
    expect((await b.stop()).code, b.stderr()).toBe(0);
    const check = await runCli(['ledger', 'check', '--db', db]);
    expect(check).toMatchObject({ code: 0, stdout: 'ledger ok: every invariant holds\n' });
  });
});
