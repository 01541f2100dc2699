import { describe, expect, it } from 'vitest';
import { signedEventBody } from '../../src/callbacks/event.js';
import { sampleEvent } from '../../src/callbacks/sample.js';
import { openLedger } from '../../src/store/db.js';
import { groupCommit } from '../../src/store/group-commit.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { recordPayment } from '../../src/store/payments.js';
import { expiryDue, sweepExpired } from '../../src/store/expiry-sweep.js';
import { checkCallback } from '../server/openapi-check.js';
import { MINUTE, T0, USDT, addShopMerchant, evmTx, order, paidOrder, refused, useHarness } from '../helpers/service.js';

/**
 * The outbox (decisions §9, issue #13 item 2): each change that reports an event writes its
 * delivery row in its own transaction, with the fields the merchant is told.
 */
const HOOK = 'https://shop.example/cb?k=1';
const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

const rows = (service: LocalPaymentService) => service.listCallbacks({ limit: 1000 });
const payloads = async (service: LocalPaymentService) =>
  Promise.all((await rows(service)).reverse().map(async (c) => (await service.showCallback(c.id)).payload));

describe('events written with the change', () => {
  const h = useHarness();

  it('a payment that pays the order writes one order.paid, with the paid amount, late flag, chain, token and hash', async () => {
    const { service, clock } = h();
    const m = await addShopMerchant(service);
    const o = await order(service, { amount: '10', notifyUrl: HOOK });
    await service.markPaid({ id: o.id, txHash: evmTx(1), amount: '4', chainId: '1', token: USDT.ETH });
    expect(await rows(service)).toEqual([]); // underpaid: still PENDING_PAY, nothing to say yet
    clock.now = T0 + MINUTE;
    await service.markPaid({ id: o.id, txHash: evmTx(2), amount: '6.5', chainId: '1', token: USDT.ETH });
    const [c] = await rows(service);
    expect(c).toMatchObject({ event: 'order.paid', mchId: m.mchId, subject: `order:${o.id}`, url: HOOK, status: 'pending', attempts: 0, nextAttemptAt: T0 + MINUTE });
    expect((await service.showCallback(c!.id)).payload).toStrictEqual({
      event: 'order.paid', eventId: c!.id, id: o.id, oid: o.oid, uid: 'u1', amount: '10', paidAmount: '10.5', asset: 'USDT', status: 'PAID',
      late: false, paidAt: T0 + MINUTE, txHash: evmTx(2), chainType: 'EVM', chainId: '1', token: USDT.ETH,
    });
    // A further payment into a paid order changes no status: no second event.
    await service.markPaid({ id: o.id, txHash: evmTx(3), amount: '1' });
    expect(await rows(service)).toHaveLength(1);
  });

  it('a late payment says so; an order without notifyUrl writes nothing', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const late = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    const quiet = await order(service, {});
    clock.now = T0 + 2 * MINUTE;
    await service.markPaid({ id: late.id, txHash: evmTx(10) });
    await service.markPaid({ id: quiet.id, txHash: evmTx(11) });
    expect(await payloads(service)).toEqual([expect.objectContaining({ event: 'order.paid', id: late.id, late: true, status: 'PAID' })]);
  });

  it('nothing is written when the change is refused or its transaction rolls back', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const a = await order(service, { notifyUrl: HOOK });
    const b = await order(service, { notifyUrl: HOOK });
    await service.markPaid({ id: a.id, txHash: evmTx(20) });
    // The same transaction again: refused, so no event for b.
    await refused(service.markPaid({ id: b.id, txHash: evmTx(20) }), 'conflict', 'is already recorded in this ledger');
    // The payment is recorded, then its transaction fails before commit (a crash, a later refusal):
    // the event goes with it.
    await expect(groupCommit(ledger.sqlite).submit(() => {
      recordPayment(ledger.db, { orderId: b.id, txHash: evmTx(21), logIndex: 0, amount: 10_000_000n, rawAmount: '10000000', chainType: 'EVM', chainId: '1', token: USDT.ETH, blockNumber: 5, blockHash: null, source: 'chain' }, { now: T0, actor: 'watcher' });
      throw new Error('crash after recording');
    })).rejects.toThrow('crash after recording');
    expect((await payloads(service)).map((p) => p.id)).toEqual([a.id]);
    expect(await service.getOrderStatus(b.id)).toBe('PENDING_PAY');
  });

  it('a payment found on chain (recordPayment, as the watcher calls it) writes order.paid in its transaction', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { notifyUrl: HOOK, amount: '10' });
    await groupCommit(ledger.sqlite).submit(() =>
      recordPayment(ledger.db, { orderId: o.id, txHash: evmTx(30), logIndex: 3, amount: 10_000_000n, rawAmount: '10000000', chainType: 'EVM', chainId: '1', token: USDT.ETH, blockNumber: 7, blockHash: null, source: 'chain' }, { now: T0, actor: 'watcher' }));
    expect(await payloads(service)).toEqual([expect.objectContaining({ event: 'order.paid', id: o.id, txHash: evmTx(30), chainId: '1', token: USDT.ETH })]);
  });

  it('each refund writes order.refunded: its amount, the total refunded and the order status', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '10', notifyUrl: HOOK });
    clock.now = T0 + MINUTE;
    const r1 = await service.refundWithId({ id: o.id, amount: '4', remark: 'part' });
    await service.refundWithId({ id: o.id, amount: '6' });
    const refunds = (await payloads(service)).filter((p) => p.event === 'order.refunded');
    expect(refunds).toStrictEqual([
      {
        event: 'order.refunded', eventId: expect.stringMatching(/^evt_/), id: o.id, oid: o.oid, uid: 'u1', amount: '4', orderAmount: '10', paidAmount: '10',
        asset: 'USDT', refundId: r1.refundId, refundedAmount: '4', status: 'PAID', remark: 'part', refundTime: T0 + MINUTE,
      },
      expect.objectContaining({ amount: '6', refundedAmount: '10', status: 'REFUNDED', remark: '' }),
    ]);
    // A refused refund writes nothing.
    await refused(service.refundWithId({ id: o.id, amount: '1' }), 'conflict', 'not Paid');
    expect((await rows(service)).filter((c) => c.event === 'order.refunded')).toHaveLength(2);
  });

  it('a payment into a refunded order makes it PAID again, and the merchant hears order.paid again', async () => {
    // Found by an attacker review: the order read PAID (the API, the page, the user's balance)
    // while the merchant, told only order.paid then order.refunded, still held it REFUNDED.
    const { service, clock } = h();
    await addShopMerchant(service);
    const o = await paidOrder(service, { amount: '2', notifyUrl: HOOK });
    await service.refundWithId({ id: o.id, amount: '2' });
    expect((await service.getOrder(o.id)).status).toBe('REFUNDED');
    clock.now = T0 + 2 * MINUTE;
    await service.markPaid({ id: o.id, txHash: evmTx(40), amount: '2', chainId: '1', token: USDT.ETH });
    expect((await service.getOrder(o.id)).status).toBe('PAID');
    const events = await payloads(service);
    expect(events.map((e) => e.event)).toEqual(['order.paid', 'order.refunded', 'order.paid']);
    expect(events[2]).toMatchObject({ id: o.id, status: 'PAID', paidAmount: '4', paidAt: T0 + 2 * MINUTE, txHash: evmTx(40), late: false });
    // Paid again into the PAID order: no status change, nothing more to say.
    await service.markPaid({ id: o.id, txHash: evmTx(41), amount: '1' });
    expect(await rows(service)).toHaveLength(3);
  });

  it('withdraw.confirmed and withdraw.rejected carry the withdrawal record, to the withdrawal notifyUrl', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await service.adjustBalance({ uid: 'alice', amount: '10', reason: 'funds' });
    const apply = { uid: 'alice', amount: '3', to: TO, chainId: 1, chainType: 'EVM' as const, token: USDT.ETH };
    const w1 = await service.applyWithdrawal({ ...apply, notifyUrl: 'https://shop.example/w' });
    const w2 = await service.applyWithdrawal({ ...apply, notifyUrl: 'https://shop.example/w' });
    const w3 = await service.applyWithdrawal(apply);
    const confirmed = await service.confirmWithdrawal({ logId: w1.id, txHash: evmTx(40), blockNumber: 9 });
    const rejected = await service.rejectWithdrawal({ id: w2.id, remark: 'no' });
    await service.rejectWithdrawal({ id: w3.id });
    const list = await rows(service);
    expect(list.map((c) => [c.event, c.url])).toEqual([['withdraw.rejected', 'https://shop.example/w'], ['withdraw.confirmed', 'https://shop.example/w']]);
    const p = await payloads(service);
    expect(p[0]).toStrictEqual({ event: 'withdraw.confirmed', eventId: list[1]!.id, ...confirmed });
    expect(p[1]).toStrictEqual({ event: 'withdraw.rejected', eventId: list[0]!.id, ...rejected });
  });
});

describe('order.expired: the sweep', () => {
  const h = useHarness();

  it('writes one order.expired per unpaid order with a notifyUrl once its expiry has passed, and never twice', async () => {
    const { service, ledger, clock } = h();
    await addShopMerchant(service);
    const expiring = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE, amount: '10' });
    await service.markPaid({ id: expiring.id, txHash: evmTx(50), amount: '2' }); // underpaid stays unpaid
    const paid = await paidOrder(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    await order(service, { expiredAt: T0 + MINUTE }); // no notifyUrl
    const later = await order(service, { notifyUrl: HOOK, expiredAt: T0 + 10 * MINUTE });
    const sweep = (now: number) => groupCommit(ledger.sqlite).submit(() => sweepExpired(ledger.db, now));
    expect(await sweep(T0 + MINUTE)).toBe(0); // not yet past
    expect(await sweep(T0 + MINUTE + 1)).toBe(1);
    expect(await sweep(T0 + MINUTE + 2)).toBe(0);
    // Another process's sweep (its own connection, a clock a little behind) writes it again? No.
    const other = openLedger(h().file);
    try {
      expect(await groupCommit(other.sqlite).submit(() => sweepExpired(other.db, T0 + MINUTE + 1))).toBe(0);
    } finally {
      other.close();
    }
    const expired = (await payloads(service)).filter((p) => p.event === 'order.expired');
    expect(expired).toStrictEqual([{
      event: 'order.expired', eventId: expect.stringMatching(/^evt_/), id: expiring.id, oid: expiring.oid, uid: 'u1', amount: '10', paidAmount: '2',
      asset: 'USDT', status: 'EXPIRED', expiredAt: T0 + MINUTE,
    }]);
    expect(expired.map((p) => p.id)).not.toContain(paid.id);
    clock.now = T0 + 11 * MINUTE;
    expect(await sweep(T0 + 11 * MINUTE)).toBe(1);
    expect((await payloads(service)).filter((p) => p.event === 'order.expired').map((p) => p.id)).toEqual([expiring.id, later.id]);
  });
});

describe('order.expired waits for the chains (docs/decisions.md, "order.expired waits for the chain")', () => {
  const h = useHarness();
  const HOUR = 60 * MINUTE;

  it('until every watched chain is read past the expiry, and while a payment stamped before it confirms; never longer than an hour', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const confirming = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE, amount: '10' });
    const unpaid = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    const stuck = await order(service, { notifyUrl: HOOK, expiredAt: T0 + 2 * MINUTE });
    const lateSeen = await order(service, { notifyUrl: HOOK, expiredAt: T0 + 2 * MINUTE });
    const sql = ledger.sqlite;
    const cursor = sql.prepare('insert into chain_cursors (chain_id, next_block, lease_holder, lease_expires_at, seen_through, head_at, updated_at) values (?, 10, ?, ?, ?, ?, 0)');
    const seen = sql.prepare("insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at) values ('1', ?, 0, 9, '0xb', ?, ?, 't', 'a', '1', 1000000, 'seen', 0)");
    // Chain 1, watched here, read up to 50 s; chain 56, watched by another process, read further;
    // chain 137, nobody's any more (its node was last read two hours ago), read long ago.
    cursor.run('1', null, null, T0 + 50_000, T0 + 55_000);
    cursor.run('56', 'other', T0 + 10 * HOUR, T0 + 10 * MINUTE, T0 + 10 * MINUTE);
    cursor.run('137', 'gone', T0 - 2 * HOUR, T0 - 3 * HOUR, T0 - 2 * HOUR);
    seen.run(evmTx(60), T0 + 30_000, confirming.id); // before its expiry: confirming
    seen.run(evmTx(61), T0 + 3 * MINUTE, lateSeen.id); // after its expiry: will be late, no reason to wait
    seen.run(evmTx(62), T0 + 90_000, stuck.id); // confirms never (the node is gone)
    const announced = async () => (await payloads(service)).filter((p) => p.event === 'order.expired').map((p) => p.id);
    const sweep = (now: number) => groupCommit(sql).submit(() => sweepExpired(ledger.db, now, { watched: ['1'] }));

    expect(await sweep(T0 + MINUTE + 5_000)).toBe(0); // chain 1 read only to 50 s
    sql.prepare("update chain_cursors set seen_through = ? where chain_id = '1'").run(T0 + 3 * MINUTE);
    expect(await sweep(T0 + 3 * MINUTE)).toBe(2);
    expect((await announced()).sort()).toEqual([lateSeen.id, unpaid.id].sort());
    // The two waiting are kept aside; the sweep's cursor moves on (it does not rescan from them each second).
    expect(sql.prepare('select order_id from expiry_holds order by order_id').pluck().all()).toEqual([confirming.id, stuck.id].sort());
    expect(Number(sql.prepare("select value from callback_cursors where name = 'expiry'").pluck().get())).toBe(T0 + 3 * MINUTE);
    // Nothing to do: the sender's read each second says so without taking the write lock.
    expect(expiryDue(ledger.db, T0 + 3 * MINUTE + 1_000, ['1'])).toBe(false);
    // The payment went away (a reorg dropped it): the order is told now.
    sql.prepare('delete from chain_payments where order_id = ?').run(confirming.id);
    expect(expiryDue(ledger.db, T0 + 3 * MINUTE + 1_000, ['1'])).toBe(true);
    expect(await sweep(T0 + 3 * MINUTE + 1_000)).toBe(1);
    expect(expiryDue(ledger.db, T0 + 3 * MINUTE + 1_000, ['1'])).toBe(false);
    expect(await announced()).toContain(confirming.id);
    // A reorg: how far chain 1 is read is unknown until its rescan; nothing new is told meanwhile.
    const after = await order(service, { notifyUrl: HOOK, expiredAt: T0 + 4 * MINUTE });
    sql.prepare("update chain_cursors set seen_through = null where chain_id = '1'").run();
    expect(await sweep(T0 + 5 * MINUTE)).toBe(0);
    // A chain this process is about to watch and has never read holds the sweep the same way.
    sql.prepare("update chain_cursors set seen_through = ? where chain_id = '1'").run(T0 + 5 * MINUTE);
    expect(await groupCommit(sql).submit(() => sweepExpired(ledger.db, T0 + 5 * MINUTE, { watched: ['1', '10'] }))).toBe(0);
    expect(await sweep(T0 + 5 * MINUTE)).toBe(1);
    expect(await announced()).toContain(after.id);
    // The stuck one waits an hour after its expiry at most, and is then told, once.
    expect(await sweep(T0 + 2 * MINUTE + HOUR - 1)).toBe(0);
    expect(expiryDue(ledger.db, T0 + 2 * MINUTE + HOUR - 1, ['1'])).toBe(false);
    expect(expiryDue(ledger.db, T0 + 2 * MINUTE + HOUR, ['1'])).toBe(true);
    expect(await sweep(T0 + 2 * MINUTE + HOUR)).toBe(1);
    expect(await sweep(T0 + 3 * HOUR)).toBe(0);
    expect((await announced()).sort()).toEqual([confirming.id, unpaid.id, stuck.id, lateSeen.id, after.id].sort());
    expect(Number(sql.prepare('select count(*) from expiry_holds').pluck().get())).toBe(0);
    sql.prepare('delete from chain_payments').run();
  });

  it('an order paid while it is held is never told EXPIRED, and no longer held', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE, amount: '10' });
    const sql = ledger.sqlite;
    sql.prepare("insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at) values ('1', ?, 0, 9, '0xb', ?, ?, 't', 'a', '1', 10000000, 'seen', 0)").run(evmTx(70), T0 + 30_000, o.id);
    const sweep = (now: number) => groupCommit(sql).submit(() => sweepExpired(ledger.db, now));
    expect(await sweep(T0 + 2 * MINUTE)).toBe(0);
    expect(Number(sql.prepare('select count(*) from expiry_holds').pluck().get())).toBe(1);
    sql.prepare('delete from chain_payments').run();
    await service.markPaid({ id: o.id, txHash: evmTx(71), amount: '10', chainId: '1', token: USDT.ETH });
    expect(expiryDue(ledger.db, T0 + 2 * MINUTE + 1)).toBe(true);
    expect(await sweep(T0 + 2 * MINUTE + 1)).toBe(0);
    expect(Number(sql.prepare('select count(*) from expiry_holds').pluck().get())).toBe(0);
    expect(expiryDue(ledger.db, T0 + 2 * MINUTE + 2)).toBe(false);
    expect((await payloads(service)).map((p) => p.event)).toEqual(['order.paid']);
  });

  it('a chain whose watcher stopped (a restart, its node down) still holds it for the hour after it last read the chain; one whose node never answered does not', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    const other = await order(service, { notifyUrl: HOOK, expiredAt: T0 + 2 * HOUR });
    const sql = ledger.sqlite;
    // Read up to 30 s by a `cryptopay watch` beside `serve --no-watch`, last at T0; then stopped
    // (lease given up), or its node down ever since (the errors keep updating the row).
    sql.prepare("insert into chain_cursors (chain_id, next_block, seen_through, head_at, last_error, updated_at) values ('1', 10, ?, ?, 'down', ?)").run(T0 + 30_000, T0, T0 + 3 * HOUR);
    // Configured here too, its node never answered: nothing of it was ever read.
    sql.prepare("insert into chain_cursors (chain_id, next_block, last_error, updated_at) values ('56', -1, 'refused', ?)").run(T0 + 3 * HOUR);
    const sweep = (now: number) => groupCommit(sql).submit(() => sweepExpired(ledger.db, now, { watched: ['1', '56'] }));
    expect(await sweep(T0 + 2 * MINUTE)).toBe(0);
    expect(await sweep(T0 + HOUR - 1)).toBe(0);
    expect(await sweep(T0 + HOUR)).toBe(1); // an hour after the chain was last read
    // Past that hour the chain is not waited for: an order expiring now is told at once.
    expect(await sweep(T0 + 2 * HOUR + 1)).toBe(1);
    expect((await payloads(service)).map((p) => [p.event, p.id])).toEqual([['order.expired', o.id], ['order.expired', other.id]]);
  });

  // serve's sender asks expiryDue every second on the event loop that answers the API: a
  // statement that reads every order there was the tail of create order in the bench (p99 15 -> 38 ms).
  it("neither the sender's check each second nor a sweep reads through the orders: each statement searches an index", async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    const sql = ledger.sqlite;
    sql.prepare("insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at) values ('1', ?, 0, 9, '0xb', ?, ?, 't', 'a', '1', 1000000, 'seen', 0)").run(evmTx(80), T0, o.id);
    const seen: string[] = [];
    const prepare = sql.prepare.bind(sql);
    sql.prepare = ((source: string) => {
      if (/\borders\b/.test(source) && /^\s*select/i.test(source)) seen.push(source);
      return prepare(source);
    }) as typeof sql.prepare;
    try {
      expiryDue(ledger.db, T0 + 2 * MINUTE);
      await groupCommit(sql).submit(() => sweepExpired(ledger.db, T0 + 2 * MINUTE));
      expect(Number(prepare('select count(*) from expiry_holds').pluck().get())).toBe(1);
      expiryDue(ledger.db, T0 + 3 * MINUTE);
      await groupCommit(sql).submit(() => sweepExpired(ledger.db, T0 + 3 * MINUTE));
    } finally {
      sql.prepare = prepare;
      prepare('delete from chain_payments').run();
    }
    expect(seen.length).toBeGreaterThan(3);
    for (const source of new Set(seen)) {
      const params = (source.match(/\?/g) ?? []).map(() => 0);
      const plan = (prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      expect({ source, scans: plan.filter((d) => /^SCAN (orders|"orders")\b/.test(d)) }).toEqual({ source, scans: [] });
    }
  });

  it('without a watched chain (payments recorded by hand), an order is told at its expiry, as before', async () => {
    const { service, ledger } = h();
    await addShopMerchant(service);
    const o = await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    expect(await groupCommit(ledger.sqlite).submit(() => sweepExpired(ledger.db, T0 + MINUTE + 1))).toBe(1);
    expect((await payloads(service)).map((p) => [p.event, p.id])).toEqual([['order.expired', o.id]]);
  });
});

describe('a notifyUrl that names an inward address', () => {
  const h = useHarness();

  it.each([
    ['http://127.0.0.1:8080/cb', 'a loopback address'],
    ['http://10.0.0.1/cb', 'a private address'],
    ['https://[::1]/cb', 'a loopback address'],
    ['http://169.254.169.254/latest/meta-data', 'a link-local address'],
    ['http://localhost:3000/cb', 'this machine'],
  ])('%s is refused when the order or the withdrawal is created, and nothing is written', async (url, why) => {
    const { service } = h();
    await addShopMerchant(service);
    await service.adjustBalance({ uid: 'alice', amount: '10', reason: 'funds' });
    await refused(order(service, { notifyUrl: url }), 'invalid', `notifyUrl points to`);
    await refused(order(service, { notifyUrl: url }), 'invalid', why);
    await refused(service.applyWithdrawal({ uid: 'alice', amount: '1', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH, notifyUrl: url }), 'invalid', why);
    expect(await service.listOrders({})).toEqual([]);
    expect(await service.listWithdrawals({})).toEqual([]);
    // Allowed for development (serve --allow-private-callbacks).
    const dev = service.withPrivateCallbacks(true);
    expect((await order(dev, { notifyUrl: url })).status).toBe('PENDING_PAY');
  });
});

describe('the OpenAPI document describes every event', () => {
  const h = useHarness();

  it('each event as signed for an attempt matches its webhook in the document; a body without its eventId does not', async () => {
    const { service, clock } = h();
    const m = await addShopMerchant(service);
    await service.adjustBalance({ uid: 'alice', amount: '10', reason: 'funds' });
    const o = await paidOrder(service, { amount: '10', notifyUrl: HOOK });
    await service.refundWithId({ id: o.id, amount: '10' });
    await order(service, { notifyUrl: HOOK, expiredAt: T0 + MINUTE });
    const apply = { uid: 'alice', amount: '3', to: TO, chainId: 1, chainType: 'EVM' as const, token: USDT.ETH, notifyUrl: HOOK };
    await service.confirmWithdrawal({ logId: (await service.applyWithdrawal(apply)).id, txHash: evmTx(60), blockNumber: 9 });
    await service.rejectWithdrawal({ id: (await service.applyWithdrawal(apply)).id });
    clock.now = T0 + 2 * MINUTE;
    await groupCommit(h().ledger.sqlite).submit(() => sweepExpired(h().ledger.db, clock.now));
    const bodies = (await payloads(service)).map((p) => signedEventBody(p, m.mchId, m.secret, clock.now));
    expect(bodies.map((b) => b.event).sort()).toEqual(['order.expired', 'order.paid', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected']);
    for (const b of bodies) checkCallback(b);
    for (const event of ['order.paid', 'order.expired', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected']) checkCallback(signedEventBody(sampleEvent(event, T0), m.mchId, m.secret, T0));
    const { eventId: _e, ...withoutId } = bodies[0]!;
    expect(() => checkCallback(withoutId)).toThrow(/must have required property 'eventId'/);
  });
});

describe('a notifyUrl with a password', () => {
  const h = useHarness();

  it('is listed and shown with the password masked', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await paidOrder(service, { notifyUrl: 'https://shop:hunter2@shop.example/cb' });
    const [c] = await rows(service);
    expect(c!.url).toBe('https://shop:***@shop.example/cb');
    expect(JSON.stringify(await service.showCallback(c!.id))).not.toContain('hunter2');
  });
});
