import { getAddress } from 'ethers';
import { describe, expect, it } from 'vitest';
import { isTronAddress } from '../../src/chains/address.js';
import { deriveAddress } from '../../src/chains/derive.js';
import {
  DAY, MINUTE, T0, TEST_EVM_0, TEST_EVM_1, TEST_WALLET, addOtherMerchant, addTestMerchant, counts, order, refused, useHarness,
} from '../helpers/service.js';

describe('create order', () => {
  const h = useHarness();

  it('answers the order with its fields, a canonical amount and the default expiry', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await service.createOrder({ oid: 'A-1', uid: 'user-7', amount: '010.50', memo: 'coffee' });
    expect(o).toEqual({
      id: expect.stringMatching(/^ord_[A-Za-z0-9_-]{16,}$/),
      oid: 'A-1',
      uid: 'user-7',
      amount: '10.5',
      status: 'PENDING_PAY',
      expiredAt: T0 + 30 * MINUTE,
      addresses: { EVM: TEST_EVM_0, TRON: deriveAddress('TRON', TEST_WALLET.tronXpub, 0) },
    });
    const detail = await service.getOrder(o.id);
    expect(detail).toMatchObject({ memo: 'coffee', amount: '10.5', paidAmount: '0', refundedAmount: '0', createdAt: T0, late: false, payments: [] });
  });

  it('ids: creation time first (later orders sort after earlier ones), then 128 random bits; never the same twice', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      ids.push((await order(service, { oid: `ids-${i}` })).id);
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 3));
    }
    for (const id of ids) expect(id).toMatch(/^ord_[0-9a-v]{9}[A-Za-z0-9_-]{22}$/);
    expect(new Set(ids).size).toBe(40);
    // The time part never goes down in creation order (byte order, as SQLite's index compares),
    // and moved on across the pauses.
    const times = ids.map((id) => id.slice(4, 13));
    for (let i = 1; i < times.length; i++) expect(times[i]! >= times[i - 1]!, `${times[i - 1]} then ${times[i]}`).toBe(true);
    expect(times[39]! > times[0]!).toBe(true);
    expect(parseInt(times[0]!, 32)).toBeGreaterThanOrEqual(Date.now() - 60_000);
    // The random part differs even within one millisecond, and carries no visible pattern.
    const randoms = ids.map((id) => id.slice(13));
    expect(new Set(randoms).size).toBe(40);
    expect(new Set(randoms.map((r) => r.slice(0, 4))).size).toBeGreaterThan(35);
  });

  it.each([
    ['010.50', '10.5'],
    ['7', '7'],
    ['0.000001', '0.000001'],
    ['1.100000', '1.1'],
    ['000.5', '0.5'],
  ])('writes amount %s as %s', async (amount, canonical) => {
    const { service } = h();
    await addTestMerchant(service);
    expect((await order(service, { amount })).amount).toBe(canonical);
  });

  it('uses the merchant order lifetime for the default expiry', async () => {
    const { service } = h();
    const { merchant } = await service.addMerchant({ name: 'Slow', generateWallet: true, orderLifetime: '2h' });
    expect((await order(service, { mchId: merchant.mchId })).expiredAt).toBe(T0 + 120 * MINUTE);
  });

  it('gives each order fresh EIP-55 and base58 addresses, never shared, also across merchants', async () => {
    const { service } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    const orders = [];
    for (let i = 0; i < 3; i++) {
      orders.push(await order(service, { mchId: a.mchId }));
      orders.push(await order(service, { mchId: b.mchId }));
    }
    expect(orders[0]!.addresses.EVM).toBe(TEST_EVM_0);
    expect(orders[2]!.addresses.EVM).toBe(TEST_EVM_1);
    const all: string[] = [];
    for (const o of orders) {
      expect(Object.keys(o.addresses).sort()).toEqual(['EVM', 'TRON']);
      expect(o.addresses.EVM).toBe(getAddress(o.addresses.EVM!));
      expect(o.addresses.TRON).toMatch(/^T/);
      expect(isTronAddress(o.addresses.TRON)).toBe(true);
      all.push(o.addresses.EVM!, o.addresses.TRON!);
      expect(await service.getAddresses(o.id)).toEqual(o.addresses);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  it('gives an address only for the chain types the merchant has a wallet for', async () => {
    const { service } = h();
    const { merchant } = await service.addMerchant({ name: 'EVM only', evmXpub: TEST_WALLET.evmXpub });
    const o = await order(service, { mchId: merchant.mchId });
    expect(o.addresses).toEqual({ EVM: TEST_EVM_0 });
  });
});

// Found by an outside review: a logo at a loopback or private address was accepted, and the
// payment page then made every payer's browser ask that address of its own machine or network
// (a blind GET a merchant chooses). Refused like a notifyUrl; serve --allow-private-callbacks
// (development) lifts it for both.
describe('create order: a logo at an inward address', () => {
  const h = useHarness();
  it.each(['http://10.0.0.1/x', 'http://192.168.1.1/logo.png', 'http://127.0.0.1:8080/l.png', 'https://localhost/l.png', 'http://169.254.169.254/l.png'])('%s is refused, nothing created', async (logo) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const before = counts(ledger);
    await refused(service.createOrder({ oid: 'logo-1', uid: 'u1', amount: '1', logo }), 'invalid', /^logo points to \S+, (this machine|an? [a-z-]+ address): every payer's browser would ask its own machine or network for it/);
    expect(counts(ledger)).toEqual(before);
  });
  it('a public address or a name passes; in development (private callbacks allowed) an inward one too', async () => {
    const { service } = h();
    await addTestMerchant(service);
    await service.createOrder({ oid: 'logo-2', uid: 'u1', amount: '1', logo: 'https://93.184.216.34/l.png' });
    await service.createOrder({ oid: 'logo-3', uid: 'u1', amount: '1', logo: 'https://cdn.shop.example/l.png' });
    await service.withPrivateCallbacks(true).createOrder({ oid: 'logo-4', uid: 'u1', amount: '1', logo: 'http://127.0.0.1:8080/l.png' });
  });
});

describe('create order: the same oid again', () => {
  const h = useHarness();
  const base = { oid: 'same', uid: 'u1', amount: '10.5', memo: 'm', notifyUrl: 'https://shop.example/cb' };

  it('returns the existing order for the same fields, "10.5" and "10.50" alike', async () => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const first = await service.createOrder(base);
    const before = counts(ledger);
    expect(await service.createOrder({ ...base, amount: '10.50' })).toEqual(first);
    expect(await service.createOrder({ ...base, expiredAt: first.expiredAt })).toEqual(first);
    expect(await service.createOrder({ ...base, expiredAt: String(first.expiredAt) })).toEqual(first);
    expect(counts(ledger)).toEqual(before);
  });

  it('returns the existing order for its oid and expiry once that expiry has passed; a new oid with a past expiry is refused', async () => {
    const { service, ledger, clock } = h();
    await addTestMerchant(service);
    const first = await service.createOrder({ ...base, expiredAt: T0 + 10 * MINUTE });
    const before = counts(ledger);
    clock.now = T0 + 20 * MINUTE;
    expect(await service.createOrder({ ...base, expiredAt: T0 + 10 * MINUTE })).toEqual({ ...first, status: 'EXPIRED' });
    await refused(service.createOrder({ ...base, expiredAt: T0 + 11 * MINUTE }), 'conflict', 'with a different expiredAt');
    await refused(service.createOrder({ ...base, oid: 'new', expiredAt: T0 + 10 * MINUTE }), 'invalid', 'expiredAt must lie in the future');
    await refused(service.createOrder({ ...base, oid: 'new', expiredAt: clock.now + 8 * DAY }), 'invalid', 'expiredAt must be at most 7 days ahead');
    expect(counts(ledger)).toEqual(before);
  });

  it.each([
    ['amount', { amount: '10.6' }],
    ['uid', { uid: 'u2' }],
    ['memo', { memo: 'other' }],
    ['memo (the order has one; this request has none)', { memo: undefined }],
    ['notifyUrl (the order has one; this request has none)', { notifyUrl: undefined }],
    ['notifyUrl', { notifyUrl: 'https://shop.example/other' }],
    ['redirectUrl (this request has one; the order has none)', { redirectUrl: 'https://shop.example/done' }],
    ['logo (this request has one; the order has none)', { logo: 'https://shop.example/logo.png' }],
    ['expiredAt', { expiredAt: T0 + 10 * MINUTE }],
  ])('refuses a different %s', async (field, change) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const first = await service.createOrder(base);
    const before = counts(ledger);
    await refused(service.createOrder({ ...base, ...change }), 'conflict', `oid same is already used by order ${first.id} with a different ${field}`);
    expect(counts(ledger)).toEqual(before);
  });

  it('lets another merchant use the same oid for its own order', async () => {
    const { service } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    const oa = await service.createOrder({ ...base, mchId: a.mchId });
    const ob = await service.createOrder({ ...base, mchId: b.mchId });
    expect(ob.id).not.toBe(oa.id);
  });
});

describe('create order: expiredAt', () => {
  const h = useHarness();

  it.each([
    ['a number', T0 + 5 * MINUTE, T0 + 5 * MINUTE],
    ['a digit string', String(T0 + 5 * MINUTE), T0 + 5 * MINUTE],
    ['exactly 7 days ahead', T0 + 7 * DAY, T0 + 7 * DAY],
  ])('accepts %s', async (_, expiredAt, expected) => {
    const { service } = h();
    await addTestMerchant(service);
    expect((await order(service, { expiredAt })).expiredAt).toBe(expected);
  });

  it.each([
    ['in the past', T0 - 1, 'invalid', 'expiredAt must lie in the future'],
    ['now', T0, 'invalid', 'expiredAt must lie in the future'],
    ['more than 7 days ahead', T0 + 7 * DAY + 1, 'invalid', 'expiredAt must be at most 7 days ahead'],
    ['in seconds, not milliseconds', 'soon', 'invalid', 'expiredAt must be a milliseconds timestamp'],
    ['negative', -5, 'invalid', 'expiredAt must be a milliseconds timestamp'],
    ['fractional', T0 + 0.5, 'invalid', 'expiredAt must be a milliseconds timestamp'],
  ] as const)('refuses expiredAt %s', async (_, expiredAt, kind, msg) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const before = counts(ledger);
    await refused(order(service, { expiredAt: expiredAt as number }), kind, msg);
    expect(counts(ledger)).toEqual(before);
  });
});

describe('order expiry on read', () => {
  const h = useHarness();

  it('reads PENDING_PAY up to expiredAt and EXPIRED the moment the clock passes it', async () => {
    const { service, clock } = h();
    const { mchId } = await addTestMerchant(service);
    const o = await order(service, { expiredAt: T0 + 10 * MINUTE });
    const read = async () => ({
      status: await service.getOrderStatus(o.id),
      detail: (await service.getOrder(o.id)).status,
      pending: (await service.listOrders({ mchId, status: 'PENDING_PAY' })).map((x) => x.id),
      expired: (await service.listOrders({ mchId, status: 'EXPIRED' })).map((x) => x.id),
    });
    clock.now = o.expiredAt;
    expect(await read()).toEqual({ status: 'PENDING_PAY', detail: 'PENDING_PAY', pending: [o.id], expired: [] });
    clock.now = o.expiredAt + 1;
    expect(await read()).toEqual({ status: 'EXPIRED', detail: 'EXPIRED', pending: [], expired: [o.id] });
  });
});

describe('create order: refused input', () => {
  const h = useHarness();
  const ok = { oid: 'o-1', uid: 'u1', amount: '1' };

  it.each([
    ['oid missing', { oid: undefined }, 'oid is required'],
    ['oid empty', { oid: '' }, 'oid is required'],
    ['uid missing', { uid: undefined }, 'uid is required'],
    ['amount missing', { amount: undefined }, 'amount is required'],
    ['oid of 65 characters', { oid: 'x'.repeat(65) }, 'oid must be at most 64 characters'],
    ['uid of 65 characters', { uid: 'x'.repeat(65) }, 'uid must be at most 64 characters'],
    ['memo of 257 characters', { memo: 'x'.repeat(257) }, 'memo must be at most 256 characters'],
    ['notifyUrl not a URL', { notifyUrl: 'shop.example/cb' }, 'notifyUrl must be an http or https URL'],
    ['notifyUrl not http', { notifyUrl: 'ftp://shop.example/cb' }, 'notifyUrl must be an http or https URL'],
    ['redirectUrl too long', { redirectUrl: `https://shop.example/${'x'.repeat(2048)}` }, 'redirectUrl must be at most 2048 characters'],
    ['unknown field notifyURL', { notifyURL: 'https://shop.example/cb' }, 'unknown field: notifyURL'],
    ['amount as a number', { amount: 10 }, 'amount must be a decimal string'],
    ['amount negative', { amount: '-1' }, 'amount must be a plain decimal'],
    ['amount with exponent', { amount: '1e3' }, 'amount must be a plain decimal'],
    ['amount zero', { amount: '0.0' }, 'amount must be positive'],
    ['amount with 7 decimals', { amount: '1.0000001' }, 'amount has more than 6 decimal places'],
  ])('refuses %s', async (_, change, msg) => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const before = counts(ledger);
    await refused(service.createOrder({ ...ok, ...change } as never), 'invalid', msg);
    expect(counts(ledger)).toEqual(before);
  });

  it('accepts an oid of exactly 64 characters', async () => {
    const { service } = h();
    await addTestMerchant(service);
    expect((await service.createOrder({ ...ok, oid: 'x'.repeat(64) })).oid).toBe('x'.repeat(64));
  });
});

describe('which merchant', () => {
  const h = useHarness();

  it('takes the only merchant when mchId is left out', async () => {
    const { service } = h();
    const { mchId } = await addTestMerchant(service);
    const o = await order(service);
    expect((await service.getOrder(o.id)).mchId).toBe(mchId);
  });

  it('refuses a missing mchId once there are two merchants', async () => {
    const { service } = h();
    await addTestMerchant(service);
    await addOtherMerchant(service);
    await refused(order(service), 'invalid', 'mchId is required: the ledger holds more than one merchant');
  });

  it('answers not_found for an unknown mchId, naming one that differs only in case', async () => {
    const { service } = h();
    const m = await addTestMerchant(service);
    await refused(order(service, { mchId: 'M999999' }), 'not_found', /^merchant M999999 not found$/);
    await refused(order(service, { mchId: m.mchId.toLowerCase() }), 'not_found', `merchant ${m.mchId.toLowerCase()} not found (did you mean ${m.mchId}?)`);
  });

  it('refuses an order before any merchant exists', async () => {
    const { service } = h();
    await refused(order(service), 'invalid', 'the ledger holds no merchant yet');
  });
});

describe('lookups of unknown ids', () => {
  const h = useHarness();

  it('answers exactly "Not found" and "Order not found"', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const a = await refused(service.getAddresses('ord_nope'), 'not_found', 'Not found');
    expect(a.message).toBe('Not found');
    const s = await refused(service.getOrderStatus('ord_nope'), 'not_found', 'Order not found');
    expect(s.message).toBe('Order not found');
  });

  it('shows one merchant’s order to another merchant as not found', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    const o = await service.createOrder({ mchId: b.mchId, oid: 'b-1', uid: 'u', amount: '1' });
    const a = (await service.listMerchants())[0]!.mchId;
    const e = await refused(service.getOrder(o.id, a), 'not_found', 'Order not found');
    expect(e.message).toBe('Order not found');
  });
});

// Found by an outside review: `callbacks list` printed a notifyUrl's password as ***, but
// `order show`, `order list` and their extension endpoints printed it in clear.
describe("an order's notifyUrl as it is shown", () => {
  const h = useHarness();

  it('never carries its password: *** in show and list, locally and in the service answers the API gives', async () => {
    const { service } = h();
    await addTestMerchant(service);
    const o = await service.createOrder({ oid: 'with-auth', uid: 'u1', amount: '1', notifyUrl: 'https://shop:p%40ss@shop.example/cb?x=1' });
    const shown = 'https://shop:***@shop.example/cb?x=1';
    expect((await service.getOrder(o.id)).notifyUrl).toBe(shown);
    expect((await service.showOrder({ id: o.id })).notifyUrl).toBe(shown);
    expect((await service.listOrders({ oid: 'with-auth' })).map((x) => x.notifyUrl)).toEqual([shown]);
    // A user name alone is the credential; so is a query parameter named like a secret.
    const token = await service.createOrder({ oid: 'with-token', uid: 'u1', amount: '1', notifyUrl: 'https://t0k3n@shop.example/cb?access_token=s3cr3t&order=7' });
    expect((await service.getOrder(token.id)).notifyUrl).toBe('https://***@shop.example/cb?access_token=***&order=7');
    expect(JSON.stringify(await service.listOrders({}))).not.toMatch(/t0k3n|s3cr3t/);
    // The same oid and URL again is the same order: the comparison is with what was stored.
    expect((await service.createOrder({ oid: 'with-auth', uid: 'u1', amount: '1', notifyUrl: 'https://shop:p%40ss@shop.example/cb?x=1' })).id).toBe(o.id);
  });
});

// Found by an outside review: `u1` and `u1 `, `A-1` and `A-1<U+00A0>`, were two users and two
// orders that read alike on every screen ("did you mean" only knew case).
describe('ids that read alike', () => {
  const h = useHarness();

  it('an oid or uid that starts or ends with a blank, or holds a blank other than the space, is refused and changes nothing', async () => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const before = counts(ledger);
    for (const [field, value] of [['uid', 'u1 '], ['uid', ' u1'], ['oid', 'A-1\u00a0'], ['oid', 'A\u2003B'], ['uid', 'u\u30001']] as const) {
      await refused(service.createOrder({ oid: 'o-ok', uid: 'u-ok', amount: '1', [field]: value }), 'invalid', `${field} must not start or end with a blank, nor hold a blank other than the space`);
    }
    await refused(service.adjustBalance({ uid: 'u1 ', amount: '+1', reason: 'r' }), 'invalid', 'uid must not start or end with a blank');
    await refused(service.applyWithdrawal({ uid: 'u1\u00a0', amount: '1', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 1, chainType: 'EVM', token: '0xdAC17F958D2ee523a2206206994597C13D831ec7' }), 'invalid', 'uid must not start or end with a blank');
    expect(counts(ledger)).toEqual(before);
    // A space between words is a space.
    expect(await service.createOrder({ oid: 'order 1', uid: 'jane doe', amount: '1' })).toMatchObject({ oid: 'order 1', uid: 'jane doe' });
  });
});
