import { getAddress, HDNodeWallet, randomBytes } from 'ethers';
import { evmAddressOf, tronAddressOf } from '../../src/chains/encode.js';
import { describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../src/chains/address.js';
import { invert } from '@noble/curves/abstract/modular.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import fc from 'fast-check';
import { batchCurve, deriveRange, hashRange, mulBaseAdd, mulBaseAddBatch, nativeCurve } from '../../src/chains/ckd.js';
import { createDeriver, walletFromMnemonic, warmUpDerivation } from '../../src/chains/derive.js';

const PHRASE = 'test test test test test test test test test test test junk';

/**
 * The fast path (noble arithmetic, windows derived ahead, the server's base-point table) must
 * give exactly what ethers' own BIP-32 derivation gives from the private keys.
 */
describe('fast derivation agrees with ethers', () => {
  const w = walletFromMnemonic(PHRASE);
  const root = HDNodeWallet.fromPhrase(PHRASE, undefined, 'm');
  const expectedEvm = (i: number) => root.derivePath(`m/44'/60'/0'/0/${i}`).address;
  const expectedTron = (i: number) => tronAddressFromEvm(root.derivePath(`m/44'/195'/0'/0/${i}`).address);

  it('in and across windows, out of order, before and after warm-up', () => {
    const indices = [0, 1, 63, 64, 65, 130, 5, 200, 2, 1000];
    const before = indices.map((i) => [createDeriver(w.evmXpub).evm(i), createDeriver(w.tronXpub).tron(i)]);
    warmUpDerivation();
    const after = indices.map((i) => [createDeriver(w.evmXpub).evm(i), createDeriver(w.tronXpub).tron(i)]);
    const expected = indices.map((i) => [expectedEvm(i), expectedTron(i)]);
    expect(before).toEqual(expected);
    expect(after).toEqual(expected);
    expect(expected[0]![0]).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('one index alone (a pool miss in serve) equals the windowed derivation, both chains', () => {
    warmUpDerivation();
    const evm = createDeriver(w.evmXpub);
    const tron = createDeriver(w.tronXpub);
    for (const i of [0, 1, 63, 64, 999, 2 ** 31 - 1]) {
      expect(evm.alone('EVM', i), `EVM ${i}`).toBe(i < 1000 ? expectedEvm(i) : evm.evm(i));
      expect(tron.alone('TRON', i), `TRON ${i}`).toBe(i < 1000 ? expectedTron(i) : tron.tron(i));
    }
    expect(() => evm.alone('EVM', -1)).toThrow(/address index/);
  });

  it('after warm-up, a fresh wallet: 300 consecutive indices and high ones, both chains, and the public keys', () => {
    warmUpDerivation();
    const phrase = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    const keys = walletFromMnemonic(phrase);
    const r = HDNodeWallet.fromPhrase(phrase, undefined, 'm');
    const evm = createDeriver(keys.evmXpub);
    const tron = createDeriver(keys.tronXpub);
    const indices = [...Array.from({ length: 300 }, (_, i) => i), 4_096, 65_535, 2 ** 31 - 2, 2 ** 31 - 1];
    for (const i of indices) {
      const e = r.derivePath(`m/44'/60'/0'/0/${i}`);
      expect(evm.evm(i), `EVM ${i}`).toBe(e.address);
      expect(evm.publicKey(i), `key ${i}`).toBe(e.publicKey);
      expect(tron.tron(i), `TRON ${i}`).toBe(tronAddressFromEvm(r.derivePath(`m/44'/195'/0'/0/${i}`).address));
    }
  });
});

describe('addresses from key hashes (src/chains/encode.ts) agree with ethers', () => {
  it('EIP-55 for 2,000 random hashes, and TRON base58check', () => {
    for (let i = 0; i < 2000; i++) {
      const hash = randomBytes(20);
      const lower = `0x${Buffer.from(hash).toString('hex')}`;
      expect(evmAddressOf(hash)).toBe(getAddress(lower));
      expect(tronAddressOf(hash)).toBe(tronAddressFromEvm(lower));
    }
    // The all-zero and all-ones hashes, at the edges of the alphabet.
    expect(evmAddressOf(new Uint8Array(20))).toBe('0x0000000000000000000000000000000000000000');
    expect(evmAddressOf(new Uint8Array(20).fill(255))).toBe(getAddress(`0x${'ff'.repeat(20)}`));
    expect(tronAddressOf(new Uint8Array(20))).toBe('T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb');
  });
});

describe('mixed additions (mulBaseAdd) for IL·G + K', () => {
  const table = warmUpDerivation();

  it('equals noble for random scalars and points', () => {
    for (let i = 0; i < 50; i++) {
      const k = BigInt(`0x${Buffer.from(randomBytes(32)).toString('hex')}`) % secp256k1.Point.CURVE().n;
      const K = secp256k1.Point.BASE.multiply(BigInt(`0x${Buffer.from(randomBytes(31)).toString('hex')}`) + 1n).toAffine();
      const j = mulBaseAdd(table, k, K);
      expect(j).toBeDefined();
      const [X, Y, Z] = j!;
      // Jacobian (X, Y, Z) is the affine point (X / Z^2, Y / Z^3).
      const P = secp256k1.Point.CURVE().p;
      const zi = invert(Z, P);
      const expected = secp256k1.Point.BASE.multiplyUnsafe(k).add(secp256k1.Point.fromAffine(K)).toAffine();
      expect([(X * zi * zi) % P, (Y * zi * zi * zi) % P]).toEqual([expected.x, expected.y]);
    }
  });

  it('hands the exceptional cases back (undefined): K = IL·G (a doubling) and K = -IL·G (infinity)', () => {
    const k = BigInt(`0x${Buffer.from(randomBytes(32)).toString('hex')}`) % secp256k1.Point.CURVE().n;
    const kG = secp256k1.Point.BASE.multiply(k);
    expect(mulBaseAdd(table, k, kG.toAffine())).toBeUndefined();
    expect(mulBaseAdd(table, k, kG.negate().toAffine())).toBeUndefined();
  });
});

describe('batched affine additions (mulBaseAddBatch) for many IL·G + K at once', () => {
  const table = warmUpDerivation();
  const n = secp256k1.Point.CURVE().n;
  const bytesOf = (ks: bigint[]) => {
    const out = new Uint8Array(32 * ks.length);
    ks.forEach((k, i) => out.set(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'), 32 * i));
    return out;
  };

  it('equals noble for 300 random scalars, and for scalars with zero bytes (windows skipped)', () => {
    const K = secp256k1.Point.BASE.multiply(BigInt(`0x${Buffer.from(randomBytes(31)).toString('hex')}`) + 1n);
    const ks = Array.from({ length: 300 }, () => BigInt(`0x${Buffer.from(randomBytes(32)).toString('hex')}`) % n);
    ks.push(1n, 255n, 256n, 1n << 248n, (1n << 255n) + 1n, n - 1n);
    const sums = mulBaseAddBatch(table, bytesOf(ks), K.toAffine());
    expect(sums.map((p) => [p?.x, p?.y])).toEqual(
      ks.map((k) => {
        const e = secp256k1.Point.BASE.multiplyUnsafe(k).add(K).toAffine();
        return [e.x, e.y];
      }),
    );
  });

  it('hands back only the exceptional entries (K = IL·G, K = -IL·G); the rest of the batch is right', () => {
    const k = BigInt(`0x${Buffer.from(randomBytes(32)).toString('hex')}`) % n;
    const K = secp256k1.Point.BASE.multiply(k);
    const minusK = n - k;
    const other = 12345n;
    const sums = mulBaseAddBatch(table, bytesOf([other, k, minusK, other]), K.toAffine());
    const expected = secp256k1.Point.BASE.multiply(other).add(K).toAffine();
    expect(sums[1]).toBeUndefined();
    expect(sums[2]).toBeUndefined();
    expect([sums[0], sums[3]]).toEqual([expected, expected]);
  });

  it('a range of 600 children (slices of 256 and a short tail) equals the Jacobian path child by child', () => {
    const w = walletFromMnemonic(PHRASE);
    const change = createDeriver(w.evmXpub).change;
    const long = deriveRange(change, 5_000, 600);
    const short: { x: bigint; y: bigint }[] = [];
    for (let i = 0; i < 600; i += 20) short.push(...deriveRange(change, 5_000 + i, 20));
    expect(long).toEqual(short);
  });
});


describe('ranges on libsecp256k1 (the derivation thread of serve)', () => {
  it('loads here: without it serve derives every address on the noble path, at about twice the CPU', () => {
    expect(nativeCurve()).not.toBeNull();
  });

  it('gives the same key hashes as the noble path, for three wallets, short and long ranges, low and high indices', () => {
    const curve = nativeCurve()!;
    const wallets = [walletFromMnemonic(PHRASE), walletFromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about')];
    const random = HDNodeWallet.fromSeed(randomBytes(32));
    for (const w of [...wallets.flatMap((k) => [k.evmXpub, k.tronXpub]), random.derivePath("m/44'/60'/0'").neuter().extendedKey]) {
      const change = createDeriver(w).change;
      for (const [start, count] of [[0, 1], [0, 31], [40, 300], [2 ** 31 - 3, 3]] as const) {
        expect(Buffer.from(hashRange(change, start, count, curve)).toString('hex'), `${start}+${count}`).toBe(Buffer.from(hashRange(change, start, count, null)).toString('hex'));
      }
    }
    // And the addresses ethers derives from the private keys.
    const root = HDNodeWallet.fromPhrase(PHRASE, undefined, 'm');
    const hashes = hashRange(createDeriver(wallets[0]!.evmXpub).change, 0, 5, curve);
    for (let i = 0; i < 5; i++) expect(evmAddressOf(hashes.subarray(20 * i, 20 * i + 20))).toBe(root.derivePath(`m/44'/60'/0'/0/${i}`).address);
  });

  it('an index libsecp256k1 refuses (IL out of range, or IL·G + K at infinity) is named as the noble path names it', () => {
    const change = createDeriver(walletFromMnemonic(PHRASE).evmXpub).change;
    const refusing = { publicKeyTweakAdd: () => { throw new Error('The tweak was out of range or the resulted public key is invalid'); } };
    expect(() => hashRange(change, 7, 2, refusing)).toThrow('BIP-32 index 7 is invalid for this key; skip it');
  });
});


/**
 * The batch addon (native/derive.c, built by npm ci): serve's derivation thread takes it first.
 * Every child it gives must be exactly what libsecp256k1's own tweak-add gives, and its refusals
 * BIP-32's (IL at or above the group order; IL·G + K at infinity).
 */
describe('ranges on the batch addon', () => {
  const N = secp256k1.Point.CURVE().n;
  const be32 = (x: bigint) => Buffer.from(x.toString(16).padStart(64, '0'), 'hex');

  it('is built here: without it serve derives on tweak-add, at 3-4 times the CPU a child', () => {
    expect(batchCurve()).not.toBeNull();
  });

  it('gives the key hashes libsecp256k1 and the noble path give, for three wallets, short and long ranges, low and high indices', () => {
    const fast = batchCurve()!;
    const wallets = [walletFromMnemonic(PHRASE), walletFromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about')];
    const random = HDNodeWallet.fromSeed(randomBytes(32));
    for (const w of [...wallets.flatMap((k) => [k.evmXpub, k.tronXpub]), random.derivePath("m/44'/60'/0'").neuter().extendedKey]) {
      const change = createDeriver(w).change;
      for (const [start, count] of [[0, 1], [0, 31], [40, 300], [2 ** 31 - 3, 3]] as const) {
        const got = Buffer.from(hashRange(change, start, count, fast)).toString('hex');
        expect(got, `${start}+${count}`).toBe(Buffer.from(hashRange(change, start, count, nativeCurve())).toString('hex'));
        if (count < 100) expect(got, `${start}+${count}`).toBe(Buffer.from(hashRange(change, start, count, null)).toString('hex'));
      }
    }
    const root = HDNodeWallet.fromPhrase(PHRASE, undefined, 'm');
    const hashes = hashRange(createDeriver(wallets[0]!.evmXpub).change, 0, 5, fast);
    for (let i = 0; i < 5; i++) expect(evmAddressOf(hashes.subarray(20 * i, 20 * i + 20))).toBe(root.derivePath(`m/44'/60'/0'/0/${i}`).address);
  });

  it('any tweak, of any parent: the child libsecp256k1 gives, or the same refusal; the edges of the scalar range and a sum at infinity', () => {
    const fast = batchCurve()!;
    const lib = nativeCurve()!;
    const check = (k: bigint, tweaks: bigint[]) => {
      const parent = secp256k1.getPublicKey(be32(k), false);
      const flat = Buffer.concat(tweaks.map(be32));
      const out = new Uint8Array(64 * tweaks.length);
      const ok = new Uint8Array(tweaks.length);
      fast.deriveChildren(parent, flat, out, ok);
      tweaks.forEach((t, i) => {
        let want: Uint8Array | undefined;
        try {
          want = lib.publicKeyTweakAdd(parent, be32(t), false, new Uint8Array(65)).subarray(1);
        } catch {
          want = undefined;
        }
        expect(ok[i], `tweak ${t.toString(16)} of key ${k.toString(16)}`).toBe(want ? 1 : 0);
        expect(Buffer.from(out.subarray(64 * i, 64 * i + 64)).toString('hex')).toBe(want ? Buffer.from(want).toString('hex') : '0'.repeat(128));
      });
    };
    // IL = n - k makes IL·G + K the point at infinity; n and above are out of range; 0 and 1, n - k ± 1
    // (K's negative plus G, a doubling of G where k = n - 1), and runs of equal bytes.
    for (const k of [1n, 2n, 3n, N - 1n, N - 2n, 0xdeadbeefn, BigInt(`0x${'ab'.repeat(32)}`) % N]) {
      check(k, [0n, 1n, 2n, N - k, N - k + 1n, N - k - 1n, N - 1n, N, N + 1n, (1n << 256n) - 1n, k, BigInt(`0x${'01'.repeat(32)}`), BigInt(`0x${'ff'.repeat(31)}00`) % N]);
    }
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: N - 1n }), fc.array(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), { minLength: 1, maxLength: 40 }), (k, tweaks) => check(k, tweaks)),
      { numRuns: 200 },
    );
  });

  it('refuses what is not a parent key and wrong lengths, changing nothing', () => {
    const fast = batchCurve()!;
    const parent = secp256k1.getPublicKey(be32(5n), false);
    const notOnCurve = Uint8Array.from(parent);
    notOnCurve[64] ^= 1;
    expect(() => fast.deriveChildren(notOnCurve, new Uint8Array(32), new Uint8Array(64), new Uint8Array(1))).toThrow('the parent key is not a point of the curve');
    expect(() => fast.deriveChildren(parent, new Uint8Array(33), new Uint8Array(64), new Uint8Array(1))).toThrow('wrong lengths');
    expect(() => fast.deriveChildren(parent, new Uint8Array(32), new Uint8Array(63), new Uint8Array(1))).toThrow('wrong lengths');
    expect(() => fast.deriveChildren(parent.subarray(1), new Uint8Array(32), new Uint8Array(64), new Uint8Array(1))).toThrow('wrong lengths');
  });

  // A review (session 24): an empty range threw, and flags sharing memory with the tweaks were read back corrupted.
  it('an empty range is empty; arrays that share memory give the same children as separate ones', () => {
    const fast = batchCurve()!;
    const change = createDeriver(walletFromMnemonic(PHRASE).evmXpub).change;
    expect(hashRange(change, 3, 0, fast)).toEqual(new Uint8Array(0));
    expect(() => fast.deriveChildren(secp256k1.getPublicKey(be32(5n), false), new Uint8Array(0), new Uint8Array(0), new Uint8Array(0))).not.toThrow();
    const parent = secp256k1.getPublicKey(be32(7n), false);
    const tweaks = Buffer.concat([be32(3n), be32(N - 7n), be32(11n)]);
    const out = new Uint8Array(64 * 3);
    const ok = new Uint8Array(3);
    fast.deriveChildren(parent, tweaks, out, ok);
    // ok over the first bytes of the tweaks, out over the tweaks themselves.
    const shared = new Uint8Array(64 * 3);
    shared.set(tweaks);
    fast.deriveChildren(parent, shared.subarray(0, 96), shared, shared.subarray(0, 3));
    expect([...ok]).toEqual([1, 0, 1]);
    // The flags, written last over the first child's first bytes; the third child whole.
    expect([...shared.subarray(0, 3)]).toEqual([1, 0, 1]);
    expect(Buffer.from(shared.subarray(3, 64)).toString('hex')).toBe(Buffer.from(out.subarray(3, 64)).toString('hex'));
    expect(Buffer.from(shared.subarray(64 * 2)).toString('hex')).toBe(Buffer.from(out.subarray(64 * 2)).toString('hex'));
  });

  it('an index the batch refuses is named as the other paths name it', () => {
    const change = createDeriver(walletFromMnemonic(PHRASE).evmXpub).change;
    const refusing = { deriveChildren: (_p: Uint8Array, _t: Uint8Array, _o: Uint8Array, ok: Uint8Array) => { ok.fill(1); ok[1] = 0; } };
    expect(() => hashRange(change, 7, 3, refusing)).toThrow('BIP-32 index 8 is invalid for this key; skip it');
  });
});
