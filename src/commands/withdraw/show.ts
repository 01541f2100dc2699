import type { Context } from '../../context.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  await printWithdrawal(ctx, await (await ctx.service()).getWithdrawal(id, ctx.globals.mchId));
}
