import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../../../src/core/types.js';
import { openLedger } from '../../../src/store/db.js';
import { LocalPaymentService } from '../../../src/store/local-service.js';
import { runCli } from '../../helpers/cli.js';
import { startReceiver, type Receiver } from '../../callbacks/receiver.js';
import { httpJson, killAll, spawnServe, tempDir } from '../../server/helpers.js';
import { pay, startPayChain, until, withService, writeChainsConfig, type PayChain } from './anvil-support.js';

/**
 * Late and held are decided by when a payment arrived on chain, its block's timestamp, not by
 * when the watcher gets to count it (decisions §6b, docs/decisions.md "Reading the chain"). A
 * real anvil whose genesis lies four days back, so that blocks can be mined at chosen times in
 * the past (evm_setNextBlockTimestamp), and real `serve` processes on the real clock.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const tmp = tempDir();
let pc: PayChain;

beforeAll(async () => {
  pc = await startPayChain(31337, { genesisTimestamp: Math.floor((Date.now() - 4 * 24 * HOUR) / 1000) });
});
const receivers: Receiver[] = [];
afterEach(async () => {
  killAll();
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(async () => {
  await pc?.stop();
  tmp.cleanup();
});

/** One merchant; each order expires at the given time (made 30 minutes before it, by the ledger's clock). */
async function ordersExpiringAt(db: string, expiries: number[], notifyUrl?: string): Promise<Order[]> {
  const clock = { now: Math.min(...expiries) - 30 * MINUTE };
  const ledger = openLedger(db);
  try {
    const service = new LocalPaymentService(ledger, { now: () => clock.now, caller: { actor: 'test' }, allowPrivateCallbacks: true });
    const m = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0, orderLifetime: '30m' });
    const out: Order[] = [];
    for (const [i, at] of expiries.entries()) {
      clock.now = at - 30 * MINUTE;
      out.push(await service.createOrder({ oid: `o-${i}-${at}`, uid: `user-${i}`, amount: '5', mchId: m.merchant.mchId, ...(notifyUrl ? { notifyUrl } : {}) }));
    }
    return out;
  } finally {
    ledger.close();
  }
}

/** The next block is mined at `ms` (whole seconds, as blocks carry them). */
async function nextBlockAt(ms: number): Promise<void> {
  await pc.chain.provider.send('evm_setNextBlockTimestamp', [Math.floor(ms / 1000)]);
}

async function chainsConfig(confirmations = 3) {
  const head = await pc.chain.provider.getBlockNumber();
  return writeChainsConfig(tmp.dir, {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: pc.chain.rpcUrl, confirmations, pollInterval: 200, startBlock: head + 1 }],
    tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
  });
}

describe('late and held are judged by the block time', () => {
  it('after a watcher outage of two days, payments made while their order was open are credited, not late and not held; truly late and held ones still are', async () => {
    const db = join(tmp.dir, 'outage.db');
    const now = Date.now();
    const chains = await chainsConfig();
    // Expiries: two days ago, an hour ago, three hours ago, two and a half days ago.
    const [outage, onTime, late, held] = await ordersExpiringAt(db, [now - 48 * HOUR, now - HOUR, now - 3 * HOUR, now - 60 * HOUR]);
    // Mined in time order: outage 10 minutes before its expiry, held 30 h after its expiry,
    // late 1 h after its expiry, on time 5 minutes before its expiry.
    await nextBlockAt(now - 48 * HOUR - 10 * MINUTE);
    const outageTx = await pay(pc.usdt, outage!.addresses.EVM!, 5_000_000n);
    await nextBlockAt(now - 30 * HOUR);
    const heldTx = await pay(pc.usdt, held!.addresses.EVM!, 5_000_000n);
    await nextBlockAt(now - 2 * HOUR);
    await pay(pc.usdt, late!.addresses.EVM!, 5_000_000n);
    await nextBlockAt(now - HOUR - 5 * MINUTE);
    await pay(pc.usdt, onTime!.addresses.EVM!, 5_000_000n);
    await pc.chain.mine(3);

    // The watcher was down all that time: serve starts now and counts everything at once.
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    const status = async (id: string) => (await httpJson(srv.url, `/api/v1/order/${id}/status`)).json?.data;
    for (const o of [outage!, onTime!, late!]) await until(`order ${o.id} PAID`, async () => (await status(o.id)) === 'PAID');
    await srv.waitFor(new RegExp(`payment tx ${heldTx} log \\d+ of 5 to order ${held!.id} came more than 24 h after it expired: held`));

    await withService(db, async (s) => {
      expect(await s.getOrder(outage!.id)).toMatchObject({ status: 'PAID', late: false, paidAmount: '5', payments: [{ txHash: outageTx, late: false }] });
      expect(await s.balance('user-0')).toMatchObject({ available: '5' });
      expect(await s.getOrder(onTime!.id)).toMatchObject({ status: 'PAID', late: false, payments: [{ late: false }] });
      expect(await s.getOrder(late!.id)).toMatchObject({ status: 'PAID', late: true, payments: [{ late: true }] });
      expect(await s.getOrderStatus(held!.id)).toBe('EXPIRED');
      expect(await s.balance('user-3')).toMatchObject({ available: '0' });
      expect((await s.heldPayments()).map((p) => [p.orderId, p.txHash])).toEqual([[held!.id, heldTx]]);
      const recorded = (await s.log({ orderId: outage!.id })).find((e) => e.action === 'order.payment_recorded');
      expect(recorded).toMatchObject({ actor: 'chain:31337', detail: expect.objectContaining({ late: false }) });
    });
    const check = await runCli(['ledger', 'check', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    expect(check.code, check.stderr).toBe(0);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('a payment mined before the order expired and confirmed after it is not late', async () => {
    const db = join(tmp.dir, 'ontime.db');
    const chains = await chainsConfig(3);
    const expiredAt = Date.now() + 6_000;
    const [o] = await ordersExpiringAt(db, [expiredAt]);
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    await nextBlockAt(Date.now());
    await pay(pc.usdt, o!.addresses.EVM!, 5_000_000n);
    await until('seen', async () => /1 of 3 confirmations/.test((await runCli(['order', 'show', o!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));
    // The confirmations complete only after the order expired.
    while (Date.now() <= expiredAt + 1_000) await new Promise((r) => setTimeout(r, 200));
    await pc.chain.mine(2);
    await until('PAID', async () => (await httpJson(srv.url, `/api/v1/order/${o!.id}/status`)).json?.data === 'PAID');
    await withService(db, async (s) => {
      expect(await s.getOrder(o!.id)).toMatchObject({ status: 'PAID', late: false, paidAmount: '5', payments: [{ late: false }] });
      expect(await s.balance('user-0')).toMatchObject({ available: '5' });
    });
    const check = await runCli(['ledger', 'check', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    expect(check.code, check.stderr).toBe(0);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('order.expired waits while a payment made before the expiry is confirming, or not yet read by the watcher; an unpaid order gets it once the watcher has read a block past its expiry', async () => {
    const db = join(tmp.dir, 'expired-event.db');
    const rec = await startReceiver();
    receivers.push(rec);
    const chains = await chainsConfig(4);
    const expiredAt = Date.now() + 8_000;
    // confirming: paid on time, seen before the expiry; unpaid: nothing; behind: paid on time,
    // its block reaching the node (and so the watcher) only after the expiry.
    const [confirming, unpaid, behind] = await ordersExpiringAt(db, [expiredAt, expiredAt, expiredAt], rec.url);
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains }, ['--allow-private-callbacks']);
    await srv.waitFor(/watching chain 31337/);
    await nextBlockAt(expiredAt - 5_000);
    await pay(pc.usdt, confirming!.addresses.EVM!, 5_000_000n);
    const show = (id: string) => runCli(['order', 'show', id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    await until('seen', async () => /1 of 4 confirmations/.test((await show(confirming!.id)).stdout));
    while (Date.now() <= expiredAt + 2_000) await new Promise((r) => setTimeout(r, 200));
    await nextBlockAt(expiredAt - 2_000);
    await pay(pc.usdt, behind!.addresses.EVM!, 5_000_000n);
    await until('behind seen', async () => /1 of 4 confirmations/.test((await show(behind!.id)).stdout));
    // The chain's newest block is stamped before the expiry: nobody is told yet.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(rec.received).toEqual([]);
    // A block stamped after the expiry: the unpaid order is told; the two paid on time are not
    // told EXPIRED while their payments confirm.
    await nextBlockAt(Date.now());
    await pc.chain.mine(1);
    const [first] = await rec.waitFor(1, 15_000);
    expect(first!.body).toMatchObject({ event: 'order.expired', id: unpaid!.id });
    await new Promise((r) => setTimeout(r, 2_500));
    expect(rec.received.map((r) => [r.body.event, r.body.id])).toEqual([['order.expired', unpaid!.id]]);
    await pc.chain.mine(2);
    const all = await rec.waitFor(3, 15_000);
    const events = all.map((r) => [r.body.event, r.body.id, r.body.late]);
    expect(events).toHaveLength(3);
    expect(events).toEqual(expect.arrayContaining([['order.paid', confirming!.id, false], ['order.paid', behind!.id, false]]));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(rec.received).toHaveLength(3);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });
});
