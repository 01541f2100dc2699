import { describe, expect, it } from 'vitest';
import { createRegistry, type Registry, type RegistryConfig } from '../../../src/chains/registry.js';
import { ChainWatcher } from '../../../src/chains/watch/watcher.js';
import { onChainPayments } from '../../../src/chains/watch/seen.js';
import { recordPayment } from '../../../src/store/payments.js';
import { LocalPaymentService } from '../../../src/store/local-service.js';
import { USDT, addOtherMerchant, addShopMerchant, order, refused, useHarness, type Harness } from '../../helpers/service.js';
import { SimChain } from './sim-chain.js';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../../src/main.js';

// Found by an outside review (session of 2026-11-24): one transfer credited twice, by hand and
// then again when the operator credited the payment the watcher had refused.

const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const CONFIG: RegistryConfig = {
  chains: [{ chainId: 31337, chainType: 'EVM', name: 'Local', confirmations: 3, rpcUrl: 'http://127.0.0.1:1' }],
  tokens: [{ chainId: 31337, address: TOKEN, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
};
const registry: Registry = createRegistry(CONFIG);

function watcherFor(h: Harness, sim: SimChain) {
  const chain = registry.chain('31337');
  const lines: string[] = [];
  const w = new ChainWatcher({
    chain: { ...chain, startBlock: 0 }, tokens: registry.tokens(), rpc: sim.client(), ledger: h.ledger,
    record: recordPayment, holder: 'test-holder', now: () => h.clock.now, log: (l) => lines.push(l),
  });
  return { w, lines };
}

async function untilCaughtUp(w: ChainWatcher) {
  for (let i = 0; i < 100; i++) if ((await w.tick()).caughtUp) return;
  throw new Error('never caught up');
}

const HASH = `0x${'ab'.repeat(32)}`;

/**
 * These records by hand come before the chain has their transfer (or its depth): on a chain with
 * an rpcUrl that is a record without reading the chain, said so (src/store/payment-on-chain.ts).
 */
const BY_HAND = 'the payer sent the hash; recorded before the chain shows it';

/** The harness's ledger, served with the test chain in its registry (as serve and the CLI with its chains config). */
const withChain = (h: Harness) => new LocalPaymentService(h.ledger, { now: () => h.clock.now, caller: { actor: 'tester' }, registry });

describe('a payment recorded by hand, then found on chain', () => {
  const h = useHarness();

  it('is that payment: counted once, not refused, and never credited a second time', async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const o = await order(service, { uid: 'payer', amount: '10' });
    // The payer sends their hash; the operator records it before the block is deep enough.
    await service.markPaid({ id: o.id, txHash: HASH, chainId: '31337', unverified: BY_HAND });
    expect(await service.balance('payer')).toMatchObject({ available: '10' });
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: o.addresses.EVM!, value: 10_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w, lines } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(onChainPayments(ledger.db, registry, o.id)).toMatchObject([{ status: 'counted', txHash: HASH }]);
    expect(lines.join('\n')).not.toMatch(/refused/);
    expect(await service.balance('payer')).toMatchObject({ available: '10' });
    await refused(service.creditHeldPayment({ orderId: o.id, txHash: HASH, reason: 'payer asked' }), 'conflict', 'not held');
    expect(await service.balance('payer')).toMatchObject({ available: '10' });
    expect(await service.getOrder(o.id)).toMatchObject({ status: 'PAID', paidAmount: '10' });
  });

  it('when the chain moved another amount than was recorded, nothing is credited now and serve says the difference', async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const o = await order(service, { uid: 'payer', amount: '10' });
    await service.markPaid({ id: o.id, txHash: HASH });
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: o.addresses.EVM!, value: 12_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w, lines } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(onChainPayments(ledger.db, registry, o.id)).toMatchObject([{ status: 'counted' }]);
    expect(lines.join('\n')).toContain(`was recorded by hand as 10; the chain moved 12: settle the difference with cryptopay balance adjust`);
    expect(await service.balance('payer')).toMatchObject({ available: '10' });
    const entry = ledger.sqlite.prepare("select detail from audit_log where action = 'order.payment_seen_on_chain'").get() as { detail: string };
    expect(JSON.parse(entry.detail)).toMatchObject({ recordedByHand: '10', onChain: '12', difference: '2' });
  });

  it('a payment refused because another order recorded its hash by hand is not credited by hand a second time', async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const wrong = await order(service, { uid: 'a', amount: '10' });
    const right = await order(service, { uid: 'b', amount: '10' });
    // The operator typed the hash against the wrong order.
    await service.markPaid({ id: wrong.id, txHash: HASH });
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: right.addresses.EVM!, value: 10_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(onChainPayments(ledger.db, registry, right.id)).toMatchObject([{ status: 'refused' }]);
    await refused(
      service.creditHeldPayment({ orderId: right.id, txHash: HASH, reason: 'r' }),
      'conflict',
      'is already credited as a payment in this ledger',
    );
    expect(await service.balance('b').catch(() => ({ available: '0' }))).toMatchObject({ available: '0' });
    expect(await service.balance('a')).toMatchObject({ available: '10' });
  });
});

describe('a payment into a fully refunded order', () => {
  const h = useHarness();

  it('makes it PAID again only when what arrived since the refunds covers the amount: dust does not', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { uid: 'u', amount: '10', notifyUrl: 'https://shop.example/cb' });
    await service.markPaid({ id: o.id, txHash: `0x${'01'.repeat(32)}` });
    await service.refund({ id: o.id, amount: '10' });
    expect(await service.getOrderStatus(o.id)).toBe('REFUNDED');
    const outbox = () => ledger.sqlite.prepare("select count(*) as n from callbacks where event = 'order.paid'").get() as { n: number | bigint };
    const paidEvents = Number(outbox().n);
    await service.markPaid({ id: o.id, txHash: `0x${'02'.repeat(32)}`, amount: '0.000001' });
    // The dust is the user's (credited), but the order is not paid again and no order.paid is sent.
    expect(await service.getOrderStatus(o.id)).toBe('REFUNDED');
    expect(Number(outbox().n)).toBe(paidEvents);
    expect(await service.balance('u')).toMatchObject({ available: '0.000001' });
    // A whole new payment of the amount is: the payer paid again.
    await service.markPaid({ id: o.id, txHash: `0x${'03'.repeat(32)}`, amount: '10' });
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    expect(Number(outbox().n)).toBe(paidEvents + 1);
    expect(await service.check()).toEqual([]);
  });

  it('a partly refunded order stays PAID (decisions §5) and its ledger check holds', async () => {
    const { service } = h();
    await addShopMerchant(service);
    const o = await order(service, { uid: 'u', amount: '10' });
    await service.markPaid({ id: o.id, txHash: `0x${'04'.repeat(32)}` });
    await service.refund({ id: o.id, amount: '4' });
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    await service.markPaid({ id: o.id, txHash: `0x${'05'.repeat(32)}`, amount: '0.000001' });
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    expect(await service.check()).toEqual([]);
  });
});

describe("another merchant's unverified payout naming a payment's transaction (an outside review)", () => {
  const h = useHarness();

  it('does not keep the watcher from counting that payment', async () => {
    const { ledger } = h();
    const service = withChain(h());
    const shop = (await addShopMerchant(service)).mchId;
    const victim = await order(service, { mchId: shop, uid: 'payer', amount: '10' });
    // The squatter sees the payment in the mempool and confirms a dust payout with its hash on a
    // chain nobody verifies (BNB Smart Chain has no rpcUrl here).
    const squatter = await addOtherMerchant(service, 'Squatter');
    await service.adjustBalance({ mchId: squatter.mchId, uid: 's', amount: '+0.000001', reason: 'seed' });
    const w = await service.applyWithdrawal({ mchId: squatter.mchId, uid: 's', amount: '0.000001', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 56, chainType: 'EVM', token: USDT.BSC });
    expect(await service.confirmWithdrawal({ mchId: squatter.mchId, logId: w.id, txHash: HASH, blockNumber: 1 })).toMatchObject({ status: 'CONFIRMED' });
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: victim.addresses.EVM!, value: 10_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w: watcher, lines } = watcherFor(h(), sim);
    await untilCaughtUp(watcher);
    expect(onChainPayments(ledger.db, registry, victim.id)).toMatchObject([{ status: 'counted' }]);
    expect(lines.join('\n')).not.toMatch(/refused/);
    expect(await service.getOrderStatus(victim.id)).toBe('PAID');
    expect(await service.balance('payer', { mchId: shop })).toMatchObject({ available: '10' });
  });
});

// A code review of the match above found these; each failed before its fix.
describe('a payment recorded by hand whose transaction has more Transfer logs', () => {
  const h = useHarness();
  const mineAndWatch = async (transfers: { to: string; value: bigint }[]) => {
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine(transfers.map((t) => ({ token: TOKEN, ...t, hash: HASH })));
    sim.mineEmpty(3);
    const { w, lines } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    return lines;
  };

  it("its log to another order is that order's payment: counted and credited, nothing refused", async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const a = await order(service, { uid: 'ua', amount: '10' });
    const b = await order(service, { uid: 'ub', amount: '5' });
    await service.markPaid({ id: a.id, txHash: HASH, chainId: '31337', unverified: BY_HAND });
    const lines = await mineAndWatch([{ to: a.addresses.EVM!, value: 10_000_000n }, { to: b.addresses.EVM!, value: 5_000_000n }]);
    expect(lines.join('\n')).not.toMatch(/refused|difference/);
    expect(onChainPayments(ledger.db, registry, b.id)).toMatchObject([{ status: 'counted' }]);
    expect(await service.getOrder(b.id)).toMatchObject({ status: 'PAID', paidAmount: '5' });
    expect(await service.balance('ua')).toMatchObject({ available: '10' });
  });

  it('its logs to the same order are all covered by the record, compared with what they moved together: no false difference', async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const a = await order(service, { uid: 'ua', amount: '15' });
    await service.markPaid({ id: a.id, txHash: HASH, chainId: '31337', unverified: BY_HAND });
    const lines = await mineAndWatch([{ to: a.addresses.EVM!, value: 10_000_000n }, { to: a.addresses.EVM!, value: 5_000_000n }]);
    expect(lines.join('\n')).not.toMatch(/refused|difference/);
    expect(onChainPayments(ledger.db, registry, a.id).map((p) => p.status)).toEqual(['counted', 'counted']);
    const entry = ledger.sqlite.prepare("select detail from audit_log where action = 'order.payment_seen_on_chain'").get() as { detail: string };
    expect(JSON.parse(entry.detail)).toMatchObject({ logs: [0, 1], recordedByHand: '15', onChain: '15' });
    expect(JSON.parse(entry.detail)).not.toHaveProperty('difference');
    expect(await service.balance('ua')).toMatchObject({ available: '15' });
  });

  it("a refused log of a merchant's order, its transaction being that merchant's own payout, may be credited by hand though another log paid another merchant's order", async () => {
    const { ledger } = h();
    const service = withChain(h());
    const m1 = (await addShopMerchant(service, 'M1')).mchId;
    const m2 = (await addOtherMerchant(service, 'M2')).mchId;
    await service.adjustBalance({ mchId: m2, uid: 'u1', amount: '+1', reason: 'seed' });
    const wd = await service.applyWithdrawal({ mchId: m2, uid: 'u1', amount: '1', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 31337, chainType: 'EVM', token: TOKEN });
    await service.confirmWithdrawalUnverified({ mchId: m2, logId: wd.id, txHash: HASH, blockNumber: 6 }, 'exchange batch payout');
    const o1 = await service.createOrder({ mchId: m1, oid: 'o1', uid: 'p1', amount: '10' });
    const o2 = await service.createOrder({ mchId: m2, oid: 'o2', uid: 'p2', amount: '7' });
    await mineAndWatch([{ to: o1.addresses.EVM!, value: 10_000_000n }, { to: o2.addresses.EVM!, value: 7_000_000n }]);
    expect(onChainPayments(ledger.db, registry, o1.id)).toMatchObject([{ status: 'counted' }]);
    expect(onChainPayments(ledger.db, registry, o2.id)).toMatchObject([{ status: 'refused' }]);
    await service.creditHeldPayment({ orderId: o2.id, txHash: HASH, reason: 'the payer paid' });
    expect(await service.balance('p2', { mchId: m2 })).toMatchObject({ available: '7' });
    // The audit entry on M2's payout names nobody: its actor is the ledger, not M1's API key.
    const entry = ledger.sqlite.prepare("select actor from audit_log where action = 'withdrawal.transaction_recorded_elsewhere'").get() as { actor: string };
    expect(entry.actor).toBe('ledger');
  });

  it('a held (late) payment recorded by hand before: credit-held matches it, credits nothing, audits no credit, and says so', async () => {
    const { ledger } = h();
    const service = withChain(h());
    await addShopMerchant(service);
    const a = await order(service, { uid: 'ua', amount: '10' });
    await service.markPaid({ id: a.id, txHash: HASH, amount: '3' });
    h().clock.now += 3 * 86_400_000;
    await mineAndWatch([{ to: a.addresses.EVM!, value: 10_000_000n }]);
    expect(onChainPayments(ledger.db, registry, a.id)).toMatchObject([{ status: 'held' }]);
    // The operator's command says what happened (the CLI, in this process, on this ledger).
    const chains = join(dirname(h().file), 'chains.json');
    writeFileSync(chains, JSON.stringify(CONFIG));
    let stderr = '';
    const code = await main(['order', 'credit-held', a.id, '--tx-hash', HASH, '--reason', 'payer paid late', '--yes', '--db', h().file], {
      env: { CRYPTOPAY_CHAINS: chains, NO_COLOR: '1' },
      io: { stdout: { write: () => true }, stderr: { write: (t: string) => ((stderr += t), true) }, stdin: new PassThrough(), isTTY: false, interactive: false },
      now: () => h().clock.now,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: `note: tx ${HASH} was recorded by hand for this order as 3: matched to that record, nothing was credited now; the chain moved 10: settle the difference with cryptopay balance adjust\n` });
    const after = await service.getOrder(a.id);
    expect(after).toMatchObject({ paidAmount: '3' });
    expect(await service.balance('ua')).toMatchObject({ available: '3' });
    expect(Number((ledger.sqlite.prepare("select count(*) as n from audit_log where action = 'order.held_payment_credited'").get() as { n: number | bigint }).n)).toBe(0);
    expect(onChainPayments(ledger.db, registry, a.id)).toMatchObject([{ status: 'counted' }]);
  });
});

/** A simulated chain that also answers a transaction's sender and nonce, so that confirm verifies on it. */
class VerifyingSim extends SimChain {
  override handle(method: string, params: unknown[]): unknown {
    if (method === 'eth_getTransactionByHash') {
      const r = super.handle('eth_getTransactionReceipt', params) as { blockNumber: string } | null;
      return r && { hash: params[0], from: '0x2222222222222222222222222222222222222222', nonce: '0x1', blockNumber: r.blockNumber };
    }
    if (method === 'eth_getTransactionCount') return '0x0';
    return super.handle(method, params);
  }
}
const verifyingService = (h: Harness, sim: SimChain) =>
  new LocalPaymentService(h.ledger, { now: () => h.clock.now, caller: { actor: 'tester' }, registry, rpcFor: () => sim.client() });

// A second outside review, of the rules above; each failed before its fix.
describe('a payout verified on chain holds its transaction within its merchant only', () => {
  const h = useHarness();
  const Y = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

  it("another merchant's verified payout to the same payee cannot keep a merchant from confirming its own real payout", async () => {
    const sim = new VerifyingSim(5, () => h().clock.now);
    const service = verifyingService(h(), sim);
    const victim = (await addShopMerchant(service)).mchId;
    const attacker = (await addOtherMerchant(service, 'Attacker')).mchId;
    await service.adjustBalance({ mchId: victim, uid: 'vu', amount: '+10', reason: 'customer balance' });
    await service.adjustBalance({ mchId: attacker, uid: 'sock', amount: '+10', reason: 'self-funded' });
    const wv = await service.applyWithdrawal({ mchId: victim, uid: 'vu', amount: '10', to: Y, chainId: '31337', chainType: 'EVM', token: TOKEN });
    const payout = `0x${'c1'.repeat(32)}`;
    const block = sim.mine([{ token: TOKEN, to: Y, value: 10_000_000n, hash: payout }]);
    // The attacker sees it, applies the same amount to the same payee and confirms with it: the
    // chain check (token, payee, amount) matches.
    const wa = await service.applyWithdrawal({ mchId: attacker, uid: 'sock', amount: '10', to: Y, chainId: '31337', chainType: 'EVM', token: TOKEN });
    expect(await service.confirmWithdrawal({ mchId: attacker, logId: wa.id, txHash: payout, blockNumber: block })).toMatchObject({ status: 'PENDING', txHash: payout });
    // The victim's confirm of its own payout is accepted all the same.
    expect(await service.confirmWithdrawal({ mchId: victim, logId: wv.id, txHash: payout, blockNumber: block })).toMatchObject({ status: 'PENDING', txHash: payout });
    sim.mineEmpty(3);
    const { w } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(await service.getWithdrawal(wv.id, victim)).toMatchObject({ status: 'CONFIRMED' });
    expect(await service.balance('vu', { mchId: victim })).toMatchObject({ available: '0', held: '0' });
  });

  it("nor keep a batch transaction's payment into another merchant's order from being counted", async () => {
    const sim = new VerifyingSim(5, () => h().clock.now);
    const service = verifyingService(h(), sim);
    const victim = (await addShopMerchant(service)).mchId;
    const attacker = (await addOtherMerchant(service, 'Attacker')).mchId;
    const o = await order(service, { mchId: victim, uid: 'payer', amount: '10' });
    await service.adjustBalance({ mchId: attacker, uid: 'sock', amount: '+1', reason: 'self-funded' });
    const batch = `0x${'c2'.repeat(32)}`;
    const Y2 = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
    const block = sim.mine([{ token: TOKEN, to: o.addresses.EVM!, value: 10_000_000n, hash: batch }, { token: TOKEN, to: Y2, value: 1_000_000n, hash: batch }]);
    const wa = await service.applyWithdrawal({ mchId: attacker, uid: 'sock', amount: '1', to: Y2, chainId: '31337', chainType: 'EVM', token: TOKEN });
    await service.confirmWithdrawal({ mchId: attacker, logId: wa.id, txHash: batch, blockNumber: block });
    sim.mineEmpty(3);
    const { w, lines } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(lines.join('\n')).not.toMatch(/refused/);
    expect(await service.getOrder(o.id)).toMatchObject({ status: 'PAID', paidAmount: '10' });
    // The ledger's operator is told, not the attacker: the entry has no merchant.
    const entries = h().ledger.sqlite.prepare("select merchant_id from audit_log where action = 'withdrawal.transaction_recorded_elsewhere'").all();
    expect(entries).toEqual([{ merchant_id: null }]);
    expect((await service.log({ mchId: attacker })).map((e) => e.action)).not.toContain('withdrawal.transaction_recorded_elsewhere');
  });
});

describe('a batch transaction recorded by hand for one order, whose log to another order comes first', () => {
  const h = useHarness();

  it("the other order's payment is counted and makes it PAID", async () => {
    const service = withChain(h());
    const shopA = (await addShopMerchant(service)).mchId;
    const shopB = (await addOtherMerchant(service, 'B')).mchId;
    const a = await order(service, { mchId: shopA, uid: 'ua', amount: '10' });
    const b = await order(service, { mchId: shopB, uid: 'ub', amount: '5' });
    await service.markPaid({ id: a.id, txHash: HASH, chainId: '31337', unverified: BY_HAND });
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: b.addresses.EVM!, value: 5_000_000n, hash: HASH }, { token: TOKEN, to: a.addresses.EVM!, value: 10_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w, lines } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(lines.join('\n')).not.toMatch(/refused/);
    expect(await service.getOrder(b.id)).toMatchObject({ status: 'PAID', paidAmount: '5' });
    expect(await service.getOrder(a.id)).toMatchObject({ status: 'PAID', paidAmount: '10' });
    expect(onChainPayments(h().ledger.db, registry, a.id)).toMatchObject([{ status: 'counted' }]);
  });
});

describe('a held payment and a record by hand of the same transfer', () => {
  const h = useHarness();
  const late = async () => {
    const service = withChain(h());
    await addShopMerchant(service);
    const o = await order(service, { uid: 'payer', amount: '10' });
    h().clock.now += 3 * 86_400_000;
    const sim = new SimChain(5, () => h().clock.now);
    sim.mine([{ token: TOKEN, to: o.addresses.EVM!, value: 10_000_000n, hash: HASH }]);
    sim.mineEmpty(3);
    const { w } = watcherFor(h(), sim);
    await untilCaughtUp(w);
    expect(onChainPayments(h().ledger.db, registry, o.id)).toMatchObject([{ status: 'held' }]);
    return { service, o };
  };

  it('recorded by hand, it cannot be recorded as sent back (the user has the money)', async () => {
    const { service, o } = await late();
    await service.markPaid({ id: o.id, txHash: HASH, chainId: '31337', unverified: BY_HAND });
    await refused(service.returnHeldPayment({ orderId: o.id, txHash: HASH, reason: 'too late, sent back' }), 'conflict', 'cannot be recorded as sent back; decide it with cryptopay order credit-held');
    expect(onChainPayments(h().ledger.db, registry, o.id)).toMatchObject([{ status: 'held' }]);
  });

  it('recorded as sent back, it is not credited by hand afterwards', async () => {
    const { service, o } = await late();
    await service.returnHeldPayment({ orderId: o.id, txHash: HASH, reason: 'too late, sent back' });
    await refused(service.markPaid({ id: o.id, txHash: HASH, chainId: '31337', unverified: BY_HAND }), 'conflict', 'was seen on chain and recorded as sent back to its payer');
    expect(await service.getOrder(o.id)).toMatchObject({ paidAmount: '0' });
    // Nor for another order: the transfer's key is held.
    const other = await order(service, { uid: 'someone', amount: '10' });
    await refused(service.markPaid({ id: other.id, txHash: HASH }), 'conflict', 'is already recorded in this ledger');
  });
});
