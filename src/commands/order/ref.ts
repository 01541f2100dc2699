import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import type { OrderDetail, OrderShow } from '../../core/types.js';

const notFoundHere = (e: unknown) => e instanceof AppError && e.kind === 'not_found' && e.message === 'Order not found';

/**
 * The order a command names by its id or its merchant's oid (issue #15 item 2); with `onChain`,
 * with the payments the watcher saw (on a remote they always come with it). Locally the id is tried first, then the oid of --mch-id or of the one
 * merchant that has it (src/store/orders.ts); on a remote, the signed show of the merchant's own
 * order by id, then by oid. Not found says where else to look; under --json the message stays the
 * interface's exact "Order not found".
 */
export async function orderByRef(ctx: Context, ref: string, opts: { onChain: true }): Promise<OrderShow>;
export async function orderByRef(ctx: Context, ref: string): Promise<OrderDetail>;
export async function orderByRef(ctx: Context, ref: string, opts: { onChain?: boolean } = {}): Promise<OrderShow | OrderDetail> {
  const mchId = ctx.globals.mchId;
  try {
    if (ctx.isRemote()) {
      const service = await ctx.service();
      return await service.showOrder({ mchId, id: ref }).catch((e) => (notFoundHere(e) ? service.showOrder({ mchId, oid: ref }) : Promise.reject(e)));
    }
    const local = await ctx.local('order');
    const order = await local.orderByRef(ref, mchId);
    // The payments as the watcher saw them need the chain registry (and zod, ethers' checks):
    // only `order show` prints them, so `order status` and the filters start without them.
    return opts.onChain ? await local.showOrder({ id: order.id }) : order;
  } catch (e) {
    if (!ctx.globals.json && notFoundHere(e)) {
      const scope = mchId ? ` of merchant ${mchId}` : '';
      throw new AppError('not_found', `Order not found: no order${scope} has the id or oid ${ref} ${findHint(ref)}`);
    }
    throw e;
  }
}

/** Where else an order that a reference did not name may be found. */
export const findHint = (ref: string) => `(cryptopay order find ${ref} also searches uids, transaction hashes and deposit addresses)`;

/** The id of the order a filter names by id or oid (`log --order`, `refund list --order`). */
export async function orderIdOf(ctx: Context, ref: string | undefined): Promise<string | undefined> {
  return ref === undefined ? undefined : (await orderByRef(ctx, ref)).id;
}

/**
 * The withdrawal a filter names (`log --withdrawal`, `callbacks list --withdrawal`), refused when
 * there is none: an id mistyped answered an empty list, as if it had no entries (a new-user trial).
 */
export async function withdrawalIdOf(ctx: Context, id: string | undefined): Promise<string | undefined> {
  if (id === undefined) return undefined;
  try {
    return (await (await ctx.service()).getWithdrawal(id, ctx.globals.mchId)).id;
  } catch (e) {
    if (!ctx.globals.json && e instanceof AppError && e.kind === 'not_found') {
      const scope = ctx.globals.mchId ? ` of merchant ${ctx.globals.mchId}` : '';
      throw new AppError('not_found', `withdrawal not found: no withdrawal${scope} has the id ${id} (cryptopay withdraw list lists them)`);
    }
    throw e;
  }
}
