/**
 * What only changing operations need: ethers (key derivation, address checks) and zod (input
 * schemas, the chain registry). Imported on first use, so `order status` and the other reads
 * start without them.
 */
export { validateAddress } from '../chains/address.js';
export { generateWallet, parseAccountXpub } from '../chains/derive.js';
export { createRegistry, maxDecimals } from '../chains/registry.js';
export {
  createOrderSchema,
  parseInput,
  refundSchema,
  withdrawApplySchema,
  withdrawConfirmSchema,
  withdrawRejectSchema,
  withdrawVerifySchema,
} from '../core/schemas.js';
