/**
 * Addresses of an account xpub, 0/index, without ethers: what creating an order needs (the
 * CLI's order create and serve load this, not ethers). Keys are checked in full, with reasons,
 * when a merchant is added (src/chains/derive.ts); here a stored xpub is only decoded.
 */
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { type Affine, type ChangeNode, ckdPub, deriveRange, hash20Of, hex64, Point, type Pt } from './ckd.js';
import { base58check, formatAddress } from './encode.js';

export const MAX_INDEX = 2 ** 31 - 1;
/** How many addresses a deriver works out ahead of demand. */
const WINDOW = 64;

/** Public key and chain code of a mainnet xpub (BIP-32 serialisation, 78 bytes). */
function accountNodeOf(xpub: string): { point: Pt; chainCode: Uint8Array } {
  let b: Uint8Array;
  try {
    b = base58check.decode(xpub);
  } catch {
    throw new AppError('invalid', 'xpub is not a valid extended public key (base58check)');
  }
  if (b.length !== 78 || Buffer.from(b.subarray(0, 4)).toString('hex') !== '0488b21e') {
    throw new AppError('invalid', 'xpub is not a mainnet extended public key');
  }
  try {
    return { point: Point.fromBytes(b.subarray(45, 78)), chainCode: b.subarray(13, 45) };
  } catch {
    throw new AppError('invalid', 'xpub does not hold a point of secp256k1');
  }
}

/**
 * What makes a wallet's addresses: its key and chain code (hex), whatever the rest of its
 * serialisation says (depth, parent fingerprint, child number). Two xpubs with the same key are
 * the same wallet: an attacker review told the public test wallet apart by its string, and a
 * changed fingerprint passed for another wallet with the same addresses. The bytes as they are
 * (a compressed key has one encoding, and every xpub was checked when it was stored): no point is
 * decompressed, as merchant add compares every merchant's wallet inside its transaction.
 */
export function walletKeyOf(xpub: string): string {
  let b: Uint8Array;
  try {
    b = base58check.decode(xpub);
  } catch {
    throw new AppError('invalid', 'xpub is not a valid extended public key (base58check)');
  }
  if (b.length !== 78) throw new AppError('invalid', 'xpub is not an extended public key (78 bytes)');
  return Buffer.from(b.subarray(13, 78)).toString('hex');
}

function checkIndex(index: number): number {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
    throw new AppError('invalid', `address index must be an integer from 0 to ${MAX_INDEX}, got ${String(index).slice(0, 24)}`);
  }
  return index;
}

export interface Deriver {
  evm(index: number): string;
  tron(index: number): string;
  /** Compressed secp256k1 public key of child 0/index, 0x-hex. */
  publicKey(index: number): string;
  /**
   * The address of this one index, outside the window ahead (~0.1 ms): for a miss of serve's
   * address pool, where a window would stall the whole batch while the pool is about to deliver.
   */
  alone(chain: ChainType, index: number): string;
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
  const node = accountNodeOf(xpub);
  // The change level is shared by every index, so each address costs one child step: an HMAC,
  // one multiplication of the base point and one point addition.
  const child = ckdPub(node.point, node.chainCode, 0);
  const change: ChangeNode = { x: child.point.x, y: child.point.y, chainCode: child.chainCode, bytes: child.point.toBytes(true) };
  // Addresses are handed out in index order, so derive ahead: the first miss derives one
  // index, later misses a window of WINDOW, made affine with one shared inversion.
  let window: { start: number; points: Affine[] } = { start: 0, points: [] };
  let misses = 0;
  const pointAt = (index: number): Affine => {
    checkIndex(index);
    const cached = window.points[index - window.start];
    if (cached && index >= window.start) return cached;
    const count = Math.min(misses++ === 0 ? 1 : WINDOW, MAX_INDEX - index + 1);
    window = { start: index, points: deriveRange(change, index, count) };
    return window.points[0]!;
  };
  // The 20-byte key hash is the address on both chains: EIP-55 hex on EVM, 0x41-prefixed
  // base58check on TRON.
  const hash20 = (index: number) => hash20Of(pointAt(index));
  const deriver: Deriver = Object.freeze({
    evm: (index: number) => formatAddress('EVM', hash20(index)),
    tron: (index: number) => formatAddress('TRON', hash20(index)),
    change,
    alone: (chain: ChainType, index: number) => formatAddress(chain, hash20Of(deriveRange(change, checkIndex(index), 1)[0]!)),
    publicKey: (index: number) => {
      const p = pointAt(index);
      return `0x${p.y & 1n ? '03' : '02'}${hex64(p.x)}`;
    },
  });
  derivers.set(xpub, deriver);
  if (derivers.size > CACHE_MAX) derivers.delete(derivers.keys().next().value!);
  return deriver;
}

/** Addresses worked out ahead of demand on another thread (serve: src/chains/derive-ahead.ts). */
let ahead: { take(chain: ChainType, xpub: string, index: number): string | undefined } | undefined;
export function deriveAheadWith(pool: typeof ahead): void {
  ahead = pool;
}

export function deriveAddress(chainType: ChainType, xpub: string, index: number): string {
  if (ahead) return ahead.take(chainType, xpub, index) ?? createDeriver(xpub).alone(chainType, index);
  const d = createDeriver(xpub);
  return chainType === 'EVM' ? d.evm(index) : d.tron(index);
}

