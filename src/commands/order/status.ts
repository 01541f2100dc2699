import type { Context } from '../../context.js';
import { printJson } from '../output.js';
import { orderByRef } from './ref.js';

/** `order status ID|OID`: locally by id or oid; on a remote, the interface's status lookup by id. */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  let id = ref;
  let status: string;
  if (ctx.isRemote()) status = await (await ctx.service()).getOrderStatus(ref);
  else ({ id, status } = await orderByRef(ctx, await ctx.local('order status'), ref));
  if (ctx.globals.json) return printJson(ctx, { id, status });
  ctx.io.stdout.write(`${status}\n`);
}
