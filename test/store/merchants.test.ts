import { HDNodeWallet, Mnemonic } from 'ethers';
import { describe, expect, it } from 'vitest';
import { base58check } from '../../src/chains/encode.js';
import { PUBLIC_TEST_XPUBS } from '../../src/chains/sandbox/public-wallet.js';
import { T0, TEST_MNEMONIC, TEST_WALLET, SHOP_WALLET, addOtherMerchant, addTestMerchant, counts, order, refused, useHarness } from '../helpers/service.js';

const SECRET = /^sk_([A-Za-z0-9_-]+)$/;

/** Bits of randomness in a secret's base64url body. */
const secretBits = (secret: string) => Buffer.from(SECRET.exec(secret)![1]!, 'base64url').length * 8;

describe('merchant secrets', () => {
  const h = useHarness();

  it('are at least 128 random bits, distinct per merchant', async () => {
    const { service } = h();
    const secrets = [];
    for (let i = 0; i < 3; i++) secrets.push((await service.addMerchant({ name: `M${i}`, generateWallet: true })).secret);
    for (const s of secrets) {
      expect(s).toMatch(SECRET);
      expect(secretBits(s)).toBeGreaterThanOrEqual(128);
    }
    expect(new Set(secrets).size).toBe(3);
  });

  it('never appear in listMerchants or showMerchant', async () => {
    const { service } = h();
    const { merchant, secret } = await service.addMerchant({ name: 'Shop', generateWallet: true });
    expect(service.merchantSecret(merchant.mchId)).toBe(secret);
    const shown = JSON.stringify([await service.listMerchants(), await service.showMerchant(merchant.mchId), await service.showMerchant()]);
    expect(shown).toContain(merchant.mchId);
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain(secret.slice(3));
  });

  it('rotateSecret replaces the secret, records when, and the old one no longer verifies', async () => {
    const { service, clock } = h();
    const { merchant, secret } = await service.addMerchant({ name: 'Shop', generateWallet: true });
    clock.now = T0 + 1000;
    const rotated = await service.rotateSecret(merchant.mchId);
    expect(rotated.mchId).toBe(merchant.mchId);
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(secret);
    expect(service.merchantSecret(merchant.mchId)).toBe(rotated.secret);
    const shown = await service.showMerchant(merchant.mchId);
    expect(shown.secretRotatedAt).toBe(T0 + 1000);
    expect(JSON.stringify(shown)).not.toContain(rotated.secret);
  });

  it('rotateSecret of an unknown merchant is not_found', async () => {
    const { service } = h();
    await service.addMerchant({ name: 'Shop', generateWallet: true });
    await refused(service.rotateSecret('M424242'), 'not_found', 'merchant M424242 not found');
  });
});

describe('merchant wallets', () => {
  const h = useHarness();
  const root = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(TEST_MNEMONIC).computeSeed());
  const xprv = root.derivePath("m/44'/60'/0'").extendedKey;
  const depth4 = root.derivePath("m/44'/60'/0'/0").neuter().extendedKey;
  // One character changed: the base58check checksum no longer matches.
  const mistyped = TEST_WALLET.evmXpub.slice(0, 20) + (TEST_WALLET.evmXpub[20] === 'a' ? 'b' : 'a') + TEST_WALLET.evmXpub.slice(21);

  it('stores the account xpubs and issues no address before an order', async () => {
    const { service } = h();
    const { merchant, mnemonic } = await service.addMerchant({ name: 'Shop', evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });
    expect(mnemonic).toBeUndefined();
    expect(merchant).toMatchObject({
      name: 'Shop', evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub, orderLifetime: '30m', rateLimit: 60, asset: 'USDT',
      addressesIssued: { EVM: 0, TRON: 0 }, createdAt: T0, secretRotatedAt: null,
    });
  });

  it('generateWallet hands back the mnemonic once and stores only its xpubs', async () => {
    const { service, ledger } = h();
    const { merchant, mnemonic } = await service.addMerchant({ name: 'Shop', generateWallet: true });
    expect(mnemonic!.split(' ')).toHaveLength(24);
    expect(merchant.evmXpub).toMatch(/^xpub/);
    expect(merchant.tronXpub).toMatch(/^xpub/);
    const raw = JSON.stringify(ledger.sqlite.prepare('select * from merchants').all(), (_, v) => (typeof v === 'bigint' ? String(v) : v));
    expect(raw).not.toContain(mnemonic!.split(' ').slice(0, 4).join(' '));
    expect(raw).not.toContain('xprv');
  });

  it.each([
    ['an extended private key', { evmXpub: xprv }, 'invalid', 'is an extended private key (xprv)'],
    ['a mistyped xpub', { evmXpub: mistyped }, 'invalid', 'evm-xpub is not a valid extended public key'],
    ['garbage', { tronXpub: 'not-a-key' }, 'invalid', 'tron-xpub is not a valid extended public key'],
    ['an xpub below the account level', { evmXpub: depth4 }, 'invalid', 'depth 4'],
    ['no wallet at all', {}, 'invalid', 'a merchant needs a wallet to receive payments'],
    ['a wallet and generateWallet', { evmXpub: TEST_WALLET.evmXpub, generateWallet: true }, 'invalid', 'not both'],
    ['no name', { name: '  ', generateWallet: true }, 'invalid', 'name is required'],
    ['a name of 101 characters', { name: 'x'.repeat(101), generateWallet: true }, 'invalid', 'name is required (1 to 100 characters)'],
  ] as const)('refuses %s', async (_, input, kind, msg) => {
    const { service, ledger } = h();
    const e = await refused(service.addMerchant({ name: 'Shop', ...input }), kind, msg);
    if ('evmXpub' in input && input.evmXpub === xprv) expect(e.message).not.toContain(xprv);
    expect(counts(ledger).merchants).toBe(0);
  });

  it.each(['evmXpub', 'tronXpub'] as const)('refuses the %s of an existing merchant for a second merchant', async (field) => {
    const { service, ledger } = h();
    const first = await service.addMerchant({ name: 'A', [field]: TEST_WALLET[field] });
    await refused(service.addMerchant({ name: 'B', [field]: TEST_WALLET[field] }), 'conflict', `that xpub is already the wallet of merchant ${first.merchant.mchId}`);
    expect(counts(ledger).merchants).toBe(1);
  });
});

/** The same account key and chain code under another serialisation: the parent fingerprint changed (it carries no meaning). */
function reserialised(xpub: string): string {
  const b = Uint8Array.from(base58check.decode(xpub));
  b[5] = b[5]! ^ 0xff;
  return base58check.encode(b);
}

// An attacker review (session 21): wallets were told apart by their xpub's string. The same keys
// with another parent fingerprint (same addresses) made a second merchant sharing addresses, and
// the public test wallet under another string a "real" merchant whose page asked for real USDT.
describe('a wallet is its key, not its string', () => {
  const h = useHarness();

  it.each(['evmXpub', 'tronXpub'] as const)("refuses the %s of an existing merchant under another serialisation, in either field", async (field) => {
    const { service, ledger } = h();
    const first = await service.addMerchant({ name: 'A', [field]: SHOP_WALLET[field] });
    const variant = reserialised(SHOP_WALLET[field]);
    expect(variant).not.toBe(SHOP_WALLET[field]);
    for (const as of ['evmXpub', 'tronXpub'] as const) {
      await refused(service.addMerchant({ name: 'B', [as]: variant }), 'conflict', `that xpub is already the wallet of merchant ${first.merchant.mchId}`);
    }
    expect(counts(ledger).merchants).toBe(1);
  });

  it("the public test wallet under another serialisation is the public test wallet: stored as such, its users' money is test money", async () => {
    const { service } = h();
    const m = await service.addMerchant({ name: 'Looks real', evmXpub: reserialised(PUBLIC_TEST_XPUBS.EVM), tronXpub: reserialised(PUBLIC_TEST_XPUBS.TRON) });
    expect(await service.showMerchant(m.merchant.mchId)).toMatchObject({ evmXpub: PUBLIC_TEST_XPUBS.EVM, tronXpub: PUBLIC_TEST_XPUBS.TRON });
    await service.adjustBalance({ mchId: m.merchant.mchId, uid: 'u1', amount: '+5', reason: 'test' });
    await refused(service.applyWithdrawal({ mchId: m.merchant.mchId, uid: 'u1', amount: '1', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: '1', chainType: 'EVM', token: '0xdAC17F958D2ee523a2206206994597C13D831ec7' }),
      'conflict', 'has the public test wallet (serve --dev)');
  });

  it.each([
    ['the public TRON account as the EVM wallet', { evmXpub: PUBLIC_TEST_XPUBS.TRON }, 'evm-xpub'],
    ['the public EVM account as the TRON wallet', { tronXpub: reserialised(PUBLIC_TEST_XPUBS.EVM) }, 'tron-xpub'],
  ] as const)('refuses %s: its keys are public, and it would not be told apart as test money', async (_, input, flag) => {
    const { service, ledger } = h();
    await refused(service.addMerchant({ name: 'Swapped', ...input }), 'invalid', `${flag} is the public test wallet's`);
    expect(counts(ledger).merchants).toBe(0);
  });
});

describe('merchant settings', () => {
  const h = useHarness();

  it.each([
    ['90s', '90s'],
    ['1m', '1m'],
    ['30m', '30m'],
    ['2h', '2h'],
    ['120m', '2h'],
    ['7d', '7d'],
  ])('accepts order lifetime %s (shown as %s)', async (lifetime, shown) => {
    const { service } = h();
    const { merchant } = await service.addMerchant({ name: 'Shop', generateWallet: true, orderLifetime: lifetime });
    expect(merchant.orderLifetime).toBe(shown);
  });

  it.each([
    ['59s', 'order-lifetime must be between 1m and 7d'],
    ['8d', 'order-lifetime must be between 1m and 7d'],
    ['169h', 'order-lifetime must be between 1m and 7d'],
    ['30', 'order-lifetime must be a duration such as 30m, 2h or 1d'],
    ['-5m', 'order-lifetime must be a duration such as 30m, 2h or 1d'],
    ['1.5h', 'order-lifetime must be a duration such as 30m, 2h or 1d'],
    ['30 minutes', 'order-lifetime must be a duration such as 30m, 2h or 1d'],
  ])('refuses order lifetime %s', async (lifetime, msg) => {
    const { service, ledger } = h();
    await refused(service.addMerchant({ name: 'Shop', generateWallet: true, orderLifetime: lifetime }), 'invalid', msg);
    expect(counts(ledger).merchants).toBe(0);
  });

  it.each([0, 1, 1_000_000])('accepts rate limit %d', async (rateLimit) => {
    const { service } = h();
    const { merchant } = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit });
    expect(merchant.rateLimit).toBe(rateLimit);
  });

  it.each([-1, 1.5, 1_000_001, Number.NaN])('refuses rate limit %d', async (rateLimit) => {
    const { service, ledger } = h();
    await refused(service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit }), 'invalid', 'rate-limit must be a whole number of requests per minute');
    expect(counts(ledger).merchants).toBe(0);
  });

  it('numbers merchants in order and lists them so', async () => {
    const { service } = h();
    const a = await service.addMerchant({ name: 'A', generateWallet: true });
    const b = await service.addMerchant({ name: 'B', generateWallet: true });
    expect(a.merchant.mchId).toMatch(/^M\d+$/);
    expect((await service.listMerchants()).map((m) => m.mchId)).toEqual([a.merchant.mchId, b.merchant.mchId]);
    await refused(service.showMerchant(), 'invalid', 'mchId is required');
  });
});

describe('wallet cursors (what serve primes its address pool with)', () => {
  const h = useHarness();

  it('lists the wallets of the merchants that gave out the most addresses first, each with its next index, at most `limit` merchants', async () => {
    const { service } = h();
    const quiet = await addOtherMerchant(service, 'Quiet');
    const busy = await addTestMerchant(service, 'Busy');
    await addOtherMerchant(service, 'Third');
    for (let i = 0; i < 3; i++) await order(service, { mchId: busy.mchId });
    await order(service, { mchId: quiet.mchId });
    const cursors = service.walletCursors(2);
    expect(cursors.slice(0, 2)).toEqual([
      { chain: 'EVM', xpub: TEST_WALLET.evmXpub, next: 3 },
      { chain: 'TRON', xpub: TEST_WALLET.tronXpub, next: 3 },
    ]);
    expect(cursors.slice(2).map((c) => c.next)).toEqual([1, 1]);
    expect(service.walletCursors(8)).toHaveLength(6);
  });
});
