/**
 * What creating an order needs beyond the store: the input schema (zod) and address derivation
 * without ethers (src/chains/deriver.ts), the notifyUrl check (node:net's BlockList, whose
 * loading was ~10 ms of a read-only command's start-up). Kept apart from heavy.ts so that `serve`
 * and `order create` never load ethers for it.
 */
export { checkLogoUrl, checkNotifyUrl, privateHint } from '../callbacks/guard.js';
export { deriveAddress } from '../chains/deriver.js';
export { createOrderSchema, parseInput } from '../core/schemas.js';
