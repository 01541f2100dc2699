import type { Context } from '../../context.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const order = await (await ctx.local('order show')).getOrder(id, ctx.globals.mchId);
  await printOrder(ctx, order);
}
