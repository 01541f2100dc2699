import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import { notFound } from '../core/errors.js';
import { shownUrl } from '../core/shown-url.js';
import type { CallbackShow, CallbackStatus, CallbackView } from '../core/types.js';
import type { Q } from './ledger.js';
import type { CallbackRow, EventFields } from './outbox.js';
import { afterCursor, pageOf, type Page } from './paging.js';
import { callbackAttempts, callbacks } from './schema.js';

/**
 * What `callbacks list|show` and their extension endpoints read of the outbox (src/store/outbox.ts
 * writes and sends it): newest first, paged like every list (src/store/paging.ts).
 */

export type CallbackFilter = { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string };

export function callbackView(r: CallbackRow): CallbackView {
  return {
    id: r.id, eventId: r.id, mchId: r.merchantId, event: r.event, subject: `${r.subjectType}:${r.subjectId}`, url: shownUrl(r.url),
    status: r.status as CallbackStatus, attempts: r.attempts, nextAttemptAt: r.status === 'pending' ? r.nextAttemptAt : null,
    lastStatus: r.lastStatus, lastError: r.lastError, createdAt: r.createdAt, deliveredAt: r.deliveredAt,
  };
}

function callbackWhere(f: CallbackFilter): SQL[] {
  const where: SQL[] = [];
  if (f.status) where.push(eq(callbacks.status, f.status));
  if (f.orderId) where.push(and(eq(callbacks.subjectType, 'order'), eq(callbacks.subjectId, f.orderId))!);
  if (f.withdrawalId) where.push(and(eq(callbacks.subjectType, 'withdrawal'), eq(callbacks.subjectId, f.withdrawalId))!);
  if (f.mchId) where.push(eq(callbacks.merchantId, f.mchId));
  return where;
}

export function listCallbacks(q: Q, f: CallbackFilter & { limit?: number }): CallbackView[] {
  return q.select().from(callbacks).where(and(...callbackWhere(f))).orderBy(desc(callbacks.createdAt), desc(callbacks.id)).limit(f.limit ?? 50).all().map(callbackView);
}

/** A page of `callbacks list`, with the count of all that match. */
export function pageCallbacks(q: Q, f: CallbackFilter & { limit?: number; cursor?: string }): Page<CallbackView> {
  const where = callbackWhere(f);
  const limit = f.limit ?? 50;
  const count = (extra?: SQL) => Number(q.select({ n: sql<bigint>`count(*)` }).from(callbacks).where(and(...where, extra)).get()?.n ?? 0);
  // Only the merchant's own rows: another merchant's id answers as one that does not exist.
  const { after, before } = afterCursor(f.cursor, 'a callback', (cursor) => q.select({ time: callbacks.createdAt, id: callbacks.id }).from(callbacks)
      .where(and(eq(callbacks.id, cursor), f.mchId ? eq(callbacks.merchantId, f.mchId) : undefined)).get(), callbacks.createdAt, callbacks.id, count);
  const rows = q.select().from(callbacks).where(and(...where, after)).orderBy(desc(callbacks.createdAt), desc(callbacks.id)).limit(limit + 1).all();
  return pageOf(rows, limit, count(), before, (r) => r.id, callbackView);
}

export function findCallback(q: Q, id: string, mchId?: string): CallbackRow {
  const row = q.select().from(callbacks).where(mchId ? and(eq(callbacks.id, id), eq(callbacks.merchantId, mchId)) : eq(callbacks.id, id)).get();
  if (!row) throw notFound(`callback ${id} not found`);
  return row;
}

export function showCallback(q: Q, id: string, mchId?: string): CallbackShow {
  const row = findCallback(q, id, mchId);
  const history = q.select().from(callbackAttempts).where(eq(callbackAttempts.callbackId, id)).orderBy(asc(callbackAttempts.id)).all()
    .map((a) => ({ at: a.at, statusCode: a.statusCode, latencyMs: a.latencyMs, error: a.error, by: a.owner }));
  return { ...callbackView(row), payload: JSON.parse(row.payload) as EventFields, history };
}
