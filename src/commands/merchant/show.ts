import type { Context } from '../../context.js';
import { printMerchant } from '../views.js';

export async function run(ctx: Context, _opts: unknown, mchId?: string): Promise<void> {
  const local = await ctx.local('merchant show');
  const m = await local.showMerchant(mchId ?? ctx.globals.mchId);
  await printMerchant(ctx, { ...m, payoutWallets: (await local.payoutWallets(m.mchId)).wallets });
}
