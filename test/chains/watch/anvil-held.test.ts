import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../../../src/core/types.js';
import { openLedger } from '../../../src/store/db.js';
import { LocalPaymentService } from '../../../src/store/local-service.js';
import { runCli } from '../../helpers/cli.js';
import { httpJson, killAll, spawnServe, tempDir } from '../../server/helpers.js';
import { pay, startPayChain, until, writeChainsConfig, type PayChain } from './anvil-support.js';

/**
 * Late and held payments end to end (decisions §6b): a real anvil, a real `serve` watching it
 * (run `npm run build` first), and the operator's commands on the same ledger file. The orders
 * are made by the ledger with its clock set back, so that by the real clock of serve one expired
 * an hour ago (a payment is late) and two expired two days ago (a payment is held).
 */

const HOUR = 3_600_000;
const tmp = tempDir();
let pc: PayChain;

beforeAll(async () => {
  pc = await startPayChain();
});
afterEach(() => killAll());
afterAll(async () => {
  await pc?.stop();
  tmp.cleanup();
});

/** One merchant; each order made at its own time in the past, with a 30-minute lifetime. */
async function expiredOrders(db: string, ages: number[]): Promise<Order[]> {
  const clock = { now: 0 };
  const ledger = openLedger(db);
  try {
    const service = new LocalPaymentService(ledger, { now: () => clock.now, caller: { actor: 'test' } });
    clock.now = Date.now() - Math.max(...ages);
    const m = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0, orderLifetime: '30m' });
    const out: Order[] = [];
    for (const [i, age] of ages.entries()) {
      clock.now = Date.now() - age;
      out.push(await service.createOrder({ oid: `o-${i}`, uid: `user-${i}`, amount: '5', mchId: m.merchant.mchId }));
    }
    return out;
  } finally {
    ledger.close();
  }
}

describe('payments after expiry, on a real chain', () => {
  it('late within 24 h is credited and marked late; later is held until an operator credits it or records it returned', async () => {
    const db = join(tmp.dir, 'held.db');
    const head = await pc.chain.provider.getBlockNumber();
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: pc.chain.rpcUrl, confirmations: 1, pollInterval: 200, startBlock: head }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    const env = { CRYPTOPAY_CHAINS: chains };
    const cli = (args: string[]) => runCli([...args, '--db', db], { env });
    const json = async <T>(args: string[]): Promise<T> => {
      const r = await cli(['--json', ...args]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as T;
    };

    const [late, held, back] = await expiredOrders(db, [HOUR, 48 * HOUR, 48 * HOUR]);
    const srv = await spawnServe(db, env);
    await srv.waitFor(/watching chain 31337 \(Anvil\)/);
    const lateTx = await pay(pc.usdt, late!.addresses.EVM!, 5_000_000n);
    const heldTx = await pay(pc.usdt, held!.addresses.EVM!, 5_000_000n);
    const backTx = await pay(pc.usdt, back!.addresses.EVM!, 4_000_000n);

    const status = async (id: string) => (await httpJson(srv.url, `/api/v1/order/${id}/status`)).json?.data;
    await until('the late payment counted', async () => (await status(late!.id)) === 'PAID');
    await srv.waitFor(new RegExp(`payment tx ${backTx} log \\d+ of 4 to order ${back!.id} came more than 24 h after it expired: held`));
    expect(srv.stderr()).toContain(`payment tx ${heldTx} log`);

    expect(await json(['order', 'show', late!.id])).toMatchObject({ status: 'PAID', late: true, paidAmount: '5', payments: [{ txHash: lateTx, late: true }] });
    expect(await json(['balance', 'user-0'])).toMatchObject({ available: '5' });
    // Held: recorded, not credited; the order still reads EXPIRED and the user has nothing.
    for (const o of [held!, back!]) {
      expect(await status(o.id)).toBe('EXPIRED');
      expect(await json(['order', 'show', o.id])).toMatchObject({ status: 'EXPIRED', paidAmount: '0', payments: [], onChain: [{ status: 'held' }] });
    }
    expect(await json(['balance', 'user-1'])).toMatchObject({ available: '0' });
    const shown = await cli(['order', 'show', held!.id]);
    expect(shown.stdout).toMatch(new RegExp(`held +5 tx ${heldTx} log \\d+ from 0x[0-9a-fA-F]{40}: more than 24 h after the order expired, not credited`));
    const list = await json<{ orderId: string; txHash: string; amount: string; logIndex: number }[]>(['order', 'held']);
    expect(list.map((p) => [p.orderId, p.txHash, p.amount])).toEqual([
      [held!.id, heldTx, '5'],
      [back!.id, backTx, '4'],
    ]);
    const log = await json<{ action: string; actor: string }[]>(['log', '--order', held!.id]);
    expect(log).toContainEqual(expect.objectContaining({ action: 'order.payment_held', actor: 'chain:31337' }));

    // Without a terminal and without --yes, nothing happens; a missing reason is a usage error.
    const unconfirmed = await cli(['order', 'credit-held', held!.id, '--tx-hash', heldTx, '--reason', 'customer wrote in']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('needs confirmation');
    expect((await cli(['order', 'credit-held', held!.id, '--tx-hash', heldTx, '--yes'])).code).toBe(2);
    const wrongOrder = await cli(['order', 'credit-held', late!.id, '--tx-hash', heldTx, '--reason', 'x', '--yes']);
    expect(wrongOrder.code).toBe(1);
    expect(wrongOrder.stderr).toContain(`no payment in tx ${heldTx} to order ${late!.id} was seen on chain`);
    expect(await json(['balance', 'user-1'])).toMatchObject({ available: '0' });

    // Credited by hand: the user gets it, the order is PAID and late, by the operator, with the
    // reason. Named by its oid, as every other order command takes it (an operator review had
    // "Order not found" for an oid).
    const credited = await json(['order', 'credit-held', held!.oid, '--tx-hash', heldTx.toUpperCase().replace('0X', '0x'), '--reason', 'customer wrote in', '--yes', '--operator', 'alice']);
    expect(credited).toMatchObject({ status: 'PAID', late: true, paidAmount: '5', payments: [{ txHash: heldTx, late: true }] });
    expect(await status(held!.id)).toBe('PAID');
    expect(await json(['balance', 'user-1'])).toMatchObject({ available: '5' });
    expect(await json(['log', '--order', held!.id])).toContainEqual(
      expect.objectContaining({ action: 'order.held_payment_credited', actor: 'alice', detail: expect.objectContaining({ reason: 'customer wrote in', txHash: heldTx }) }),
    );
    // Decided once: crediting it again is refused and changes nothing.
    const again = await cli(['order', 'credit-held', held!.id, '--tx-hash', heldTx, '--reason', 'twice', '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is counted, not held: nothing was changed');
    expect(await json(['balance', 'user-1'])).toMatchObject({ available: '5' });

    // Sent back: nothing moves in the ledger; the return transaction is kept.
    const returnTx = `0x${'ab'.repeat(32)}`;
    const returned = await json(['order', 'return-held', back!.oid, '--tx-hash', backTx, '--return-tx', returnTx, '--reason', 'paid to an old order', '--yes']);
    expect(returned).toMatchObject({ orderId: back!.id, status: 'returned', amount: '4', returnTx });
    expect(await json(['order', 'show', back!.id])).toMatchObject({ status: 'EXPIRED', paidAmount: '0', onChain: [{ status: 'returned' }] });
    expect(await json(['balance', 'user-2'])).toMatchObject({ available: '0' });
    expect(await json(['log', '--order', back!.id])).toContainEqual(
      expect.objectContaining({ action: 'order.held_payment_returned', detail: expect.objectContaining({ returnTx, reason: 'paid to an old order' }) }),
    );
    expect(await json(['order', 'held'])).toEqual([]);

    expect((await cli(['ledger', 'check'])).code).toBe(0);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });
});
