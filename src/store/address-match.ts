import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { ChainType } from '../core/types.js';
import { orderAddresses } from './schema.js';

/**
 * The order address `address` on chain type `chainType`, as a condition that searches the one
 * index on lower(address) (migration 0010): an EVM address in any spelling, a TRON address
 * (base58check, case-sensitive) exactly as written.
 */
export function addressMatch(chainType: ChainType, address: string): SQL {
  const key = sql`lower(${orderAddresses.address}) = ${address.toLowerCase()}`;
  return chainType === 'EVM'
    ? and(eq(orderAddresses.chainType, 'EVM'), key)!
    : and(eq(orderAddresses.chainType, chainType), key, eq(orderAddresses.address, address))!;
}
