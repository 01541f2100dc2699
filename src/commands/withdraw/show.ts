import type { Context } from '../../context.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  await printWithdrawal(ctx, await (await ctx.local('withdraw show')).getWithdrawal(id, ctx.globals.mchId));
}
