import { asc, eq } from 'drizzle-orm';
import { AppError } from '../core/errors.js';
import { hasActivity } from './balances.js';
import { oidOfSeveral, ordersByOid } from './orders.js';
import { merchants, orders, withdrawals } from './schema.js';
import type { StoreCtx } from './store-context.js';

/** What a command names that belongs to one merchant: an order by its id or its oid, a withdrawal id, a user. */
export interface Owned {
  orderId?: string;
  oid?: string;
  withdrawal?: string;
  uid?: string;
}

/** Who holds it: the merchant, and the order an oid named (for the messages). */
export interface Owner {
  mchId: string;
  orderId?: string;
}

/**
 * The merchant that holds what a command names, for an operator on the local ledger (who acts on
 * the whole ledger). An id is looked up as an id only and an oid as an oid only (a code review:
 * one merchant's oid may be another's order id, and looking the oid up as an id first picked
 * the wrong merchant). What several merchants hold is refused (usage) naming them; undefined when
 * nobody holds it.
 */
export function ownerOf(s: StoreCtx, what: Owned): Owner | undefined {
  if (what.withdrawal !== undefined) {
    const m = s.db.select({ m: withdrawals.merchantId }).from(withdrawals).where(eq(withdrawals.id, what.withdrawal)).get()?.m;
    return m === undefined ? undefined : { mchId: m };
  }
  if (what.orderId !== undefined) {
    const o = s.db.select({ m: orders.merchantId, id: orders.id }).from(orders).where(eq(orders.id, what.orderId)).get();
    return o === undefined ? undefined : { mchId: o.m, orderId: o.id };
  }
  if (what.oid !== undefined) {
    const oid = what.oid;
    const found = ordersByOid(s, oid);
    if (found.length > 1) throw oidOfSeveral(oid, found);
    return found[0] && { mchId: found[0].merchantId, orderId: found[0].id };
  }
  if (what.uid !== undefined) {
    const uid = what.uid;
    const all = s.db.select({ id: merchants.id }).from(merchants).orderBy(asc(merchants.seq)).all().map((m) => m.id);
    const holders = all.filter((m) => hasActivity(s, m, uid));
    if (holders.length > 1) throw new AppError('usage', `user ${uid} is a user of ${holders.length} merchants (${holders.join(', ')}): pass --mch-id to say which`);
    return holders[0] === undefined ? undefined : { mchId: holders[0] };
  }
  return undefined;
}
