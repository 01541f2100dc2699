import type { Context } from '../../context.js';
import { printOrder } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  await printOrder(ctx, await (await ctx.service()).showOrder({ mchId: ctx.globals.mchId, id }));
}
