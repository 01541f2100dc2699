import { and, desc, eq, or, type SQL } from 'drizzle-orm';
import type { AuditView } from '../core/types.js';
import { auditLog } from './schema.js';
import type { StoreCtx } from './store-context.js';

export type { AuditView };

/** The audit log, newest first; entries are written by `audit()` in each change's own transaction. */
export function readLog(s: StoreCtx, filter: { orderId?: string; withdrawalId?: string; mchId?: string; limit?: number }): AuditView[] {
  const where: SQL[] = [];
  const subjects: SQL[] = [];
  if (filter.orderId) subjects.push(and(eq(auditLog.subjectType, 'order'), eq(auditLog.subjectId, filter.orderId))!);
  if (filter.withdrawalId) subjects.push(and(eq(auditLog.subjectType, 'withdrawal'), eq(auditLog.subjectId, filter.withdrawalId))!);
  if (subjects.length) where.push(or(...subjects)!);
  if (filter.mchId) where.push(eq(auditLog.merchantId, filter.mchId));
  return s.db.select().from(auditLog).where(and(...where)).orderBy(desc(auditLog.id)).limit(filter.limit ?? 50).all().map((e) => ({
    id: Number(e.id), at: e.at, actor: e.actor, action: e.action, mchId: e.merchantId, subject: `${e.subjectType}:${e.subjectId}`,
    detail: JSON.parse(e.detail) as Record<string, unknown>,
  }));
}
