/**
 * BIP-32 public child derivation for addresses, on @noble/curves and Node's HMAC only (no ethers:
 * this module is all the derivation thread of serve loads), and on libsecp256k1 for the ranges
 * that thread derives when its addon loads. src/chains/derive.ts builds on it.
 */
import { normalizeZ } from '@noble/curves/abstract/curve.js';
import { invert } from '@noble/curves/abstract/modular.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { AppError } from '../core/errors.js';

export type Pt = InstanceType<typeof secp256k1.Point>;
export const Point = secp256k1.Point;
const N = Point.CURVE().n;

/** BIP-32 CKDpub: child public key and chain code of a non-hardened index (noble's arithmetic). */
export function ckdPub(parent: Pt, chainCode: Uint8Array, index: number, parentBytes: Uint8Array = parent.toBytes(true)): { point: Pt; chainCode: Uint8Array } {
  const I = hmacOf(chainCode, parentBytes, index);
  const il = ilOf(I, index);
  const point = Point.BASE.multiplyUnsafe(il).add(parent);
  // Probability below 2^-127; BIP-32 says to skip such an index.
  if (point.equals(Point.ZERO)) throw new AppError('internal', `BIP-32 index ${index} is invalid for this key; skip it`);
  return { point, chainCode: I.subarray(32) };
}

function hmacOf(chainCode: Uint8Array, parentBytes: Uint8Array, index: number): Buffer {
  const data = Buffer.alloc(37);
  data.set(parentBytes, 0);
  data.writeUInt32BE(index, 33);
  return createHmac('sha512', chainCode).update(data).digest();
}

function ilOf(I: Buffer, index: number): bigint {
  const il = BigInt(`0x${I.subarray(0, 32).toString('hex')}`);
  // Both cases have probability below 2^-127; BIP-32 says to skip such an index.
  if (il === 0n || il >= N) throw new AppError('internal', `BIP-32 index ${index} is invalid for this key; skip it`);
  return il;
}

/** A node's public point in affine coordinates. */
export type Affine = { x: bigint; y: bigint };
export const hex64 = (n: bigint) => n.toString(16).padStart(64, '0');

/*
 * Field and point arithmetic for public data. Every input here is public (the xpub and the
 * index), so variable time is safe, and it is what makes derivation fast: noble's precomputed
 * path is constant-time (it scans each window and adds into a fake accumulator) and its complete
 * addition formula reduces after every operation. Here IL·G + K is at most 33 mixed additions
 * (Jacobian accumulator + affine table point, 8M + 3S each) with secp256k1's special reduction.
 * The rare exceptional cases (equal x coordinates) fall back to noble's complete formulas.
 */
const P = Point.CURVE().p;
const PP = P * P;
const P3 = 3n * P;
const FOLD = (1n << 256n) - P; // 2^32 + 977
const MASK = (1n << 256n) - 1n;
/** x mod P for 0 <= x < 2^520: 2^256 = FOLD (mod P), folded twice, then one subtraction. */
const red = (x: bigint): bigint => {
  x = (x & MASK) + (x >> 256n) * FOLD;
  x = (x & MASK) + (x >> 256n) * FOLD;
  return x >= P ? x - P : x;
};
const sub = (a: bigint, b: bigint): bigint => (a >= b ? a - b : a - b + P);

/**
 * IL·G + K in Jacobian coordinates (X, Y, Z), from the table of warmUpDerivation; undefined in
 * the exceptional cases (a doubling or the point at infinity), which the caller hands to noble.
 */
export function mulBaseAdd(table: Affine[][], k: bigint, K: Affine): [bigint, bigint, bigint] | undefined {
  let X = 0n;
  let Y = 0n;
  let Z = 0n;
  let empty = true;
  for (let w = 0; w <= 32; w++, k >>= 8n) {
    let q: Affine;
    if (w < 32) {
      const d = Number(k & 255n);
      if (d === 0) continue;
      q = table[w]![d - 1]!;
    } else {
      q = K;
    }
    if (empty) {
      X = q.x;
      Y = q.y;
      Z = 1n;
      empty = false;
      continue;
    }
    const Z2 = red(Z * Z);
    const U2 = red(q.x * Z2);
    const S2 = red(red(q.y * Z2) * Z);
    const H = sub(U2, X);
    const R = sub(S2, Y);
    if (H === 0n) return undefined;
    const H2 = red(H * H);
    const H3 = red(H2 * H);
    const U1H2 = red(X * H2);
    const X3 = red(R * R + P3 - H3 - 2n * U1H2);
    Y = red(R * sub(U1H2, X3) + PP - Y * H3);
    X = X3;
    Z = red(Z * H);
  }
  return empty ? undefined : [X, Y, Z];
}

/**
 * IL·G + K for many scalars at once, affine: each window step adds one table point to every
 * accumulator, and the divisions of all those affine additions share one inversion
 * (Montgomery's trick), so an addition costs 6 multiplications instead of the 11 of a mixed
 * Jacobian one. `scalars` holds 32 big-endian bytes per scalar (the IL half of each HMAC).
 * An entry is undefined in the exceptional cases (an accumulator meets ±its table point), which
 * the caller hands to noble.
 */
export function mulBaseAddBatch(table: Affine[][], scalars: Uint8Array, K: Affine): (Affine | undefined)[] {
  const n = scalars.length >> 5;
  const ax: bigint[] = new Array(n).fill(0n);
  const ay: bigint[] = new Array(n).fill(0n);
  /** 0: nothing added yet, 1: (ax, ay) holds the sum so far, 2: exceptional, left to noble. */
  const state = new Uint8Array(n);
  const who = new Int32Array(n);
  const qs: Affine[] = new Array(n);
  const dxs: bigint[] = new Array(n);
  const prefix: bigint[] = new Array(n);
  for (let w = 0; w <= 32; w++) {
    let m = 0;
    for (let i = 0; i < n; i++) {
      if (state[i] === 2) continue;
      let q: Affine;
      if (w < 32) {
        const d = scalars[32 * i + 31 - w]!;
        if (d === 0) continue;
        q = table[w]![d - 1]!;
      } else {
        q = K;
      }
      if (state[i] === 0) {
        ax[i] = q.x;
        ay[i] = q.y;
        state[i] = 1;
        continue;
      }
      const dx = sub(q.x, ax[i]!);
      if (dx === 0n) {
        state[i] = 2;
        continue;
      }
      who[m] = i;
      qs[m] = q;
      dxs[m] = dx;
      m++;
    }
    if (m === 0) continue;
    let acc = 1n;
    for (let j = 0; j < m; j++) prefix[j] = acc = red(acc * dxs[j]!);
    let inv = invert(acc, P);
    for (let j = m - 1; j >= 0; j--) {
      const i = who[j]!;
      const q = qs[j]!;
      const dxInv = j > 0 ? red(inv * prefix[j - 1]!) : inv;
      inv = red(inv * dxs[j]!);
      const lambda = red(sub(q.y, ay[i]!) * dxInv);
      const x3 = sub(sub(red(lambda * lambda), ax[i]!), q.x);
      ay[i] = sub(red(lambda * sub(ax[i]!, x3)), ay[i]!);
      ax[i] = x3;
    }
  }
  const out: (Affine | undefined)[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = state[i] === 1 ? { x: ax[i]!, y: ay[i]! } : undefined;
  return out;
}

/**
 * Below BATCH_MIN children a range is derived with Jacobian additions (33 inversions would not
 * pay off); longer ranges go in slices of BATCH_MAX, which keeps the live bigints of a slice
 * small for the derivation thread's 1 MB young generation (measured: 1024 at once was ~15%
 * slower there, with more time in the scavenger).
 */
const BATCH_MIN = 32;
const BATCH_MAX = 256;

/** Children start..start+n-1 of the change node, affine. */
export function deriveRange(node: ChangeNode, start: number, n: number): Affine[] {
  const table = baseTable;
  // noble's complete formulas: before warm-up, and for the exceptional cases of the fast paths.
  const viaNoble = (index: number): Pt => ckdPub(Point.fromAffine(node), node.chainCode, index, node.bytes).point;
  if (!table) {
    const raw: Pt[] = [];
    for (let i = start; i < start + n; i++) raw.push(viaNoble(i));
    return normalizeZ(Point, raw).map((p) => ({ x: p.x, y: p.y }));
  }
  const out: Affine[] = new Array(n);
  if (n >= BATCH_MIN) {
    for (let from = 0; from < n; from += BATCH_MAX) {
      const m = Math.min(BATCH_MAX, n - from);
      const scalars = new Uint8Array(32 * m);
      for (let i = 0; i < m; i++) {
        const index = start + from + i;
        const I = hmacOf(node.chainCode, node.bytes, index);
        ilOf(I, index);
        scalars.set(I.subarray(0, 32), 32 * i);
      }
      const sums = mulBaseAddBatch(table, scalars, node);
      for (let i = 0; i < m; i++) {
        const p = sums[i] ?? viaNoble(start + from + i);
        out[from + i] = { x: p.x, y: p.y };
      }
    }
    return out;
  }
  const jac: [bigint, bigint, bigint, number][] = [];
  for (let i = 0; i < n; i++) {
    const il = ilOf(hmacOf(node.chainCode, node.bytes, start + i), start + i);
    const j = mulBaseAdd(table, il, node);
    if (j) jac.push([...j, i]);
    else {
      const p = viaNoble(start + i);
      out[i] = { x: p.x, y: p.y };
    }
  }
  if (jac.length === 0) return out;
  // Montgomery's trick: one inversion for the whole range.
  const prefix: bigint[] = new Array(jac.length);
  let acc = 1n;
  for (let i = 0; i < jac.length; i++) prefix[i] = acc = red(acc * jac[i]![2]);
  let inv = invert(acc, P);
  for (let i = jac.length - 1; i >= 0; i--) {
    const [X, Y, Z, at] = jac[i]!;
    const zi = i > 0 ? red(inv * prefix[i - 1]!) : inv;
    inv = red(inv * Z);
    const zi2 = red(zi * zi);
    out[at] = { x: red(X * zi2), y: red(red(Y * zi2) * zi) };
  }
  return out;
}

/**
 * For a long-running server: builds d·256^w·G for every byte digit d and window w (8,160
 * affine points, about 2 MB and 100 ms, once), after which each address costs at most 33
 * mixed additions.
 */
let baseTable: Affine[][] | undefined;
export function warmUpDerivation(): Affine[][] {
  if (baseTable) return baseTable;
  const table: Affine[][] = [];
  let base: Pt = Point.BASE;
  for (let w = 0; w < 32; w++) {
    const row: Pt[] = [base];
    for (let d = 2; d <= 255; d++) row.push(row[d - 2]!.add(base));
    table.push(normalizeZ(Point, row).map((p) => ({ x: p.x, y: p.y })));
    base = row[254]!.add(base);
  }
  baseTable = table;
  return table;
}

/** keccak256 of the uncompressed key, last 20 bytes: the address on EVM and (0x41-prefixed) TRON. */
export function hash20Of(p: Affine): Uint8Array {
  return keccak_256(Buffer.from(hex64(p.x) + hex64(p.y), 'hex')).subarray(12);
}

/** The change-level node (0) of an account xpub: every address is one child step below it. */
export interface ChangeNode {
  x: bigint;
  y: bigint;
  chainCode: Uint8Array;
  /** The compressed public key, as the HMAC of each child step takes it. */
  bytes: Uint8Array;
}

/** What of libsecp256k1 the derivation uses (the `secp256k1` package's native addon). */
export interface NativeCurve {
  publicKeyTweakAdd(publicKey: Uint8Array, tweak: Uint8Array, compressed: boolean, output: Uint8Array): Uint8Array;
}

let native: NativeCurve | null | undefined;
/**
 * libsecp256k1, Bitcoin Core's library, through the `secp256k1` package's addon (prebuilt for
 * Linux x64 glibc and musl, macOS arm64 and Windows x64): null when the addon does not load here. The package's own fallback, elliptic in JavaScript, is not used: it is slower than
 * the noble path of this module, which stays for that case.
 */
export function nativeCurve(): NativeCurve | null {
  if (native === undefined) {
    try {
      native = createRequire(import.meta.url)('secp256k1/bindings') as NativeCurve;
    } catch {
      native = null;
    }
  }
  return native;
}

/**
 * The project's own addon (native/derive.c, built by `npm ci`): children in batches from a table
 * of multiples of G, on libsecp256k1's arithmetic compiled in. out gets 64 bytes (x, y) a child;
 * ok[i] is 0 where BIP-32 says the index is invalid.
 */
export interface BatchCurve {
  deriveChildren(parent: Uint8Array, tweaks: Uint8Array, out: Uint8Array, ok: Uint8Array): void;
}

let batch: BatchCurve | null | undefined;
/** The batch addon, or null when it was not built here (derivation then takes libsecp256k1's tweak-add). */
export function batchCurve(): BatchCurve | null {
  if (batch === undefined) {
    try {
      // Two levels below the package root in src/ and dist/bundle alike (src/core/version.ts).
      batch = createRequire(import.meta.url)(fileURLToPath(new URL('../../build/Release/cryptopay_derive.node', import.meta.url))) as BatchCurve;
    } catch {
      batch = null;
    }
  }
  return batch;
}

const isBatch = (c: BatchCurve | NativeCurve): c is BatchCurve => 'deriveChildren' in c;

/** The node's key as libsecp256k1 takes it: 0x04, x, y. */
function uncompressed(node: ChangeNode): Uint8Array {
  const key = new Uint8Array(65);
  key[0] = 4;
  key.set(Buffer.from(hex64(node.x) + hex64(node.y), 'hex'), 1);
  return key;
}

/**
 * keccak hashes (20 bytes each, one after another) of children start..start+count-1: on the
 * batch addon when it is built (~9 µs a child in batches of 128, against ~22-40 µs of
 * libsecp256k1's tweak-add: bench/CHANGES.md, twenty-third round), else on libsecp256k1 (IL·G + K
 * in one call, about half the CPU of the noble batch below, ninth round), else on the noble path.
 * `curve` chooses for the tests, which hold the three to the same answers.
 */
export function hashRange(node: ChangeNode, start: number, count: number, curve: BatchCurve | NativeCurve | null = batchCurve() ?? nativeCurve()): Uint8Array {
  const out = new Uint8Array(20 * count);
  const invalid = (index: number) => new AppError('internal', `BIP-32 index ${index} is invalid for this key; skip it`);
  if (count === 0) return out;
  if (curve && isBatch(curve)) {
    const parent = uncompressed(node);
    const tweaks = new Uint8Array(32 * count);
    for (let i = 0; i < count; i++) tweaks.set(hmacOf(node.chainCode, node.bytes, start + i).subarray(0, 32), 32 * i);
    const children = new Uint8Array(64 * count);
    const ok = new Uint8Array(count);
    curve.deriveChildren(parent, tweaks, children, ok);
    for (let i = 0; i < count; i++) {
      // IL out of range or IL·G + K at infinity: the same answer as the other paths give.
      if (ok[i] !== 1) throw invalid(start + i);
      out.set(keccak_256(children.subarray(64 * i, 64 * i + 64)).subarray(12), 20 * i);
    }
    return out;
  }
  if (curve) {
    const parent = uncompressed(node);
    const child = new Uint8Array(65);
    for (let i = 0; i < count; i++) {
      const index = start + i;
      const I = hmacOf(node.chainCode, node.bytes, index);
      try {
        curve.publicKeyTweakAdd(parent, I.subarray(0, 32), false, child);
      } catch {
        // IL out of range or IL·G + K at infinity (libsecp256k1 refuses both): the same answer
        // as the noble path gives, from ilOf or ckdPub.
        throw invalid(index);
      }
      out.set(keccak_256(child.subarray(1)).subarray(12), 20 * i);
    }
    return out;
  }
  const points = deriveRange(node, start, count);
  for (let i = 0; i < count; i++) out.set(hash20Of(points[i]!), 20 * i);
  return out;
}
