import { and, asc, eq, gt, isNotNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Q } from './ledger.js';
import { enqueueEvent, orderFields } from './outbox.js';
import { callbackCursors, chainCursors, expiryHolds, orders } from './schema.js';

/**
 * `order.expired` (decisions §9): an order's expiry is derived from time (decisions §3), so no
 * change writes the event; the sender sweeps for it. Before it tells a merchant an order expired
 * unpaid, the sweep waits for the chains (docs/decisions.md, "order.expired waits for the chain"):
 *
 * - until every watched chain has been read past the expiry (a payment in a block stamped before
 *   it still pays the order, not late, however late the watcher reads it), and
 * - while a payment seen on chain, stamped before the expiry, is waiting for its confirmations.
 *
 * Neither wait lasts longer than EXPIRY_HOLD_MAX_MS after the expiry: a chain whose node is down
 * for longer does not keep merchants from ever hearing. The status an order reads as is not
 * changed by any of this: it is EXPIRED at once (decisions §3).
 */

/** How far back a sweep of a ledger that was never swept looks: older expiries are not news. */
const FIRST_SWEEP_LOOKBACK_MS = 86_400_000;
/** Each sweep looks this far behind the last one: processes' clocks and commits differ a little. */
const SWEEP_OVERLAP_MS = 10_000;
/** The longest an order's order.expired waits for the chains after its expiry. */
const EXPIRY_HOLD_MAX_MS = 60 * 60_000;

/**
 * Up to when (ms) every watched chain has been read: the least `seen_through` of the chains some
 * process read within the hold (`head_at`, the last time a watcher had the node's head: a watcher
 * restarting, or whose node has been down for less than that, is not done with its chain, and
 * `serve --no-watch` may run beside `cryptopay watch`). A chain not read for longer than the hold
 * (its node down for good, or removed from the config) and one whose node never answered are not
 * waited for: waiting could not find a payment there. `watched`: the chains this process is about
 * to watch; one never read yet holds the sweep until its first scan. Infinity when no chain is
 * watched: payments are then only ever recorded by hand.
 */
function chainsReadThrough(q: Q, now: number, watched: readonly string[]): number {
  const rows = q.select({ chainId: chainCursors.chainId, seenThrough: chainCursors.seenThrough, headAt: chainCursors.headAt }).from(chainCursors).all();
  let through = Infinity;
  const unread = new Set(watched);
  for (const r of rows) {
    unread.delete(r.chainId);
    if (r.headAt !== null && r.headAt > now - EXPIRY_HOLD_MAX_MS) through = Math.min(through, r.seenThrough ?? -Infinity);
  }
  return unread.size > 0 ? -Infinity : through;
}

interface Window {
  from: number;
  /** Orders that expired before this are due (unless a payment of theirs is confirming). */
  upTo: number;
  /** Orders that expired at or before this are due whatever the chains say. */
  heldNoLongerThan: number;
}

function windowOf(q: Q, now: number, watched: readonly string[], cursor = readCursor(q)): Window {
  const heldNoLongerThan = now - EXPIRY_HOLD_MAX_MS;
  return {
    from: cursor ? cursor.value - SWEEP_OVERLAP_MS : now - FIRST_SWEEP_LOOKBACK_MS,
    upTo: Math.max(Math.min(now, chainsReadThrough(q, now, watched)), heldNoLongerThan),
    heldNoLongerThan,
  };
}

/** A payment of the order seen on chain, stamped before its expiry, still confirming. */
const confirmingOnTime = sql`exists (select 1 from chain_payments p where p.order_id = ${orders.id} and p.status = 'seen' and (p.block_time is null or p.block_time <= ${orders.expiredAt}))`;
const announced = sql`exists (select 1 from callbacks c where c.subject_id = ${orders.id} and c.event = 'order.expired')`;

/** Unpaid orders with a notifyUrl that expired in (from, upTo) and have no order.expired yet. */
function unannounced(w: Window): SQL {
  return and(eq(orders.status, 'PENDING_PAY'), gt(orders.expiredAt, w.from), lt(orders.expiredAt, w.upTo), isNotNull(orders.notifyUrl), sql`not ${announced}`)!;
}

/** ... of them, the ones to announce now. */
const due = (w: Window) => and(unannounced(w), sql`(${orders.expiredAt} <= ${w.heldNoLongerThan} or not ${confirmingOnTime})`)!;
/** ... and the ones to hold, not yet held. */
const toHold = (w: Window) => and(unannounced(w), gt(orders.expiredAt, w.heldNoLongerThan), confirmingOnTime, sql`${orders.id} not in (select order_id from expiry_holds)`)!;
/**
 * Held orders the sweep has to do something about: paid, announced, or no longer waiting. Read
 * from the few held ids to their orders by key (never through every order: the sender asks each
 * second, on the event loop that answers the API).
 */
const settledHold = (w: Window) =>
  and(sql`${orders.id} in (select order_id from expiry_holds)`, sql`(${orders.status} <> 'PENDING_PAY' or ${announced} or ${orders.expiredAt} <= ${w.heldNoLongerThan} or not ${confirmingOnTime})`)!;

/**
 * Writes `order.expired` for every order due (above) and moves the sweep's cursor; answers how
 * many were written. An order whose payment is confirming is kept aside (expiry_holds) and looked
 * at by every sweep until it is paid or announced, while the cursor moves on. Safe in several
 * processes at once: an order has at most one such event (a unique index). Runs inside the
 * caller's transaction, so an order paid meanwhile is seen as paid. `watched`: the chains this
 * process watches (serve), read or not yet.
 */
export function sweepExpired(tx: Q, now: number, o: { watched?: readonly string[]; limit?: number } = {}): number {
  const limit = o.limit ?? 500;
  const cursor = readCursor(tx);
  const w = windowOf(tx, now, o.watched ?? [], cursor);
  const announce = (row: typeof orders.$inferSelect) =>
    enqueueEvent(tx, {
      merchantId: row.merchantId, event: 'order.expired', subjectType: 'order', subjectId: row.id, url: row.notifyUrl!, now,
      fields: { ...orderFields(row), status: 'EXPIRED', expiredAt: row.expiredAt },
    }) ? 1 : 0;
  let written = 0;
  const rows = tx.select().from(orders).where(due(w)).orderBy(asc(orders.expiredAt)).limit(limit).all();
  for (const row of rows) written += announce(row);
  tx.insert(expiryHolds).select(tx.select({ orderId: orders.id, expiredAt: orders.expiredAt }).from(orders).where(toHold(w))).onConflictDoNothing().run();
  // A held order still unpaid is announced now (once: the event's unique index); a paid one only
  // leaves the holds.
  for (const row of tx.select().from(orders).where(settledHold(w)).all()) {
    if (row.status === 'PENDING_PAY') written += announce(row);
    tx.delete(expiryHolds).where(eq(expiryHolds.orderId, row.id)).run();
  }
  // A full page means more may wait: the next sweep starts where this one stopped.
  const reached = rows.length === limit ? rows[rows.length - 1]!.expiredAt : w.upTo;
  const next = Math.max(reached, cursor?.value ?? 0);
  tx.insert(callbackCursors).values({ name: 'expiry', value: next }).onConflictDoUpdate({ target: callbackCursors.name, set: { value: next } }).run();
  return written;
}

function readCursor(q: Q): { value: number } | undefined {
  return q.select({ value: callbackCursors.value }).from(callbackCursors).where(eq(callbackCursors.name, 'expiry')).get();
}

/**
 * Whether a sweep would write anything: a read, outside any transaction, so a sender that polls
 * every second takes the ledger's write lock only when there is something to write.
 */
export function expiryDue(q: Q, now: number, watched: readonly string[] = []): boolean {
  const w = windowOf(q, now, watched);
  const one = (where: SQL) => !!q.select({ id: orders.id }).from(orders).where(where).limit(1).get();
  return one(due(w)) || one(toHold(w)) || one(settledHold(w));
}
