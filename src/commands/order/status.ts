import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import { printJson } from '../output.js';
import { orderByRef } from './ref.js';

/**
 * `order status ID|OID`. On a remote an id goes to the interface's status lookup and what it
 * does not find is looked up as an oid; locally the ledger resolves either at once.
 */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  let id = ref;
  let status: string;
  if (ctx.isRemote()) {
    try {
      status = await (await ctx.service()).getOrderStatus(ref);
    } catch (e) {
      if (!(e instanceof AppError && e.kind === 'not_found')) throw e;
      try {
        ({ id, status } = await orderByRef(ctx, ref));
      } catch (byOid) {
        // No secret to sign the oid lookup with: the answer is the id's, not a demand for one.
        if (byOid instanceof AppError && byOid.kind === 'usage' && /needs the merchant secret/.test(byOid.message)) {
          throw new AppError('not_found', `${e.message} (no order has this id; looking it up as an oid needs the merchant secret: CRYPTOPAY_SECRET, --secret-file FILE or a profile)`);
        }
        throw byOid;
      }
    }
  } else {
    // By id, SQLite alone answers (src/store/order-status-read.ts); an oid, an id of another
    // merchant or none at all, and an out-of-date ledger go through the service as before.
    const path = await ctx.ledgerFile('order');
    const { quickOrderStatus } = await import('../../store/order-status-read.js');
    const quick = quickOrderStatus(path, ref, ctx.globals.mchId, ctx.now());
    if (quick) status = quick;
    else ({ id, status } = await orderByRef(ctx, ref));
  }
  if (ctx.globals.json) return printJson(ctx, { id, status });
  ctx.io.stdout.write(`${status}\n`);
}
