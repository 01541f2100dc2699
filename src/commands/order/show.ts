import type { Context } from '../../context.js';
import { printOrder } from '../views.js';
import { orderByRef } from './ref.js';

/** `order show ID|OID`. */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  const service = await ctx.local('order show');
  const order = await orderByRef(ctx, service, ref);
  const { onChainPayments } = await import('../../chains/watch/seen.js');
  await printOrder(ctx, { ...order, onChain: onChainPayments(service.ledger.db, await service.registry(), order.id) });
}
