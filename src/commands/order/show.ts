import type { Context } from '../../context.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const service = await ctx.local('order show');
  const order = await service.getOrder(id, ctx.globals.mchId);
  const { onChainPayments } = await import('../../chains/watch/seen.js');
  await printOrder(ctx, { ...order, onChain: onChainPayments(service.ledger.db, await service.registry(), order.id) });
}
