/**
 * Addresses from a 20-byte key hash, without ethers (the derivation thread of serve loads only
 * noble and this): EIP-55 mixed-case hex on EVM, 0x41-prefixed base58check on TRON. Tested
 * against ethers' getAddress and the published vectors (test/chains).
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import type { ChainType } from '../core/types.js';

export const base58check = createBase58check(sha256);

/** EIP-55: a hex digit is upper case where the keccak of the lower-case address has a nibble >= 8. */
export function evmAddressOf(hash20: Uint8Array): string {
  const hex = Buffer.from(hash20.buffer, hash20.byteOffset, 20).toString('hex');
  const h = keccak_256(Buffer.from(hex, 'latin1'));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? h[i >> 1]! >> 4 : h[i >> 1]! & 15;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  return out;
}

export function tronAddressOf(hash20: Uint8Array): string {
  const payload = new Uint8Array(21);
  payload[0] = 0x41;
  payload.set(hash20, 1);
  return base58check.encode(payload);
}

export function formatAddress(chain: ChainType, hash20: Uint8Array): string {
  return chain === 'EVM' ? evmAddressOf(hash20) : tronAddressOf(hash20);
}
