import type { Context } from '../../context.js';
import { actForOwner } from '../owner.js';
import { printJson, printRecord } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, uid: string): Promise<void> {
  await actForOwner(ctx, { uid });
  // A uid the merchant never saw is refused, not shown as zeros: it is most likely a typo.
  const b = await (await ctx.service()).balance(uid, { asset: opts.asset?.toUpperCase(), mchId: ctx.globals.mchId, known: true });
  if (ctx.globals.json) return printJson(ctx, b);
  await printRecord(ctx, [
    ['uid', b.uid],
    ['merchant', b.mchId],
    ['available', `${b.available} ${b.asset}`],
    ['held', `${b.held} ${b.asset}`],
  ]);
}
