import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaVersion } from '../../src/core/version.js';
import { ordersForAddresses } from '../../src/store/chain-state.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { TEST_EVM_0, TEST_EVM_1, TRON_CHAIN, USDT, addOtherMerchant, addTestMerchant, counts, order, refused, useHarness } from '../helpers/service.js';
import { useFixtureCopies } from '../helpers/fixtures.js';
import { plansOf } from '../helpers/query-plans.js';

// One index on lower(address) answers whether an address was given out (in any spelling) and the
// chain watcher's lookup of a recipient as the node writes it. It replaced two (a unique index on
// the address as stored and one on lower(address) for EVM): every order wrote a random leaf of
// each to the WAL (bench/CHANGES.md, fourteenth round).

const DEPOSIT = 'to is a payment address this service gave out for an order: a transfer there is counted as a payment into the ledger, not as a payout';
const TEST_EVM_2 = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

/** The indexes of order_addresses, by name. */
const indexes = (sqlite: Database.Database) =>
  (sqlite.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'order_addresses' order by name").all() as { name: string }[]).map((r) => r.name);

describe('order addresses: one index for every lookup', () => {
  const h = useHarness();

  it('the table has that index and its primary key, nothing else', () => {
    const { ledger } = h();
    expect(indexes(ledger.sqlite)).toEqual(['order_addresses_address', 'sqlite_autoindex_order_addresses_1']);
  });

  it('the watcher, find and the payout check each search the index, never scan the table', async () => {
    const { service, ledger } = h();
    const me = await addTestMerchant(service);
    await service.adjustBalance({ uid: 'alice', amount: '10', reason: 'test funds', mchId: me.mchId });
    const o = await order(service, { mchId: me.mchId });
    const plans = await plansOf(ledger.sqlite, /order_addresses/, /\b(order_addresses|a)\b/, async () => {
      expect(ordersForAddresses(ledger.sqlite, 'EVM', [o.addresses.EVM!.toLowerCase()]).get(o.addresses.EVM!.toLowerCase())?.orderId).toBe(o.id);
      expect(ordersForAddresses(ledger.sqlite, 'TRON', [o.addresses.TRON!]).get(o.addresses.TRON!)?.orderId).toBe(o.id);
      expect((await service.findOrders(o.addresses.EVM!.toLowerCase())).orders.map((x) => x.id)).toEqual([o.id]);
      expect((await service.findOrders(o.addresses.TRON!)).orders.map((x) => x.id)).toEqual([o.id]);
      await refused(service.applyWithdrawal({ uid: 'alice', amount: '1', to: o.addresses.EVM!, chainId: 1, chainType: 'EVM', token: USDT.ETH, mchId: me.mchId }), 'invalid', DEPOSIT);
      await refused(service.applyWithdrawal({ uid: 'alice', amount: '1', to: o.addresses.TRON!, chainId: TRON_CHAIN, chainType: 'TRON', token: USDT.TRON, mchId: me.mchId }), 'invalid', DEPOSIT);
    });
    // Every read of the table searches an index (an order's own addresses: its primary key)...
    for (const line of plans.flat()) expect(line).toMatch(/^SEARCH (order_addresses|a) USING (COVERING )?INDEX /);
    // ...and the six lookups by address (two watcher statements, two finds, two payout checks) this one.
    expect(plans.filter((p) => p.some((line) => / USING (COVERING )?INDEX order_addresses_address \(<expr>=\?\)/.test(line)))).toHaveLength(6);
  });

  it('giving out an address looks up the withdrawals that pay to it by index, never by scanning them', async () => {
    const { service, ledger } = h();
    const me = await addTestMerchant(service);
    const sources: string[] = [];
    const prepare = ledger.sqlite.prepare.bind(ledger.sqlite);
    ledger.sqlite.prepare = ((source: string) => {
      if (/withdrawals/.test(source)) sources.push(source);
      return prepare(source);
    }) as typeof ledger.sqlite.prepare;
    try {
      await order(service, { mchId: me.mchId });
    } finally {
      ledger.sqlite.prepare = prepare;
    }
    expect(sources).toHaveLength(1);
    const plan = (prepare(`EXPLAIN QUERY PLAN ${sources[0]}`).all({ orderId: 'x', chainType: 'EVM', address: '0xab', index: 0 }) as { detail: string }[]).map((r) => r.detail);
    expect(plan.filter((d) => /withdrawals/.test(d))).toEqual(['SEARCH withdrawals USING COVERING INDEX withdrawals_to (<expr>=?)']);
  });

  it('an address is given out once in any spelling: an EVM address already out in lower case is skipped', async () => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const first = await order(service);
    expect(first.addresses.EVM).toBe(TEST_EVM_0);
    // The next index's address, given out in another spelling (as a ledger edited by hand might hold).
    ledger.sqlite.prepare("update order_addresses set address = ? where order_id = ? and chain_type = 'EVM'").run(TEST_EVM_1.toLowerCase(), first.id);
    const second = await order(service);
    expect(second.addresses.EVM).toBe(TEST_EVM_2);
    expect(() => ledger.sqlite.prepare("update order_addresses set address = ? where order_id = ? and chain_type = 'EVM'").run(TEST_EVM_2.toUpperCase().replace('0X', '0x'), first.id))
      .toThrow(/UNIQUE constraint failed/);
  });

  it('a TRON address (base58check, case-sensitive) is found only as written, though the index folds case', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await order(service);
    const tron = o.addresses.TRON!;
    // The same letters with the case of one flipped: another (invalid) base58 string.
    const i = [...tron].findIndex((c, k) => k > 0 && /[a-zA-Z]/.test(c) && c.toLowerCase() !== c.toUpperCase());
    const flipped = tron.slice(0, i) + (tron[i] === tron[i]!.toLowerCase() ? tron[i]!.toUpperCase() : tron[i]!.toLowerCase()) + tron.slice(i + 1);
    expect((await service.findOrders(tron)).orders.map((x) => x.id)).toEqual([o.id]);
    expect((await service.findOrders(flipped)).orders).toEqual([]);
  });

  it('addresses stay unique across merchants', async () => {
    const { service } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    const all = [];
    for (let i = 0; i < 3; i++) for (const mchId of [a.mchId, b.mchId]) all.push(...Object.values((await order(service, { mchId })).addresses));
    expect(new Set(all.map((x) => x.toLowerCase())).size).toBe(12);
  });
});

describe('a ledger written before the merged index', () => {
  // Written by the release before it (schema 10): merchant M100001 on the test wallet, three
  // orders old-0..old-2 at derivation indices 0..2, the two old indexes on order_addresses.
  const oldLedger = useFixtureCopies('ledger-schema10-addresses.db');
  const OLD = [
    { oid: 'old-0', EVM: TEST_EVM_0, TRON: 'TWer2Ygk5TEheHp3TPuYeqxmB6SsGZmaL6' },
    { oid: 'old-1', EVM: TEST_EVM_1, TRON: 'TPjjvMwjPoDC32V2dGDYTkLH4E5LAtBZ6C' },
    { oid: 'old-2', EVM: TEST_EVM_2, TRON: 'TB7mhtkvfhsRBRhe5FuRa4tFXSEyGDe4eA' },
  ];
  let ledger: Ledger | undefined;
  afterEach(() => {
    ledger?.close();
    ledger = undefined;
  });

  // Not reachable through cryptopay (every address it writes is derived, in one spelling), only by
  // editing the file: the index cannot be built, and the ledger stays as it was.
  it('one address in two spellings (edited by hand) stops the migration with the reason, and changes nothing', async () => {
    const file = oldLedger();
    const edit = new Database(file);
    edit.prepare("update order_addresses set address = ? where chain_type = 'EVM' and address = ?").run(TEST_EVM_0.toLowerCase(), TEST_EVM_1);
    edit.close();
    expect(() => openLedger(file)).toThrow(`cannot prepare the ledger at ${file}: UNIQUE constraint failed: index 'order_addresses_address'`);
    const after = new Database(file, { readonly: true });
    try {
      expect(Number(after.pragma('user_version', { simple: true }))).toBe(10); // the fixture's, as it was
      expect(indexes(after)).toEqual(['order_addresses_address_unique', 'order_addresses_evm_lower', 'sqlite_autoindex_order_addresses_1']);
    } finally {
      after.close();
    }
  });

  // The retry that lets a command wait for another's upgrade (test/cli/concurrency.test.ts) must
  // not retry the check after it: broken references are reported at once, not after the 15 s
  // busy timeout.
  it('references broken by hand are reported at once after the migration, with what to do', () => {
    const file = oldLedger();
    const edit = new Database(file);
    edit.pragma('foreign_keys = OFF');
    edit.prepare("insert into order_addresses (order_id, chain_type, address, derivation_index) values ('ord_gone', 'EVM', '0x0000000000000000000000000000000000000001', 99)").run();
    edit.close();
    const started = Date.now();
    expect(() => openLedger(file)).toThrow("the ledger's references are broken after its migration (1 rows): restore a backup");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('opens with the one index, finds its orders by every address, and gives out the next ones', async () => {
    const file = oldLedger();
    ledger = openLedger(file);
    expect(Number(ledger.sqlite.pragma('user_version', { simple: true }))).toBe(schemaVersion());
    expect(indexes(ledger.sqlite)).toEqual(['order_addresses_address', 'sqlite_autoindex_order_addresses_1']);
    const service = new LocalPaymentService(ledger, { now: () => Date.UTC(2026, 10, 24, 0, 10), caller: { actor: 'tester' } });
    const before = counts(ledger);
    for (const o of OLD) {
      const [found] = (await service.findOrders(o.EVM.toLowerCase())).orders;
      expect(found).toMatchObject({ oid: o.oid });
      expect((await service.findOrders(o.TRON)).orders.map((x) => x.id)).toEqual([found!.id]);
      expect(ordersForAddresses(ledger.sqlite, 'EVM', [o.EVM.toLowerCase()]).get(o.EVM.toLowerCase())).toEqual({ orderId: found!.id, asset: 'USDT', address: o.EVM });
      expect(ordersForAddresses(ledger.sqlite, 'TRON', [o.TRON]).get(o.TRON)).toEqual({ orderId: found!.id, asset: 'USDT', address: o.TRON });
    }
    expect(counts(ledger)).toEqual(before);
    const next = await service.createOrder({ mchId: 'M100001', oid: 'new-3', uid: 'u1', amount: '1' });
    const all = [...OLD.flatMap((o) => [o.EVM, o.TRON]), ...Object.values(next.addresses)];
    expect(new Set(all.map((x) => x.toLowerCase())).size).toBe(8);
    expect(await service.check()).toEqual([]);
  });
});
