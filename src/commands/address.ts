import type { Context } from '../context.js';
import { AppError } from '../core/errors.js';
import { orderByRef } from './order/ref.js';
import { printJson, printRecord } from './output.js';

/** `address ID|OID`: the interface's lookup by id; what it does not find is looked up as an oid. */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  const service = await ctx.service();
  let addresses;
  try {
    addresses = await service.getAddresses(ref);
  } catch (e) {
    if (!(e instanceof AppError && e.kind === 'not_found')) throw e;
    // An oid (order show and order status take one too). Neither an id nor an oid: the lookup's
    // own "Not found" (the interface's text). On a remote the oid lookup is signed: with no
    // secret to sign it, the answer stays the id lookup's too.
    const order = await orderByRef(ctx, ref).catch((byOid: unknown) => {
      const unsigned = byOid instanceof AppError && byOid.kind === 'usage' && /needs the merchant secret/.test(byOid.message);
      throw unsigned || (byOid instanceof AppError && byOid.kind === 'not_found') ? e : byOid;
    });
    addresses = await service.getAddresses(order.id);
  }
  if (ctx.globals.json) return printJson(ctx, addresses);
  await printRecord(ctx, Object.entries(addresses));
}
