import type { Context } from '../../context.js';
import { confirmChange } from '../common.js';
import { printJson, printRecord, warn } from '../output.js';

export async function run(ctx: Context, _opts: unknown, mchId?: string): Promise<void> {
  const service = await ctx.local('merchant rotate-secret');
  const m = await service.showMerchant(mchId ?? ctx.globals.mchId);
  await confirmChange(ctx, 'Rotate the secret', [
    ['merchant', `${m.mchId} (${m.name})`],
    ['effect', 'the current secret stops working at once'],
  ], 'cuts off every client that signs with the current secret');
  const r = await service.rotateSecret(m.mchId);
  if (ctx.globals.json) return printJson(ctx, r);
  await printRecord(ctx, [['mchId', r.mchId], ['secret', r.secret]]);
  await warn(ctx, 'the new secret is shown this once; requests signed with the old one are refused from now on');
}
