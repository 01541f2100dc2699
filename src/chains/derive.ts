import { normalizeZ } from '@noble/curves/abstract/curve.js';
import { invert } from '@noble/curves/abstract/modular.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createHmac } from 'node:crypto';
import { HDNodeVoidWallet, HDNodeWallet, Mnemonic, SigningKey, getAddress, getBytes, hexlify, randomBytes } from 'ethers';
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { decodeBase58Check, encodeBase58Check } from './address.js';

/** BIP-44 account levels; payment addresses are their children 0/i. */
export const ACCOUNT_PATHS: Readonly<Record<ChainType, string>> = { EVM: "m/44'/60'/0'", TRON: "m/44'/195'/0'" };
export const MAX_INDEX = 2 ** 31 - 1;

const XPUB_VERSION = '0488b21e';
const PRIVATE_VERSIONS: Record<string, string> = { '0488ade4': 'xprv', '04358394': 'tprv' };

function refuse(field: string, problem: string): never {
  throw new AppError('invalid', `${field} ${problem}`);
}

/** Returns the depth; refuses anything but a well-formed mainnet xpub. Never echoes the key. */
function inspectXpub(xpub: unknown, field: string): number {
  if (typeof xpub !== 'string') refuse(field, 'must be a string holding an extended public key (xpub...)');
  const decoded = decodeBase58Check(xpub);
  if (!decoded.ok) refuse(field, `is not a valid extended public key: ${decoded.reason}`);
  const b = decoded.payload;
  if (b.length !== 78) refuse(field, `is not a valid extended public key: decodes to ${b.length} bytes, BIP-32 keys have 78`);
  const version = hexlify(b.subarray(0, 4)).slice(2);
  const priv = PRIVATE_VERSIONS[version];
  if (priv) {
    refuse(field, `is an extended private key (${priv}): a private key must never be given to this service; give the account-level extended public key (xpub) instead`);
  }
  if (version !== XPUB_VERSION) {
    refuse(field, `is not a mainnet extended public key: version bytes 0x${version}, expected 0x${XPUB_VERSION} (xpub)`);
  }
  const depth = b[4]!;
  // BIP-32: a master key has no parent, so a depth-0 key claiming one is corrupt.
  if (depth === 0 && b.subarray(5, 13).some((x) => x !== 0)) {
    refuse(field, 'is not a valid extended public key: depth 0 with a parent fingerprint or child number');
  }
  const key = b.subarray(45, 78);
  if (key[0] !== 2 && key[0] !== 3) refuse(field, 'is not a valid extended public key: the key is not a compressed public key');
  try {
    SigningKey.computePublicKey(key, true);
  } catch {
    refuse(field, 'is not a valid extended public key: the key is not a point on secp256k1');
  }
  return depth;
}

/** Any depth; the BIP-32 vectors use it, the service uses parseAccountXpub. */
export function parseExtendedPublicKey(xpub: unknown, field = 'xpub'): string {
  inspectXpub(xpub, field);
  return xpub as string;
}

export function parseAccountXpub(xpub: unknown, field: string): string {
  const depth = inspectXpub(xpub, field);
  if (depth !== 3) {
    refuse(
      field,
      `is an extended public key at depth ${depth}; the account-level key is expected (depth 3: ${ACCOUNT_PATHS.EVM} for EVM, ${ACCOUNT_PATHS.TRON} for TRON), from which addresses 0/i are derived`,
    );
  }
  return xpub as string;
}

function checkIndex(index: number): number {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
    throw new AppError('invalid', `address index must be an integer from 0 to ${MAX_INDEX}, got ${String(index).slice(0, 24)}`);
  }
  return index;
}

type Pt = InstanceType<typeof secp256k1.Point>;
/** How many addresses a deriver works out ahead of demand. */
const WINDOW = 64;
const Point = secp256k1.Point;
const N = Point.CURVE().n;

/** BIP-32 CKDpub: child public key and chain code of a non-hardened index (noble's arithmetic). */
function ckdPub(parent: Pt, chainCode: Uint8Array, index: number, parentBytes: Uint8Array = parent.toBytes(true)): { point: Pt; chainCode: Uint8Array } {
  const I = hmacOf(chainCode, parentBytes, index);
  const il = ilOf(I, index);
  const point = mulBase(il).add(parent);
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

export interface Deriver {
  evm(index: number): string;
  tron(index: number): string;
  /** Compressed secp256k1 public key of child 0/index, 0x-hex. */
  publicKey(index: number): string;
}

const CACHE_MAX = 64;
const derivers = new Map<string, Deriver>();

export function createDeriver(xpub: string): Deriver {
  const hit = derivers.get(xpub);
  if (hit) {
    // Re-insert so eviction drops the least recently used merchant, not the busiest.
    derivers.delete(xpub);
    derivers.set(xpub, hit);
    return hit;
  }
  parseExtendedPublicKey(xpub);
  const node = HDNodeWallet.fromExtendedKey(xpub);
  if (!(node instanceof HDNodeVoidWallet)) throw new AppError('internal', 'xpub parsed as a private node');
  // The change level is shared by every index, so each address costs one child step: an HMAC,
  // one multiplication of the base point (noble's precomputed tables) and one point addition.
  const change = ckdPub(Point.fromHex(node.publicKey.slice(2)), getBytes(node.chainCode), 0);
  const changeBytes = change.point.toBytes(true);
  const parent: Affine = { x: change.point.x, y: change.point.y };
  // Addresses are handed out in index order, so derive ahead: the first miss derives one
  // index, later misses a window of WINDOW, made affine with one shared inversion.
  let window: { start: number; points: Affine[] } = { start: 0, points: [] };
  let misses = 0;
  const pointAt = (index: number): Affine => {
    checkIndex(index);
    const cached = window.points[index - window.start];
    if (cached && index >= window.start) return cached;
    const count = Math.min(misses++ === 0 ? 1 : WINDOW, MAX_INDEX - index + 1);
    window = { start: index, points: deriveRange(change.point, parent, change.chainCode, changeBytes, index, count) };
    return window.points[0]!;
  };
  // The 20-byte key hash is the address on both chains: EIP-55 hex on EVM, 0x41-prefixed
  // base58check on TRON.
  const hash20 = (index: number) => {
    const p = pointAt(index);
    return keccak_256(Buffer.from(hex64(p.x) + hex64(p.y), 'hex')).subarray(12);
  };
  const deriver: Deriver = Object.freeze({
    evm: (index: number) => getAddress(hexlify(hash20(index))),
    tron: (index: number) => {
      const payload = new Uint8Array(21);
      payload[0] = 0x41;
      payload.set(hash20(index), 1);
      return encodeBase58Check(payload);
    },
    publicKey: (index: number) => {
      const p = pointAt(index);
      return `0x${p.y & 1n ? '03' : '02'}${hex64(p.x)}`;
    },
  });
  derivers.set(xpub, deriver);
  if (derivers.size > CACHE_MAX) derivers.delete(derivers.keys().next().value!);
  return deriver;
}

type Affine = { x: bigint; y: bigint };
const hex64 = (n: bigint) => n.toString(16).padStart(64, '0');

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
function mulBaseAdd(table: Affine[][], k: bigint, K: Affine): [bigint, bigint, bigint] | undefined {
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

/** Children count..count+n-1 of the change node, affine, with one shared inversion. */
function deriveRange(changePoint: Pt, parent: Affine, chainCode: Uint8Array, parentBytes: Uint8Array, start: number, n: number): Affine[] {
  const table = baseTable;
  if (!table) {
    const raw: Pt[] = [];
    for (let i = start; i < start + n; i++) raw.push(ckdPub(changePoint, chainCode, i, parentBytes).point);
    return normalizeZ(Point, raw).map((p) => ({ x: p.x, y: p.y }));
  }
  const out: Affine[] = new Array(n);
  const jac: [bigint, bigint, bigint, number][] = [];
  for (let i = 0; i < n; i++) {
    const il = ilOf(hmacOf(chainCode, parentBytes, start + i), start + i);
    const j = mulBaseAdd(table, il, parent);
    if (j) jac.push([...j, i]);
    else {
      const p = ckdPub(changePoint, chainCode, start + i, parentBytes).point;
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

/** IL·G for public IL, noble's variable-time path (before warm-up, and the exceptional cases). */
function mulBase(k: bigint): Pt {
  return Point.BASE.multiplyUnsafe(k);
}

/**
 * For a long-running server: builds d·256^w·G for every byte digit d and window w (8,160
 * affine points, about 2 MB and 100 ms, once), after which each address costs at most 33
 * mixed additions.
 */
let baseTable: Affine[][] | undefined;
export function warmUpDerivation(): void {
  if (baseTable) return;
  const table: Affine[][] = [];
  let base: Pt = Point.BASE;
  for (let w = 0; w < 32; w++) {
    const row: Pt[] = [base];
    for (let d = 2; d <= 255; d++) row.push(row[d - 2]!.add(base));
    table.push(normalizeZ(Point, row).map((p) => ({ x: p.x, y: p.y })));
    base = row[254]!.add(base);
  }
  baseTable = table;
}

/** Addresses worked out ahead of demand on another thread (serve: src/chains/derive-ahead.ts). */
let ahead: { take(chain: ChainType, xpub: string, index: number): string | undefined } | undefined;
export function deriveAheadWith(pool: typeof ahead): void {
  ahead = pool;
}

export function deriveAddress(chainType: ChainType, xpub: string, index: number): string {
  const ready = ahead?.take(chainType, xpub, index);
  if (ready !== undefined) return ready;
  const d = createDeriver(xpub);
  return chainType === 'EVM' ? d.evm(index) : d.tron(index);
}

export interface WalletKeys {
  mnemonic: string;
  evmXpub: string;
  tronXpub: string;
}

export function walletFromMnemonic(phrase: string): WalletKeys {
  if (typeof phrase !== 'string' || !Mnemonic.isValidMnemonic(phrase)) {
    throw new AppError('invalid', 'mnemonic is not a valid BIP-39 English phrase (unknown word, wrong word count or checksum)');
  }
  const mnemonic = Mnemonic.fromPhrase(phrase);
  const root = HDNodeWallet.fromSeed(mnemonic.computeSeed());
  return {
    mnemonic: mnemonic.phrase,
    evmXpub: root.derivePath(ACCOUNT_PATHS.EVM).neuter().extendedKey,
    tronXpub: root.derivePath(ACCOUNT_PATHS.TRON).neuter().extendedKey,
  };
}

/** 24 words from 32 bytes of CSPRNG output; only the xpubs are meant to be stored. */
export function generateWallet(): WalletKeys {
  return walletFromMnemonic(Mnemonic.fromEntropy(randomBytes(32)).phrase);
}
