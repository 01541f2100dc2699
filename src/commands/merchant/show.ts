import type { Context } from '../../context.js';
import { printMerchant } from '../views.js';

export async function run(ctx: Context, _opts: unknown, mchId?: string): Promise<void> {
  const m = await (await ctx.local('merchant show')).showMerchant(mchId ?? ctx.globals.mchId);
  await printMerchant(ctx, m);
}
