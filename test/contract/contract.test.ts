import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import type { OperatorService } from '../../src/core/service.js';
import { RemotePaymentService } from '../../src/remote/client.js';
import { createApp } from '../../src/server/app.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { BIN } from '../helpers/cli.js';

/**
 * One contract, three ways: the ledger itself, the remote client wired straight into the
 * in-memory HTTP app, and the remote client talking to a real `cryptopay serve` process. Every
 * step must give the same result (or the same refusal: kind and message) on all three.
 */
interface Backend {
  name: string;
  service: OperatorService;
  /** The same ledger file, opened in this process, for seeding payments and checking invariants. */
  ledger: LocalPaymentService;
  stop(): Promise<void>;
}

const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const hash = (c: string) => `0x${c.repeat(64)}`;

function newLedger(): { service: LocalPaymentService; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-contract-'));
  const service = new LocalPaymentService(openLedger(join(dir, 'ledger.db')), { now: Date.now, caller: { actor: 'contract' } });
  return { service, dir };
}

async function localBackend(): Promise<Backend> {
  const { service, dir } = newLedger();
  await service.addMerchant({ name: 'Contract', generateWallet: true });
  return { name: 'local', service, ledger: service, stop: async () => { service.ledger.close(); rmSync(dir, { recursive: true, force: true }); } };
}

async function inMemoryBackend(): Promise<Backend> {
  const { service, dir } = newLedger();
  const { merchant, secret } = await service.addMerchant({ name: 'Contract', generateWallet: true });
  const app = createApp({ backend: service });
  const remote = new RemotePaymentService({
    baseUrl: 'http://in-memory',
    mchId: merchant.mchId,
    secret,
    fetch: async (url, init) => app.request(url, init),
  });
  return { name: 'in-memory', service: remote, ledger: service, stop: async () => { service.ledger.close(); rmSync(dir, { recursive: true, force: true }); } };
}

async function socketBackend(): Promise<Backend> {
  const { service, dir } = newLedger();
  const { merchant, secret } = await service.addMerchant({ name: 'Contract', generateWallet: true });
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', service.ledger.path], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  const remote = new RemotePaymentService({ baseUrl: url, mchId: merchant.mchId, secret });
  return {
    name: 'socket',
    service: remote,
    ledger: service,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      service.ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Outcome = { ok: true; value: unknown } | { ok: false; kind: string; message: string };

/** Ids, times and addresses differ between ledgers; their form must not. */
function normalize(value: unknown, ids: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(v, ids));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (['refundTime', 'createdAt', 'updatedAt', 'expiredAt', 'paidAt', 'at'].includes(k)) out[k] = typeof v === 'number' && v > 1.7e12 ? '<time>' : v;
      // Who acted: the ledger's own caller, or the signing merchant's api:<mchId> on the server,
      // where the merchant reads any operator's name as "operator" (test/server/merchant-log.test.ts).
      else if (k === 'actor') out[k] = v === 'contract' || v === 'operator' || (typeof v === 'string' && /^api:M\d+$/.test(v)) ? '<actor>' : v;
      else if (k === 'refundId') out[k] = typeof v === 'string' && /^rf_[0-9a-v]{9}[A-Za-z0-9_-]{22}$/.test(v) ? '<refund>' : v;
      else if (k === 'id' && typeof v === 'string' && !ids.has(v)) out[k] = /^(ord|wd)_[0-9a-v]{9}[A-Za-z0-9_-]{22}$/.test(v) ? `<new ${v.split('_')[0]}>` : v;
      else if (k === 'EVM') out[k] = typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v) ? '<evm>' : v;
      else if (k === 'TRON') out[k] = typeof v === 'string' && /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(v) ? '<tron>' : v;
      // The payment page's address is added by the HTTP layer (decisions §11), not by the ledger:
      // it must name this order's page, and is then left out of the comparison.
      else if (k === 'payUrl') {
        if (v !== `http://localhost/pay/${(value as { id?: string }).id}` && !(typeof v === 'string' && /^http:\/\/127\.0\.0\.1:\d+\/pay\//.test(v) && v.endsWith(`/pay/${(value as { id?: string }).id}`))) {
          out[k] = v;
        }
      }
      else out[k] = normalize(v, ids);
    }
    return out;
  }
  if (typeof value === 'string') {
    let text = value;
    for (const [id, name] of ids) text = text.replaceAll(id, name);
    return text;
  }
  return value;
}

async function outcome(p: Promise<unknown>, ids: Map<string, string>): Promise<Outcome> {
  try {
    return { ok: true, value: normalize(await p, ids) };
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { ok: false, kind: e.kind, message: normalize(e.message, ids) as string };
  }
}

/** The scenario: every operation and its refusals, in an order that builds the needed state. */
async function scenario(b: Backend): Promise<Record<string, Outcome>> {
  const s = b.service;
  const ids = new Map<string, string>();
  const out: Record<string, Outcome> = {};
  const step = async (name: string, p: () => Promise<unknown>) => {
    out[name] = await outcome(p(), ids);
  };

  const first = await s.createOrder({ oid: 'c1', uid: 'u1', amount: '010.50', memo: 'contract' });
  ids.set(first.id, '<order1>');
  out['create order'] = { ok: true, value: normalize(first, ids) };
  await step('create order again, same fields (idempotent)', () => s.createOrder({ oid: 'c1', uid: 'u1', amount: '10.5', memo: 'contract' }));
  await step('create order again, other amount', () => s.createOrder({ oid: 'c1', uid: 'u1', amount: '11', memo: 'contract' }));
  await step('create order, amount 1e3', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1e3' }));
  await step('create order, amount as a number', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: 10 as unknown as string }));
  await step('create order, 7 decimals', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1.0000001' }));
  await step('create order, unknown field', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1', notifyURL: 'https://x' } as never));
  await step('create order, uid missing', () => s.createOrder({ oid: 'c2', amount: '1' } as never));
  await step('create order, nested memo', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1', memo: { a: 1 } } as never));
  await step('create order, expired in the past', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1', expiredAt: 1000 }));
  await step('create order, oid of 65 characters', () => s.createOrder({ oid: 'x'.repeat(65), uid: 'u1', amount: '1' }));
  await step('create order, bad notifyUrl', () => s.createOrder({ oid: 'c2', uid: 'u1', amount: '1', notifyUrl: 'ftp://x' }));

  await step('addresses', () => s.getAddresses(first.id));
  await step('addresses of an unknown order', () => s.getAddresses('ord_doesnotexist000000000'));
  await step('status', () => s.getOrderStatus(first.id));
  await step('status of an unknown order', () => s.getOrderStatus('ord_doesnotexist000000000'));

  await step('refund an unpaid order', () => s.refund({ id: first.id, amount: '1' }));
  await b.ledger.markPaid({ id: first.id, txHash: hash('a') });
  await step('status once paid', () => s.getOrderStatus(first.id));
  await step('refund 3 with a remark', () => s.refund({ id: first.id, amount: '3', remark: 'damaged' }));
  await step('refund by oid, above the remainder', () => s.refund({ oid: 'c1', amount: '8' }));
  await step('refund above the payment', () => s.refund({ id: first.id, amount: '20' }));
  await step('refund without id or oid', () => s.refund({ amount: '1' }));
  await step('refund of an unknown order', () => s.refund({ id: 'ord_doesnotexist000000000', amount: '1' }));
  await step('refund by oid, the remainder', () => s.refund({ oid: 'c1', amount: '7.5' }));
  await step('status once refunded', () => s.getOrderStatus(first.id));

  await b.ledger.adjustBalance({ uid: 'u2', amount: '+70', reason: 'contract seed' });
  const w1 = await s.applyWithdrawal({ uid: 'u2', amount: '30', to: TO, chainId: 1, chainType: 'EVM', token: USDT_ETH });
  ids.set(w1.id, '<w1>');
  out['withdraw apply'] = { ok: true, value: normalize(w1, ids) };
  await step('withdraw apply, above the balance', () => s.applyWithdrawal({ uid: 'u2', amount: '41', to: TO, chainId: '1', chainType: 'EVM', token: USDT_ETH }));
  await step('withdraw apply, bad checksum', () => s.applyWithdrawal({ uid: 'u2', amount: '1', to: TO.replace('a', 'A'), chainId: 1, chainType: 'EVM', token: USDT_ETH }));
  await step('withdraw apply, unknown chain', () => s.applyWithdrawal({ uid: 'u2', amount: '1', to: TO, chainId: 999, chainType: 'EVM', token: USDT_ETH }));
  await step('withdraw apply, chain type mismatch', () => s.applyWithdrawal({ uid: 'u2', amount: '1', to: TO, chainId: 728126428, chainType: 'EVM', token: USDT_ETH }));
  await step('withdraw confirm, bad hash', () => s.confirmWithdrawal({ logId: w1.id, txHash: 'abc', blockNumber: 5 }));
  await step('withdraw confirm, block 0', () => s.confirmWithdrawal({ logId: w1.id, txHash: hash('b'), blockNumber: 0 }));
  await step('withdraw confirm', () => s.confirmWithdrawal({ logId: w1.id, txHash: hash('b'), blockNumber: 19_000_000 }));
  await step('withdraw confirm again', () => s.confirmWithdrawal({ logId: w1.id, txHash: hash('c'), blockNumber: 19_000_001 }));
  await step('withdraw reject a confirmed one', () => s.rejectWithdrawal({ id: w1.id }));
  const w2 = await s.applyWithdrawal({ uid: 'u2', amount: '10', to: TO.toLowerCase(), chainId: 1, chainType: 'EVM', token: USDT_ETH.toLowerCase() });
  ids.set(w2.id, '<w2>');
  await step('withdraw confirm with a hash already used', () => s.confirmWithdrawal({ logId: w2.id, txHash: hash('b'), blockNumber: 1 }));
  await step('withdraw reject', () => s.rejectWithdrawal({ id: w2.id, remark: 'address on a sanctions list' }));
  await step('withdraw reject again', () => s.rejectWithdrawal({ id: w2.id }));
  await step('withdraw confirm of an unknown id', () => s.confirmWithdrawal({ logId: 'wd_doesnotexist00000000', txHash: hash('d'), blockNumber: 1 }));
  await step('withdraw apply on TRON', () => s.applyWithdrawal({ uid: 'u2', amount: '0.000001', to: 'TJEh7TX8sNj5uq4hXKyYdTrnGmeeG48top', chainId: '728126428', chainType: 'TRON', token: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }));

  // The operator's extensions (decisions §12, issue #15 item 8): the same reads, the same refusals.
  await step('whoami', () => s.whoami());
  await step('list orders', () => s.listOrders({}));
  await step('list orders, REFUNDED, limit 1', () => s.listOrders({ status: 'REFUNDED', limit: 1 }));
  await step('list orders of an unknown user', () => s.listOrders({ uid: 'nobody' }));
  await step('show order', () => s.showOrder({ id: first.id }));
  await step('show order by oid', () => s.showOrder({ oid: 'c1' }));
  await step('show order, id and oid disagree', () => s.showOrder({ id: first.id, oid: 'c2' }));
  await step('show order, unknown', () => s.showOrder({ id: 'ord_doesnotexist000000000' }));
  await step('show order without id or oid', () => s.showOrder({}));
  await step('held payments', () => s.heldPayments({}));
  await step('list withdrawals', () => s.listWithdrawals({}));
  await step('list withdrawals, PENDING', () => s.listWithdrawals({ status: 'PENDING' }));
  await step('get withdrawal', () => s.getWithdrawal(w1.id));
  await step('get withdrawal, unknown', () => s.getWithdrawal('wd_doesnotexist00000000'));
  await step('list refunds', () => s.listRefunds({}));
  await step('list refunds of an order', () => s.listRefunds({ orderId: first.id, limit: 1 }));
  await step('balance', () => s.balance('u2'));
  await step('balance of an unknown user', () => s.balance('nobody'));
  await step('log of an order', () => s.log({ orderId: first.id }));
  await step('log of a withdrawal', () => s.log({ withdrawalId: w2.id }));
  // Pages, find, summary and the log's follow (issue #15 items 2, 8, 10).
  await step('page of orders, limit 1', () => s.pageOrders({ limit: 1 }));
  await step('page of withdrawals', () => s.pageWithdrawals({}));
  await step('page of refunds of an order', () => s.pageRefunds({ orderId: first.id }));
  await step('page of the log of an order', () => s.pageLog({ orderId: first.id }));
  await step('page with an unknown cursor', () => s.pageOrders({ cursor: 'ord_doesnotexist000000000' }));
  await step('find by oid', () => s.findOrders('c1'));
  await step('find by payment hash, upper case without 0x', () => s.findOrders(hash('a').slice(2).toUpperCase()));
  await step('find nothing', () => s.findOrders('nobody'));
  await step('summary', async () => {
    // Locally no merchant means every merchant; over HTTP it is always the signing one.
    const { at: _at, today: _today, week: _week, ...rest } = await s.summary({ mchId: (await s.whoami()).mchId });
    return rest;
  });
  await step('follow the log from its start', async () => {
    const newest = await s.followLog({ orderId: first.id, limit: 2 });
    const all = await s.followLog({ orderId: first.id, after: 0 });
    return { newest: newest.entries.map((e) => e.action), all: all.entries.map((e) => e.action), caughtUp: all.mark === newest.mark };
  });
  return out;
}

const makers = [localBackend, inMemoryBackend, socketBackend];
const results: Record<string, Record<string, Outcome>> = {};
const backends: Backend[] = [];

beforeAll(async () => {
  for (const make of makers) {
    const b = await make();
    backends.push(b);
    results[b.name] = await scenario(b);
  }
}, 120_000);

afterAll(async () => {
  for (const b of backends) await b.stop();
});

describe('the contract holds for the ledger itself', () => {
  it('answers what the interface and decisions say', () => {
    const r = results.local!;
    expect(r['create order']).toEqual({
      ok: true,
      value: { id: '<order1>', oid: 'c1', uid: 'u1', amount: '10.5', status: 'PENDING_PAY', expiredAt: '<time>', addresses: { EVM: '<evm>', TRON: '<tron>' } },
    });
    expect(r['create order again, same fields (idempotent)']).toEqual(r['create order']);
    expect(r['create order again, other amount']).toMatchObject({ ok: false, kind: 'conflict', message: expect.stringContaining('different amount') });
    expect(r['create order, amount 1e3']).toMatchObject({ ok: false, kind: 'invalid', message: expect.stringContaining('plain decimal') });
    expect(r['create order, unknown field']).toMatchObject({ ok: false, kind: 'invalid', message: expect.stringContaining('notifyURL') });
    expect(r['create order, uid missing']).toMatchObject({ ok: false, kind: 'invalid', message: 'uid is required' });
    expect(r['addresses of an unknown order']).toEqual({ ok: false, kind: 'not_found', message: 'Not found' });
    expect(r['status of an unknown order']).toEqual({ ok: false, kind: 'not_found', message: 'Order not found' });
    expect(r['status']).toEqual({ ok: true, value: 'PENDING_PAY' });
    expect(r['refund an unpaid order']).toMatchObject({ ok: false, kind: 'conflict', message: expect.stringContaining('not Paid') });
    expect(r['status once paid']).toEqual({ ok: true, value: 'PAID' });
    expect(r['refund 3 with a remark']).toEqual({
      ok: true,
      value: { id: '<order1>', oid: 'c1', amount: '3', status: 'REFUNDED', remark: 'damaged', refundTime: '<time>' },
    });
    expect(r['refund by oid, above the remainder']).toMatchObject({ ok: false, kind: 'conflict' });
    expect(r['refund by oid, the remainder']).toMatchObject({ ok: true, value: { amount: '7.5', status: 'REFUNDED' } });
    expect(r['status once refunded']).toEqual({ ok: true, value: 'REFUNDED' });
    expect(r['withdraw apply']).toEqual({
      ok: true,
      value: {
        id: '<w1>', uid: 'u2', amount: '30', to: TO, chainId: '1', chainType: 'EVM', token: USDT_ETH, status: 'PENDING',
        txHash: null, blockNumber: null, remark: null, createdAt: '<time>', updatedAt: '<time>',
      },
    });
    expect(r['withdraw apply, above the balance']).toMatchObject({ ok: false, kind: 'conflict', message: expect.stringContaining('insufficient balance') });
    expect(r['withdraw confirm']).toMatchObject({ ok: true, value: { status: 'CONFIRMED', txHash: hash('b'), blockNumber: 19_000_000 } });
    expect(r['withdraw confirm again']).toMatchObject({ ok: false, kind: 'conflict' });
    expect(r['withdraw confirm with a hash already used']).toMatchObject({ ok: false, kind: 'conflict', message: expect.stringContaining('is already recorded in this ledger') });
    expect(r['withdraw reject']).toMatchObject({ ok: true, value: { status: 'REJECTED', remark: 'address on a sanctions list' } });
    expect(r['withdraw apply on TRON']).toMatchObject({ ok: true, value: { chainType: 'TRON', chainId: '728126428', amount: '0.000001' } });
    expect(r['whoami']).toEqual({ ok: true, value: { mchId: 'M100001', name: 'Contract', asset: 'USDT' } });
    expect(r['list orders, REFUNDED, limit 1']).toMatchObject({ ok: true, value: [{ id: '<order1>', status: 'REFUNDED', paidAmount: '10.5', refundedAmount: '10.5' }] });
    expect(r['list orders of an unknown user']).toEqual({ ok: true, value: [] });
    expect(r['show order']).toMatchObject({ ok: true, value: { id: '<order1>', memo: 'contract', onChain: [], payments: [{ txHash: hash('a'), amount: '10.5', source: 'manual' }] } });
    expect(r['show order by oid']).toEqual(r['show order']);
    expect(r['show order, unknown']).toEqual({ ok: false, kind: 'not_found', message: 'Order not found' });
    expect(r['show order without id or oid']).toEqual({ ok: false, kind: 'invalid', message: 'id or oid is required' });
    expect(r['held payments']).toEqual({ ok: true, value: [] });
    expect(r['get withdrawal']).toMatchObject({ ok: true, value: { id: '<w1>', status: 'CONFIRMED', verification: 'unverified' } });
    expect(r['get withdrawal, unknown']).toEqual({ ok: false, kind: 'not_found', message: 'withdrawal not found' });
    expect(r['list refunds of an order']).toMatchObject({ ok: true, value: [{ refundId: '<refund>', id: '<order1>', amount: '7.5' }] });
    expect(r['balance of an unknown user']).toMatchObject({ ok: true, value: { uid: 'nobody', available: '0', held: '0' } });
    expect(r['log of a withdrawal']).toMatchObject({ ok: true, value: [{ action: 'withdrawal.rejected', actor: '<actor>' }, { action: 'withdrawal.applied' }] });
  });
});

describe.each(['in-memory', 'socket'])('the remote client against the %s server', (name) => {
  it('gives the same result as the ledger for every step', () => {
    const local = results.local!;
    const remote = results[name]!;
    expect(Object.keys(remote)).toEqual(Object.keys(local));
    for (const step of Object.keys(local)) expect({ step, ...remote[step] }).toEqual({ step, ...local[step] });
  });
});

describe('afterwards', () => {
  it('every ledger keeps its invariants, and all three moved the same money', async () => {
    const balances = [];
    for (const b of backends) {
      expect(await b.ledger.check()).toEqual([]);
      balances.push([await b.ledger.balance('u1'), await b.ledger.balance('u2')].map(({ available, held }) => ({ available, held })));
    }
    expect(balances[0]).toEqual([{ available: '0', held: '0' }, { available: '39.999999', held: '0.000001' }]);
    expect(balances[1]).toEqual(balances[0]);
    expect(balances[2]).toEqual(balances[0]);
  });
});
