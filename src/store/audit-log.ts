import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import { FOLLOW_MAX, type AuditView, type LogFollow } from '../core/types.js';
import { auditLog } from './schema.js';
import { invalid } from '../core/errors.js';
import { pageOf, unknownCursor, type Page } from './paging.js';
import type { StoreCtx } from './store-context.js';

export type { AuditView };

/** What `log` filters on; `since` inclusive and `until` exclusive, on the entry's time. */
export interface LogFilter {
  orderId?: string;
  withdrawalId?: string;
  mchId?: string;
  since?: number;
  until?: number;
}

/**
 * An entry's number as the reader sees it. The log of one merchant (every merchant's over HTTP,
 * an operator's with --mch-id) is numbered on its own, 1, 2, 3 ... in commit order
 * (`merchant_seq`, given by the ledger's trigger, migration 0014): numbered in the whole log, a
 * merchant read the others' volume off the gaps between its own entries, and off the mark of
 * log/follow as it grew (an outside review). The whole log keeps its own numbers.
 */
const numberOf = (filter: LogFilter) => (filter.mchId ? auditLog.merchantSeq : auditLog.id);

function logWhere(filter: LogFilter): SQL[] {
  const where: SQL[] = [];
  const subjects: SQL[] = [];
  if (filter.orderId) subjects.push(and(eq(auditLog.subjectType, 'order'), eq(auditLog.subjectId, filter.orderId))!);
  if (filter.withdrawalId) subjects.push(and(eq(auditLog.subjectType, 'withdrawal'), eq(auditLog.subjectId, filter.withdrawalId))!);
  if (subjects.length) where.push(or(...subjects)!);
  if (filter.mchId) where.push(eq(auditLog.merchantId, filter.mchId));
  if (filter.since !== undefined) where.push(gte(auditLog.at, filter.since));
  if (filter.until !== undefined) where.push(lt(auditLog.at, filter.until));
  return where;
}

type Entry = typeof auditLog.$inferSelect;
/** The number of a read entry, as numberOf orders them. */
const entryNumber = (filter: LogFilter) => (e: Entry): number => Number(filter.mchId ? e.merchantSeq : e.id);

const viewOf = (filter: LogFilter) => (e: Entry): AuditView => ({
  id: entryNumber(filter)(e), at: e.at, actor: e.actor, action: e.action, mchId: e.merchantId, subject: `${e.subjectType}:${e.subjectId}`,
  detail: JSON.parse(e.detail) as Record<string, unknown>,
});

/** The audit log, newest first; entries are written by `audit()` in each change's own transaction. */
export function readLog(s: StoreCtx, filter: LogFilter & { limit?: number }): AuditView[] {
  return s.db.select().from(auditLog).where(and(...logWhere(filter))).orderBy(desc(numberOf(filter))).limit(filter.limit ?? 50).all().map(viewOf(filter));
}

/** A page of `log`, newest first; the cursor is the number of the last entry shown. */
export function pageLog(s: StoreCtx, filter: LogFilter & { limit?: number; cursor?: string }): Page<AuditView> {
  const where = logWhere(filter);
  const n = numberOf(filter);
  const limit = filter.limit ?? 50;
  const count = (extra?: SQL) => Number(s.db.select({ n: sql<bigint>`count(*)` }).from(auditLog).where(and(...where, extra)).get()?.n ?? 0);
  let after: SQL | undefined;
  let before = 0;
  if (filter.cursor !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(filter.cursor)) throw unknownCursor(filter.cursor, 'an entry');
    const at = Number(filter.cursor);
    // Past the newest entry: not a cursor this log gave (one of the whole ledger's numbers, from
    // before a merchant's entries were numbered on their own) and its page would be a wrong one.
    if (at > lastNumber(s, filter.mchId)) throw unknownCursor(filter.cursor, 'an entry');
    after = lt(n, at);
    before = count(gte(n, at));
  }
  const rows = s.db.select().from(auditLog).where(and(...where, after)).orderBy(desc(n)).limit(limit + 1).all();
  const number = entryNumber(filter);
  return pageOf(rows, limit, count(), before, (e) => String(number(e)), viewOf(filter));
}

/**
 * `log --follow`, locally and through the extension (decisions "Remote mode, whole"). Entries
 * are numbered in commit order (one writer at a time; a merchant's too), so reading up to the
 * newest number taken first, and next time after it, misses nothing and repeats nothing, whoever
 * commits meanwhile. Without `after`: the newest `limit` entries (default 10), oldest first. With
 * it: those after it, oldest first, at most `limit` (default and most FOLLOW_MAX); the mark is the
 * last entry read, or the newest of the log read (the merchant's own, for one merchant) when all
 * were answered, so that the next ask reads only what is new, however few of the entries the
 * filter keeps.
 */
export function followLog(s: StoreCtx, filter: LogFilter & { after?: number; limit?: number }): LogFollow {
  const upTo = lastNumber(s, filter.mchId);
  const n = numberOf(filter);
  const view = viewOf(filter);
  if (filter.after === undefined) {
    // Up to the mark only: an entry committed between the two reads (another process) comes with
    // the next ask, not with this one and again with that (code review).
    const newest = s.db.select().from(auditLog).where(and(...logWhere(filter), lte(n, upTo))).orderBy(desc(n)).limit(filter.limit ?? 10).all();
    return { entries: newest.map(view).reverse(), mark: upTo };
  }
  // A mark past the newest entry is not one this log gave: most likely one kept from before a
  // merchant's entries were numbered on their own (migration 0014), whose numbers counted the
  // whole ledger. Answered "nothing new" it would hide every entry until the count caught up.
  if (filter.after > upTo) {
    throw invalid(`after ${filter.after} is past the newest entry of this log (${upTo}): a mark is the number of an entry, and since migration 0014 a merchant's entries are numbered on their own; ask without after to start again`);
  }
  const max = Math.min(filter.limit ?? FOLLOW_MAX, FOLLOW_MAX);
  const rows = s.db.select().from(auditLog).where(and(...logWhere(filter), gt(n, filter.after), lte(n, upTo))).orderBy(asc(n)).limit(max + 1).all();
  if (rows.length > max) return { entries: rows.slice(0, max).map(view), mark: entryNumber(filter)(rows[max - 1]!) };
  return { entries: rows.map(view), mark: upTo };
}

/** The number of the newest entry, of one merchant's log or of the whole (0 when there is none). */
function lastNumber(s: StoreCtx, mchId: string | undefined): number {
  const q = mchId
    ? s.db.select({ n: sql<bigint>`coalesce(max(${auditLog.merchantSeq}), 0)` }).from(auditLog).where(eq(auditLog.merchantId, mchId))
    : s.db.select({ n: sql<bigint>`coalesce(max(${auditLog.id}), 0)` }).from(auditLog);
  return Number(q.get()?.n ?? 0);
}
