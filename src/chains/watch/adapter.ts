/**
 * Where EVM and TRON differ for the watcher, and only here (decisions §6b): TRON's JSON-RPC
 * speaks 20-byte hex addresses (the base58check address without its 0x41 prefix) and the same
 * 32-byte transaction hashes, so the scanner is one code path and this file converts at the edge.
 */
import type { ChainType } from '../../core/types.js';
import { base58check, formatAddress } from '../encode.js';

export interface ChainAdapter {
  readonly chainType: ChainType;
  /** A registry token address as the node's log filter and logs spell it: 0x + 40 lower-case hex. */
  toNodeAddress(address: string): string;
  /** 40 hex digits from a log to the key ordersForAddresses looks up (0x hex on EVM, base58check on TRON). */
  lookupKey(hex40: string): string;
  /** 40 hex digits from a log to the form the ledger stores (EIP-55, or base58check on TRON). */
  fromNodeAddress(hex40: string): string;
  /** A 0x-prefixed 32-byte hash from the node to the form the chain's users write. */
  txHash(nodeHash: string): string;
}

const evm: ChainAdapter = {
  chainType: 'EVM',
  toNodeAddress: (a) => a.toLowerCase(),
  lookupKey: (hex40) => `0x${hex40}`,
  fromNodeAddress: (hex40) => formatAddress('EVM', Buffer.from(hex40, 'hex')),
  txHash: (h) => h.toLowerCase(),
};

const tron: ChainAdapter = {
  chainType: 'TRON',
  toNodeAddress(a) {
    const payload = base58check.decode(a);
    if (payload.length !== 21 || payload[0] !== 0x41) throw new Error(`${a} is not a TRON address`);
    return `0x${Buffer.from(payload.subarray(1)).toString('hex')}`;
  },
  lookupKey: (hex40) => formatAddress('TRON', Buffer.from(hex40, 'hex')),
  fromNodeAddress: (hex40) => formatAddress('TRON', Buffer.from(hex40, 'hex')),
  // TRON explorers and wallets write the hash as 64 hex digits without 0x.
  txHash: (h) => h.toLowerCase().replace(/^0x/, ''),
};

export const adapterFor = (chainType: ChainType): ChainAdapter => (chainType === 'TRON' ? tron : evm);
