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

/**
 * The statements every posting runs (a payment from the chain posts one transfer, two account
 * lookups and an audit entry), prepared once per connection: building and preparing drizzle SQL
 * for each was most of the time of counting a payment (bench/RESULTS.md, the watcher).
 */
function prepareLedgerStatements(q: Q) {
  const p = sql.placeholder;
  const accountKey = and(eq(accounts.merchantId, p('merchantId')), eq(accounts.asset, p('asset')), eq(accounts.kind, p('kind')), eq(accounts.uid, p('uid')));
  const byId = eq(accounts.id, p('id'));
  return {
    findAccount: q.select({ id: accounts.id }).from(accounts).where(accountKey).prepare(),
    insertAccount: q.insert(accounts).values({ merchantId: p('merchantId'), asset: p('asset'), kind: p('kind'), uid: p('uid') }).returning({ id: accounts.id }).prepare(),
    kindOf: q.select({ kind: accounts.kind }).from(accounts).where(byId).prepare(),
    // A user's available balance must cover the amount; a system account stays above -MAX.
    debitPostedUser: q.update(accounts).set({ posted: sql`${accounts.posted} - ${p('amount')}` })
      .where(and(byId, sql`${accounts.posted} - ${accounts.pendingDebits} >= ${p('amount')}`)).prepare(),
    debitPostedSystem: q.update(accounts).set({ posted: sql`${accounts.posted} - ${p('amount')}` })
      .where(and(byId, sql`${accounts.posted} >= ${p('bound')}`)).prepare(),
    holdUser: q.update(accounts).set({ pendingDebits: sql`${accounts.pendingDebits} + ${p('amount')}` })
      .where(and(byId, sql`${accounts.posted} - ${accounts.pendingDebits} >= ${p('amount')}`)).prepare(),
    holdSystem: q.update(accounts).set({ pendingDebits: sql`${accounts.pendingDebits} + ${p('amount')}` })
      .where(and(byId, sql`${accounts.pendingDebits} <= ${p('bound')}`)).prepare(),
    credit: q.update(accounts).set({ posted: sql`${accounts.posted} + ${p('amount')}` })
      .where(and(byId, sql`${accounts.posted} <= ${p('bound')}`)).prepare(),
    insertTransfer: q.insert(transfers).values({
      merchantId: p('merchantId'), asset: p('asset'), debitAccountId: p('debit'), creditAccountId: p('credit'), amount: p('amount'),
      state: p('state'), kind: p('kind'), ref: p('ref'), createdAt: p('createdAt'), resolvedAt: p('resolvedAt'),
    }).returning({ id: transfers.id }).prepare(),
    audit: q.insert(auditLog).values({
      at: p('at'), actor: p('actor'), action: p('action'), merchantId: p('merchantId'), subjectType: p('subjectType'), subjectId: p('subjectId'), detail: p('detail'),
    }).prepare(),
  };
}

type LedgerStatements = ReturnType<typeof prepareLedgerStatements>;
const ledgerStatements = new WeakMap<object, LedgerStatements>();

/**
 * The session is the connection's (a drizzle transaction shares its database's), so statements
 * prepared through either serve both.
 */
export function sessionOf(q: Q): object {
  return (q as unknown as { session: object }).session;
}

function stmts(q: Q): LedgerStatements {
  const key = sessionOf(q);
  let st = ledgerStatements.get(key);
  if (!st) ledgerStatements.set(key, (st = prepareLedgerStatements(q)));
  return st;
}

export function accountId(q: Q, ref: AccountRef): number {
  const key = { merchantId: ref.merchantId, asset: ref.asset, kind: ref.kind, uid: ref.uid ?? '' };
  const st = stmts(q);
  const found = st.findAccount.get(key);
  if (found) return Number(found.id);
  return Number(st.insertAccount.get(key)!.id);
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
  const st = stmts(q);
  const isUser = st.kindOf.get({ id })?.kind === 'user';
  // A user's available balance must cover the amount, which also keeps it in range. A system
  // account may go below zero, but not past -MAX_LEDGER_AMOUNT: the bound is compared before the
  // update, written so that the comparison itself cannot overflow.
  const result = column === 'posted'
    ? (isUser ? st.debitPostedUser.run({ id, amount }) : st.debitPostedSystem.run({ id, amount, bound: amount - MAX_LEDGER_AMOUNT }))
    : (isUser ? st.holdUser.run({ id, amount }) : st.holdSystem.run({ id, amount, bound: MAX_LEDGER_AMOUNT - amount }));
  if (result.changes === 0) {
    const row = q.select().from(accounts).where(eq(accounts.id, id)).get();
    if (!isUser && row) {
      const after = column === 'posted' ? row.posted - amount : row.pendingDebits + amount;
      throw new AppError('conflict', tooLarge(`the ${row.kind} account of ${row.asset}`, after, decimals));
    }
    const available = row ? row.posted - row.pendingDebits : 0n;
    // What pending withdrawals hold is named: it is why a balance that looks large is short.
    const held = row && row.pendingDebits > 0n ? ` (and ${formatAmount(row.pendingDebits, decimals)} ${row.asset} held by pending withdrawals)` : '';
    throw new AppError(
      'conflict',
      `insufficient balance: user ${row?.uid ?? '?'} has ${formatAmount(available, decimals)} ${row?.asset ?? ''} available${held}, ${formatAmount(amount, decimals)} needed`,
    );
  }
}

/** Credits an account, refused (not wrapped to a float) when it would pass the ledger's range. */
function credit(q: Q, id: number, amount: bigint, decimals: number): void {
  const result = stmts(q).credit.run({ id, amount, bound: MAX_LEDGER_AMOUNT - amount });
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
  const row = stmts(q).insertTransfer.get({
    merchantId: t.merchantId, asset: t.asset, debit: t.debit, credit: t.credit, amount: t.amount, state, kind: t.kind, ref: t.ref,
    createdAt: t.now, resolvedAt: state === 'posted' ? t.now : null,
  });
  return Number(row!.id);
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
  stmts(q).audit.run({ ...e, detail: JSON.stringify(e.detail) });
}
