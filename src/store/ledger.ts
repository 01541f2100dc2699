import type Database from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import { AppError } from '../core/errors.js';
import { ASSETS } from '../core/assets.js';
import { MAX_LEDGER_AMOUNT, formatAmount, tooLarge } from '../core/money.js';
import { accounts, auditLog, transfers } from './schema.js';
import type * as schema from './schema.js';

/** A connection or a transaction: both run synchronous drizzle queries. */
export type Q = BaseSQLiteDatabase<'sync', Database.RunResult, typeof schema>;

export type SystemAccount = 'payments' | 'withdrawals' | 'refunds' | 'adjustments';
export type TransferKind = 'payment' | 'refund' | 'withdrawal' | 'adjustment';

export interface AccountRef {
  merchantId: string;
  asset: string;
  kind: 'user' | SystemAccount;
  uid?: string;
}

export function accountId(q: Q, ref: AccountRef): number {
  const uid = ref.uid ?? '';
  const found = q
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.merchantId, ref.merchantId), eq(accounts.asset, ref.asset), eq(accounts.kind, ref.kind), eq(accounts.uid, uid)))
    .get();
  if (found) return Number(found.id);
  const row = q.insert(accounts).values({ merchantId: ref.merchantId, asset: ref.asset, kind: ref.kind, uid }).returning({ id: accounts.id }).get();
  return Number(row.id);
}

export interface Balance {
  available: bigint;
  held: bigint;
}

export function balanceOf(q: Q, ref: AccountRef): Balance {
  const row = q
    .select({ posted: accounts.posted, pending: accounts.pendingDebits })
    .from(accounts)
    .where(and(eq(accounts.merchantId, ref.merchantId), eq(accounts.asset, ref.asset), eq(accounts.kind, ref.kind), eq(accounts.uid, ref.uid ?? '')))
    .get();
  if (!row) return { available: 0n, held: 0n };
  return { available: row.posted - row.pending, held: row.pending };
}

interface TransferSpec {
  merchantId: string;
  asset: string;
  debit: number;
  credit: number;
  amount: bigint;
  kind: TransferKind;
  ref: string;
  now: number;
  decimals: number;
}

/**
 * Debits a user account only while its available balance covers the amount. The check and the
 * update are one statement, so no interleaving can take a balance below zero.
 */
function debitAvailable(q: Q, id: number, amount: bigint, column: 'posted' | 'pending_debits', decimals: number): void {
  const isUser = q.select({ kind: accounts.kind }).from(accounts).where(eq(accounts.id, id)).get()?.kind === 'user';
  const change =
    column === 'posted'
      ? { posted: sql`${accounts.posted} - ${amount}` }
      : { pendingDebits: sql`${accounts.pendingDebits} + ${amount}` };
  // A user's available balance must cover the amount, which also keeps it in range. A system
  // account may go below zero, but not past -MAX_LEDGER_AMOUNT: the bound is compared before the
  // update, written so that the comparison itself cannot overflow.
  const inRange = column === 'posted'
    ? sql`${accounts.posted} >= ${amount - MAX_LEDGER_AMOUNT}`
    : sql`${accounts.pendingDebits} <= ${MAX_LEDGER_AMOUNT - amount}`;
  const where = isUser
    ? and(eq(accounts.id, id), sql`${accounts.posted} - ${accounts.pendingDebits} >= ${amount}`)
    : and(eq(accounts.id, id), inRange);
  const result = q.update(accounts).set(change).where(where).run();
  if (result.changes === 0) {
    const row = q.select().from(accounts).where(eq(accounts.id, id)).get();
    if (!isUser && row) {
      const after = column === 'posted' ? row.posted - amount : row.pendingDebits + amount;
      throw new AppError('conflict', tooLarge(`the ${row.kind} account of ${row.asset}`, after, decimals));
    }
    const available = row ? row.posted - row.pendingDebits : 0n;
    throw new AppError(
      'conflict',
      `insufficient balance: user ${row?.uid ?? '?'} has ${formatAmount(available, decimals)} ${row?.asset ?? ''} available, ${formatAmount(amount, decimals)} needed`,
    );
  }
}

/** Credits an account, refused (not wrapped to a float) when it would pass the ledger's range. */
function credit(q: Q, id: number, amount: bigint, decimals: number): void {
  const result = q.update(accounts)
    .set({ posted: sql`${accounts.posted} + ${amount}` })
    .where(and(eq(accounts.id, id), sql`${accounts.posted} <= ${MAX_LEDGER_AMOUNT - amount}`))
    .run();
  if (result.changes === 0) {
    const row = q.select().from(accounts).where(eq(accounts.id, id)).get();
    const who = row?.kind === 'user' ? `user ${row.uid}'s balance` : `the ${row?.kind ?? '?'} account`;
    throw new AppError('conflict', tooLarge(`${who} of ${row?.asset ?? '?'}`, (row?.posted ?? 0n) + amount, decimals));
  }
}

/** A transfer that happens at once. */
export function postTransfer(q: Q, t: TransferSpec): number {
  if (t.amount <= 0n) throw new Error('transfer amount must be positive');
  debitAvailable(q, t.debit, t.amount, 'posted', t.decimals);
  credit(q, t.credit, t.amount, t.decimals);
  return insertTransfer(q, t, 'posted');
}

/** The first phase of a two-phase transfer: the amount leaves available and is held. */
export function holdTransfer(q: Q, t: TransferSpec): number {
  if (t.amount <= 0n) throw new Error('transfer amount must be positive');
  debitAvailable(q, t.debit, t.amount, 'pending_debits', t.decimals);
  return insertTransfer(q, t, 'pending');
}

function insertTransfer(q: Q, t: TransferSpec, state: 'posted' | 'pending'): number {
  const row = q
    .insert(transfers)
    .values({
      merchantId: t.merchantId,
      asset: t.asset,
      debitAccountId: t.debit,
      creditAccountId: t.credit,
      amount: t.amount,
      state,
      kind: t.kind,
      ref: t.ref,
      createdAt: t.now,
      resolvedAt: state === 'posted' ? t.now : null,
    })
    .returning({ id: transfers.id })
    .get();
  return Number(row.id);
}

/** Posts (confirm) or voids (reject) a pending transfer, exactly once. */
export function resolvePending(q: Q, transferId: number, outcome: 'posted' | 'voided', now: number): void {
  const moved = q
    .update(transfers)
    .set({ state: outcome, resolvedAt: now })
    .where(and(eq(transfers.id, transferId), eq(transfers.state, 'pending')))
    .returning()
    .get();
  if (!moved) throw new AppError('conflict', `transfer ${transferId} is no longer pending`);
  q.update(accounts)
    .set(
      outcome === 'posted'
        ? { pendingDebits: sql`${accounts.pendingDebits} - ${moved.amount}`, posted: sql`${accounts.posted} - ${moved.amount}` }
        : { pendingDebits: sql`${accounts.pendingDebits} - ${moved.amount}` },
    )
    .where(eq(accounts.id, moved.debitAccountId))
    .run();
  if (outcome === 'posted') credit(q, moved.creditAccountId, moved.amount, ASSETS[moved.asset]?.decimals ?? 0);
}

export interface AuditEntry {
  actor: string;
  action: string;
  merchantId: string | null;
  subjectType: 'merchant' | 'order' | 'withdrawal' | 'balance' | 'chain';
  subjectId: string;
  detail: Record<string, unknown>;
  at: number;
}

export function audit(q: Q, e: AuditEntry): void {
  q.insert(auditLog).values({ ...e, detail: JSON.stringify(e.detail) }).run();
}
