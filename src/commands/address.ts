import type { Context } from '../context.js';
import { printJson, printRecord } from './output.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const addresses = await (await ctx.service()).getAddresses(id);
  if (ctx.globals.json) return printJson(ctx, addresses);
  await printRecord(ctx, Object.entries(addresses));
}
