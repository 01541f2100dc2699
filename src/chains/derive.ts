import { normalizeZ } from '@noble/curves/abstract/curve.js';
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

/** BIP-32 CKDpub: child public key and chain code of a non-hardened index. */
function ckdPub(parent: Pt, chainCode: Uint8Array, index: number, parentBytes = parent.toBytes(true)): { point: Pt; chainCode: Uint8Array } {
  const data = Buffer.alloc(37);
  data.set(parentBytes, 0);
  data.writeUInt32BE(index, 33);
  const I = createHmac('sha512', chainCode).update(data).digest();
  const il = BigInt(`0x${I.subarray(0, 32).toString('hex')}`);
  // Both cases have probability below 2^-127; BIP-32 says to skip such an index.
  if (il === 0n || il >= N) throw new AppError('internal', `BIP-32 index ${index} is invalid for this key; skip it`);
  const point = mulBase(il).add(parent);
  if (point.equals(Point.ZERO)) throw new AppError('internal', `BIP-32 index ${index} is invalid for this key; skip it`);
  return { point, chainCode: I.subarray(32) };
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
  // Addresses are handed out in index order, so derive ahead: the first miss derives one
  // index, later misses a window of WINDOW, normalised to affine with one shared inversion.
  let window: { start: number; points: Pt[] } = { start: 0, points: [] };
  let misses = 0;
  const pointAt = (index: number): Pt => {
    checkIndex(index);
    const cached = window.points[index - window.start];
    if (cached && index >= window.start) return cached;
    const count = Math.min(misses++ === 0 ? 1 : WINDOW, MAX_INDEX - index + 1);
    const raw: Pt[] = [];
    for (let i = index; i < index + count; i++) raw.push(ckdPub(change.point, change.chainCode, i, changeBytes).point);
    window = { start: index, points: normalizeZ(Point, raw) };
    return window.points[0]!;
  };
  // The 20-byte key hash is the address on both chains: EIP-55 hex on EVM, 0x41-prefixed
  // base58check on TRON.
  const hash20 = (index: number) => keccak_256(pointAt(index).toBytes(false).subarray(1)).subarray(12);
  const deriver: Deriver = Object.freeze({
    evm: (index: number) => getAddress(hexlify(hash20(index))),
    tron: (index: number) => {
      const payload = new Uint8Array(21);
      payload[0] = 0x41;
      payload.set(hash20(index), 1);
      return encodeBase58Check(payload);
    },
    publicKey: (index: number) => hexlify(pointAt(index).toBytes(true)),
  });
  derivers.set(xpub, deriver);
  if (derivers.size > CACHE_MAX) derivers.delete(derivers.keys().next().value!);
  return deriver;
}

/**
 * IL·G for public IL. Every input here is public (the xpub and the index), so variable time is
 * safe, and it is what makes derivation fast: noble's precomputed path is constant-time (it scans
 * each window and adds into a fake accumulator), which public data does not need. With the
 * table of warmUpDerivation, IL·G is at most 32 additions of table points, zero digits skipped.
 */
let baseTable: Pt[][] | undefined;
function mulBase(k: bigint): Pt {
  if (!baseTable) return Point.BASE.multiplyUnsafe(k);
  let p = Point.ZERO;
  for (let w = 0; k > 0n; w++, k >>= 8n) {
    const d = Number(k & 255n);
    if (d) p = p.add(baseTable[w]![d - 1]!);
  }
  return p;
}

/**
 * For a long-running server: builds d·256^w·G for every byte digit d and window w (8,160
 * points, about 2 MB and 100 ms, once), after which each address costs ~32 point additions.
 */
export function warmUpDerivation(): void {
  if (baseTable) return;
  const table: Pt[][] = [];
  let base: Pt = Point.BASE;
  for (let w = 0; w < 32; w++) {
    const row: Pt[] = [base];
    for (let d = 2; d <= 255; d++) row.push(row[d - 2]!.add(base));
    table.push(normalizeZ(Point, row));
    base = row[254]!.add(base);
  }
  baseTable = table;
}

export function deriveAddress(chainType: ChainType, xpub: string, index: number): string {
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
