import { HDNodeVoidWallet, HDNodeWallet, Mnemonic, SigningKey, getAddress, getBytes, hexlify, randomBytes } from 'ethers';
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { decodeBase58Check, encodeBase58Check } from './address.js';
import { type Affine, type ChangeNode, ckdPub, deriveRange, hash20Of, hex64, Point } from './ckd.js';

export { warmUpDerivation } from './ckd.js';

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

/** How many addresses a deriver works out ahead of demand. */
const WINDOW = 64;

export interface Deriver {
  evm(index: number): string;
  tron(index: number): string;
  /** Compressed secp256k1 public key of child 0/index, 0x-hex. */
  publicKey(index: number): string;
  /** The change-level node, for deriving elsewhere (the derivation thread of serve). */
  readonly change: ChangeNode;
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
  const hash20 = (index: number) => hash20Of(pointAt(index));
  const deriver: Deriver = Object.freeze({
    evm: (index: number) => formatAddress('EVM', hash20(index)),
    tron: (index: number) => formatAddress('TRON', hash20(index)),
    change: { x: parent.x, y: parent.y, chainCode: change.chainCode, bytes: changeBytes },
    publicKey: (index: number) => {
      const p = pointAt(index);
      return `0x${p.y & 1n ? '03' : '02'}${hex64(p.x)}`;
    },
  });
  derivers.set(xpub, deriver);
  if (derivers.size > CACHE_MAX) derivers.delete(derivers.keys().next().value!);
  return deriver;
}

/** The address of a 20-byte key hash: EIP-55 hex on EVM, 0x41-prefixed base58check on TRON. */
export function formatAddress(chain: ChainType, hash20: Uint8Array): string {
  if (chain === 'EVM') return getAddress(hexlify(hash20));
  const payload = new Uint8Array(21);
  payload[0] = 0x41;
  payload.set(hash20, 1);
  return encodeBase58Check(payload);
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
