import { asc, eq } from 'drizzle-orm';
import { AppError } from '../core/errors.js';
import { hasActivity } from './balances.js';
import { resolveOrderRef } from './orders.js';
import { merchants, withdrawals } from './schema.js';
import type { StoreCtx } from './store-context.js';

/** What a command names that belongs to one merchant: an order (id or oid), a withdrawal id, a user. */
export interface Owned {
  order?: string;
  withdrawal?: string;
  uid?: string;
}

/**
 * The merchant that holds what a command names, for an operator on the local ledger (who acts on
 * the whole ledger): an id names one; an oid or a uid names the one merchant that has it, and one
 * that several merchants have is refused (usage) naming them. Undefined when nothing is named or
 * nothing is found: the operation's own refusal then says so.
 */
export function ownerOf(s: StoreCtx, what: Owned): string | undefined {
  if (what.withdrawal !== undefined) {
    return s.db.select({ m: withdrawals.merchantId }).from(withdrawals).where(eq(withdrawals.id, what.withdrawal)).get()?.m;
  }
  if (what.order !== undefined) {
    try {
      return resolveOrderRef(s, what.order).merchantId;
    } catch (e) {
      if (e instanceof AppError && e.kind === 'not_found') return undefined;
      throw e;
    }
  }
  if (what.uid !== undefined) {
    const uid = what.uid;
    const all = s.db.select({ id: merchants.id }).from(merchants).orderBy(asc(merchants.seq)).all().map((m) => m.id);
    const holders = all.filter((m) => hasActivity(s, m, uid));
    if (holders.length > 1) throw new AppError('usage', `user ${uid} is a user of ${holders.length} merchants (${holders.join(', ')}): pass --mch-id to say which`);
    return holders[0];
  }
  return undefined;
}
