import type { Context } from '../../context.js';
import { printJson } from '../output.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const status = await (await ctx.service()).getOrderStatus(id);
  if (ctx.globals.json) return printJson(ctx, { id, status });
  ctx.io.stdout.write(`${status}\n`);
}
