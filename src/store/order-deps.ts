/**
 * What creating an order needs beyond the store: the input schema (zod) and address derivation
 * without ethers (src/chains/deriver.ts). Kept apart from heavy.ts so that `serve` and
 * `order create` never load ethers for it.
 */
export { deriveAddress } from '../chains/deriver.js';
export { createOrderSchema, parseInput } from '../core/schemas.js';
