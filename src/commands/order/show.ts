import type { Context } from '../../context.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const order = await (await ctx.local('order show')).getOrder(id);
  await printOrder(ctx, order);
}
