import type { ChainType } from '../core/types.js';

/** EVM: 0x and 64 hex digits; TRON: 64 hex digits (decisions §6). No ethers needed. */
export function isTxHash(chainType: ChainType, s: unknown): boolean {
  if (typeof s !== 'string') return false;
  return chainType === 'EVM' ? /^0x[0-9a-fA-F]{64}$/.test(s) : /^[0-9a-fA-F]{64}$/.test(s);
}
