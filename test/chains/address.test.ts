import { concat, encodeBase58, getAddress, getBytes, sha256 } from 'ethers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TronWeb } from 'tronweb';
import {
  isEvmAddress,
  isTronAddress,
  isTxHash,
  normalizeEvmAddress,
  normalizeTronAddress,
  decodeBase58Check,
  tronAddressFromEvm,
  validateAddress,
} from '../../src/chains/address.js';
import { expectInvalid } from '../helpers/errors.js';

// EIP-55 test cases (https://eips.ethereum.org/EIPS/eip-55): for the single-case ones the checksum
// form is the address itself, which checks our checksum computation as well as acceptance.
const EIP55_MIXED = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];
const EIP55_ALL_CAPS = ['0x52908400098527886E0F7030069857D2E4169EE7', '0x8617E340B3D01FA5F11F306F4090FD50E238070D'];
const EIP55_ALL_LOWER = ['0xde709f2102306220921060314715629080e2fb77', '0x27b1fdb04752bbc536007a920d24acb045561c26'];

const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

describe('EVM addresses', () => {
  it.each([...EIP55_MIXED, ...EIP55_ALL_CAPS, ...EIP55_ALL_LOWER])('accepts and keeps the EIP-55 form of %s', (a) => {
    expect(isEvmAddress(a)).toBe(true);
    expect(normalizeEvmAddress(a)).toBe(a);
  });

  it.each(EIP55_MIXED)('normalizes single-case %s to its checksum form', (a) => {
    expect(normalizeEvmAddress(a.toLowerCase())).toBe(a);
    expect(normalizeEvmAddress('0x' + a.slice(2).toUpperCase())).toBe(a);
  });

  it.each(EIP55_MIXED)('refuses %s with one letter in the wrong case', (a) => {
    const i = a.slice(2).search(/[a-fA-F]/) + 2;
    const flipped = a.slice(0, i) + (a[i] === a[i]!.toLowerCase() ? a[i]!.toUpperCase() : a[i]!.toLowerCase()) + a.slice(i + 1);
    expect(isEvmAddress(flipped)).toBe(false);
    expectInvalid(() => validateAddress('EVM', flipped), /^to is not a valid EVM address: mixed-case checksum \(EIP-55\) does not match$/);
  });

  it.each([
    ['', /expected 0x followed by 40 hex digits/],
    ['5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /expected 0x/],
    ['0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /expected 0x/],
    ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', /40 hex digits/],
    ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd', /40 hex digits/],
    ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg', /40 hex digits/],
    [' 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /40 hex digits/],
    [USDT_TRON, /40 hex digits/],
  ])('refuses %j', (a, re) => {
    expect(isEvmAddress(a)).toBe(false);
    expectInvalid(() => normalizeEvmAddress(a, 'to'), re);
  });

  it('names the field and refuses non-strings', () => {
    expectInvalid(() => validateAddress('EVM', 42, 'refundTo'), /^refundTo must be a string/);
    expectInvalid(() => validateAddress('EVM', undefined), /^to must be a string/);
    expect(isEvmAddress(null)).toBe(false);
  });
});

describe('TRON addresses', () => {
  it('accepts the USDT contract address', () => {
    expect(isTronAddress(USDT_TRON)).toBe(true);
    expect(validateAddress('TRON', USDT_TRON)).toBe(USDT_TRON);
  });

  it('refuses a one-character change (checksum)', () => {
    const changed = USDT_TRON.slice(0, -1) + 'u';
    expect(isTronAddress(changed)).toBe(false);
    expectInvalid(() => validateAddress('TRON', changed), /^to is not a valid TRON address: base58check checksum does not match/);
  });

  it('refuses valid base58check with another prefix byte', () => {
    // A Bitcoin P2PKH address: 25 bytes, good checksum, version byte 0x00.
    expectInvalid(() => normalizeTronAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'to'), /first byte is not 0x41/);
  });

  it.each([
    ['', /not a base58 string/],
    [USDT_TRON.toLowerCase(), /not a base58 string/], // base58 is case-sensitive; 'l' is not in the alphabet
    [USDT_TRON.replace('NHq', 'nHq'), /checksum does not match/],
    ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60', /not a base58 string/], // 0 is outside the alphabet
    ['41a614f803b6fd780986a42c78ec9c7f77e6ded13c', /not a base58 string|checksum/],
    ['0xa614f803b6fd780986a42c78ec9c7f77e6ded13c', /not a base58 string/],
    ['T' + '1'.repeat(200), /not a base58 string/],
  ])('refuses %j', (a, re) => {
    expect(isTronAddress(a)).toBe(false);
    expectInvalid(() => normalizeTronAddress(a), re);
  });

  it('refuses a base58check payload of the wrong length', () => {
    // 0x41 followed by 19 bytes: right prefix, wrong size.
    const short = TronWeb.address.fromHex('41' + 'ab'.repeat(19));
    expectInvalid(() => normalizeTronAddress(short), /decodes to 20 bytes/);
  });

  it('converts the EVM form of the USDT contract into its TRON address (tronweb agrees)', () => {
    const hash = 'a614f803b6fd780986a42c78ec9c7f77e6ded13c';
    expect(tronAddressFromEvm('0x' + hash)).toBe(USDT_TRON);
    expect(TronWeb.address.fromHex('41' + hash)).toBe(USDT_TRON);
    expect(TronWeb.address.toHex(USDT_TRON).toLowerCase()).toBe('41' + hash);
  });

  it.each(EIP55_MIXED)('agrees with tronweb on the TRON form of %s', (a) => {
    expect(tronAddressFromEvm(a)).toBe(TronWeb.address.fromHex('41' + a.slice(2).toLowerCase()));
  });

  it('refuses to convert a bad EVM address', () => {
    expectInvalid(() => tronAddressFromEvm('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), /EIP-55/);
  });
});

describe('isTxHash', () => {
  const hex = 'b164fb1f395a1dc1bc7c88ab5ad7286f3fd4c54ef2884171d9a4cac48178b4e1';
  it('takes 0x + 64 hex on EVM and bare 64 hex on TRON', () => {
    expect(isTxHash('EVM', '0x' + hex)).toBe(true);
    expect(isTxHash('EVM', '0x' + hex.toUpperCase())).toBe(true);
    expect(isTxHash('EVM', hex)).toBe(false);
    expect(isTxHash('TRON', hex)).toBe(true);
    expect(isTxHash('TRON', '0x' + hex)).toBe(false);
  });
  it.each(['', '0x' + hex.slice(1), '0x' + hex + '0', '0x' + hex.slice(1) + 'g', 42, null])('refuses %j', (h) => {
    expect(isTxHash('EVM', h)).toBe(false);
    expect(isTxHash('TRON', typeof h === 'string' ? h.replace(/^0x/, '') : h)).toBe(false);
  });
});

describe('the checks agree with ethers and TronWeb (they no longer use ethers themselves)', () => {
  const bytes20 = fc.uint8Array({ minLength: 20, maxLength: 20 });
  const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

  it('EVM: every spelling of a random address is accepted or refused as ethers getAddress does, and normalized to its form', () => {
    fc.assert(
      fc.property(bytes20, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (b, upper) => {
        const lower = hexOf(b);
        const spellings = [lower, lower.toUpperCase(), [...lower].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''), getAddress(`0x${lower}`).slice(2)];
        for (const h of spellings) {
          const a = `0x${h}`;
          let theirs: string | undefined;
          try {
            theirs = getAddress(a);
          } catch {
            theirs = undefined;
          }
          expect([a, isEvmAddress(a)]).toEqual([a, theirs !== undefined]);
          if (theirs) expect(normalizeEvmAddress(a)).toBe(theirs);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('TRON: an address of random key hash, and each one-character change of it, is judged as TronWeb judges it', () => {
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    fc.assert(
      fc.property(bytes20, fc.nat(33), fc.nat(57), (b, at, c) => {
        const good = tronAddressFromEvm(`0x${hexOf(b)}`);
        expect(good).toBe(TronWeb.address.fromHex(`41${hexOf(b)}`));
        expect(isTronAddress(good)).toBe(true);
        const i = at % good.length;
        const changed = good.slice(0, i) + alphabet[c] + good.slice(i + 1);
        expect([changed, isTronAddress(changed)]).toEqual([changed, TronWeb.isAddress(changed)]);
      }),
      { numRuns: 300 },
    );
  });

  it('base58check: leading 1s are zero bytes, and the reasons of a refusal are told apart', () => {
    const payload = Uint8Array.from([0, 0, 0x41, 1, 2, 3]);
    // Encoded by ethers, independently: payload and the first four bytes of its double SHA-256.
    const ok = decodeBase58Check(encodeBase58(concat([payload, getBytes(sha256(sha256(payload))).subarray(0, 4)])));
    expect(ok).toEqual({ ok: true, payload });
    expect(decodeBase58Check('11')).toEqual({ ok: false, reason: 'too short' });
    expect(decodeBase58Check('0OIl')).toEqual({ ok: false, reason: 'not a base58 string' });
    expect(decodeBase58Check('1'.repeat(121))).toEqual({ ok: false, reason: 'not a base58 string' });
    expect(decodeBase58Check(USDT_TRON.slice(0, -1) + (USDT_TRON.endsWith('t') ? 'u' : 't'))).toEqual({ ok: false, reason: 'base58check checksum does not match (mistyped character?)' });
  });
});
