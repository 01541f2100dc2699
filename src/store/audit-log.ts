import { and, asc, desc, eq, gt, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import { FOLLOW_MAX, type AuditView, type LogFollow } from '../core/types.js';
import { auditLog } from './schema.js';
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

const view = (e: typeof auditLog.$inferSelect): AuditView => ({
  id: Number(e.id), at: e.at, actor: e.actor, action: e.action, mchId: e.merchantId, subject: `${e.subjectType}:${e.subjectId}`,
  detail: JSON.parse(e.detail) as Record<string, unknown>,
});

/** The audit log, newest first; entries are written by `audit()` in each change's own transaction. */
export function readLog(s: StoreCtx, filter: LogFilter & { limit?: number }): AuditView[] {
  return s.db.select().from(auditLog).where(and(...logWhere(filter))).orderBy(desc(auditLog.id)).limit(filter.limit ?? 50).all().map(view);
}

/** A page of `log`, newest first; the cursor is the number of the last entry shown. */
export function pageLog(s: StoreCtx, filter: LogFilter & { limit?: number; cursor?: string }): Page<AuditView> {
  const where = logWhere(filter);
  const limit = filter.limit ?? 50;
  const count = (extra?: SQL) => Number(s.db.select({ n: sql<bigint>`count(*)` }).from(auditLog).where(and(...where, extra)).get()?.n ?? 0);
  let after: SQL | undefined;
  let before = 0;
  if (filter.cursor !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(filter.cursor)) throw unknownCursor(filter.cursor, 'an entry');
    const at = Number(filter.cursor);
    after = lt(auditLog.id, at);
    before = count(gte(auditLog.id, at));
  }
  const rows = s.db.select().from(auditLog).where(and(...where, after)).orderBy(desc(auditLog.id)).limit(limit + 1).all();
  return pageOf(rows, limit, count(), before, (e) => String(e.id), view);
}

/**
 * `log --follow`, locally and through the extension (decisions "Remote mode, whole"). Entries
 * are numbered in commit order (one writer at a time), so reading up to the newest number taken
 * first, and next time after it, misses nothing and repeats nothing, whoever commits meanwhile.
 * Without `after`: the newest `limit` entries (default 10), oldest first. With it: those after
 * it, oldest first, at most `limit` (default and most FOLLOW_MAX); the mark is the last entry
 * read, or the newest of the whole log when all were answered, so that the next ask reads only
 * what is new, however few of the entries the filter keeps.
 */
export function followLog(s: StoreCtx, filter: LogFilter & { after?: number; limit?: number }): LogFollow {
  const upTo = lastLogId(s);
  if (filter.after === undefined) return { entries: readLog(s, { ...filter, limit: filter.limit ?? 10 }).reverse(), mark: upTo };
  const max = Math.min(filter.limit ?? FOLLOW_MAX, FOLLOW_MAX);
  const rows = s.db.select().from(auditLog).where(and(...logWhere(filter), gt(auditLog.id, filter.after), lte(auditLog.id, upTo))).orderBy(asc(auditLog.id)).limit(max + 1).all();
  if (rows.length > max) return { entries: rows.slice(0, max).map(view), mark: Number(rows[max - 1]!.id) };
  return { entries: rows.map(view), mark: Math.max(upTo, filter.after) };
}

/** The number of the newest entry (0 on an empty log). */
function lastLogId(s: StoreCtx): number {
  return Number(s.db.select({ id: sql<bigint>`coalesce(max(${auditLog.id}), 0)` }).from(auditLog).get()?.id ?? 0);
}

