import type { Context } from '../../context.js';
import { printJson, printRecord } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, uid: string): Promise<void> {
  const b = await (await ctx.service()).balance(uid, { asset: opts.asset?.toUpperCase(), mchId: ctx.globals.mchId });
  if (ctx.globals.json) return printJson(ctx, b);
  await printRecord(ctx, [
    ['uid', b.uid],
    ['merchant', b.mchId],
    ['available', `${b.available} ${b.asset}`],
    ['held', `${b.held} ${b.asset}`],
  ]);
}
