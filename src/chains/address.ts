import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { evmAddressOf, tronAddressOf } from './encode.js';

/*
 * On noble and @scure/base, as the derivation and encode.ts are: serve checks addresses (a
 * withdrawal's `to`, the registry's token contracts) without loading ethers, which only wallets
 * (merchant add, serve --dev) need. test/chains/address.test.ts compares every function here
 * with ethers on generated addresses.
 */

export const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const TRON_PREFIX = 0x41;

type Base58Check = { ok: true; payload: Uint8Array } | { ok: false; reason: string };

/**
 * Base58check as Bitcoin, TRON and BIP-32 use it: leading '1's are zero bytes, the last four
 * bytes are the first four of sha256(sha256(payload)). Shared with derive.ts for extended keys.
 */
export function decodeBase58Check(s: string, maxChars = 120): Base58Check {
  // The cap keeps a hostile multi-kilobyte string from reaching the base conversion (quadratic).
  if (s.length === 0 || s.length > maxChars || !BASE58.test(s)) {
    return { ok: false, reason: 'not a base58 string' };
  }
  const raw = base58.decode(s);
  if (raw.length < 5) return { ok: false, reason: 'too short' };
  const payload = raw.subarray(0, raw.length - 4);
  const check = sha256(sha256(payload)).subarray(0, 4);
  if (!raw.subarray(raw.length - 4).every((b, i) => b === check[i])) {
    return { ok: false, reason: 'base58check checksum does not match (mistyped character?)' };
  }
  return { ok: true, payload };
}

/** The EIP-55 spelling of an address already known to be 0x and 40 hex digits. */
const checksummed = (s: string): string => evmAddressOf(Buffer.from(s.slice(2), 'hex'));

function evmProblem(s: string): string | null {
  if (!EVM_HEX.test(s)) return 'expected 0x followed by 40 hex digits';
  const hex = s.slice(2);
  // Single-case hex carries no checksum (EIP-55), so it is taken as is.
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return null;
  return checksummed(s) === s ? null : 'mixed-case checksum (EIP-55) does not match';
}

function tronProblem(s: string): string | null {
  const d = decodeBase58Check(s, 64);
  if (!d.ok) return d.reason;
  if (d.payload.length !== 21) return `decodes to ${d.payload.length} bytes, a TRON address has 21`;
  if (d.payload[0] !== TRON_PREFIX) return 'first byte is not 0x41 (not a TRON address)';
  return null;
}

export const isEvmAddress = (s: unknown): boolean => typeof s === 'string' && evmProblem(s) === null;
export const isTronAddress = (s: unknown): boolean => typeof s === 'string' && tronProblem(s) === null;

export function normalizeEvmAddress(s: unknown, field = 'address'): string {
  if (typeof s !== 'string') throw new AppError('invalid', `${field} must be a string holding an EVM address`);
  const problem = evmProblem(s);
  if (problem) throw new AppError('invalid', `${field} is not a valid EVM address: ${problem}`);
  return checksummed(s);
}

export function normalizeTronAddress(s: unknown, field = 'address'): string {
  if (typeof s !== 'string') throw new AppError('invalid', `${field} must be a string holding a TRON address`);
  const problem = tronProblem(s);
  if (problem) throw new AppError('invalid', `${field} is not a valid TRON address: ${problem}`);
  return s;
}

export function validateAddress(chainType: ChainType, s: unknown, field = 'to'): string {
  return chainType === 'EVM' ? normalizeEvmAddress(s, field) : normalizeTronAddress(s, field);
}

/** The TRON address holding the same 20-byte key hash as an EVM address. */
export function tronAddressFromEvm(evmAddress: string): string {
  return tronAddressOf(Buffer.from(normalizeEvmAddress(evmAddress, 'evmAddress').slice(2), 'hex'));
}

export { isTxHash } from './tx-hash.js';
