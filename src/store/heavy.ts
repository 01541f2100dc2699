/**
 * What only changing operations need: zod (input schemas, the chain registry) and the address
 * checks. Imported on first use, so `order status` and the other reads start without them.
 * Wallets (ethers) are imported by the operations that make or read one (merchant add and
 * update), so that serve does not load ethers at all.
 */
export { validateAddress } from '../chains/address.js';
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
