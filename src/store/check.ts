import { eq, sql } from 'drizzle-orm';
import { statusFor } from '../core/state.js';
import { accounts, orders, transfers, withdrawals } from './schema.js';
import type { StoreCtx } from './store-context.js';

/** Every invariant of the ledger (`cryptopay ledger check`); an empty list means all hold. */
export function checkLedger(s: StoreCtx): string[] {
  const v: string[] = [];
  const q = s.db;
  for (const r of q.select({ asset: accounts.asset, merchantId: accounts.merchantId, total: sql<bigint>`sum(${accounts.posted})` }).from(accounts).groupBy(accounts.merchantId, accounts.asset).all()) {
    if (BigInt(r.total) !== 0n) v.push(`asset ${r.asset} of merchant ${r.merchantId} sums to ${r.total}, not 0`);
  }
  // Each check is one statement over its table, with the sums it compares against computed
  // alongside by correlated subqueries: no query per row. The outer row's columns are named
  // with their table on purpose: drizzle leaves the table off in a one-table select, and
  // inside the subquery a bare "id" or "uid" would mean the subquery's own column.
  const outer = (table: string, column: string) => sql.raw(`"${table}"."${column}"`);
  const sumTransfers = (side: 'credit_account_id' | 'debit_account_id', state: string) =>
    sql<bigint>`(select coalesce(sum(t.amount), 0) from transfers t where t.${sql.raw(side)} = ${outer('accounts', 'id')} and t.state = ${state})`;
  const accountRows = q.select({
    a: accounts,
    credits: sumTransfers('credit_account_id', 'posted'),
    debits: sumTransfers('debit_account_id', 'posted'),
    held: sumTransfers('debit_account_id', 'pending'),
    pendingWithdrawals: sql<bigint>`(select coalesce(sum(w.amount), 0) from withdrawals w where w.merchant_id = ${outer('accounts', 'merchant_id')} and w.uid = ${outer('accounts', 'uid')} and w.asset = ${outer('accounts', 'asset')} and w.status = 'PENDING')`,
  }).from(accounts).all();
  for (const { a, pendingWithdrawals } of accountRows) {
    if (a.kind !== 'user') continue;
    if (a.posted - a.pendingDebits < 0n) v.push(`user ${a.uid} (${a.merchantId}) has a negative available balance: ${a.posted - a.pendingDebits}`);
    if (a.pendingDebits < 0n) v.push(`user ${a.uid} (${a.merchantId}) holds a negative amount: ${a.pendingDebits}`);
    if (BigInt(pendingWithdrawals) !== a.pendingDebits) v.push(`user ${a.uid} (${a.merchantId}) holds ${a.pendingDebits} but pending withdrawals total ${pendingWithdrawals}`);
  }
  for (const { a, credits, debits, held } of accountRows) {
    const posted = BigInt(credits) - BigInt(debits);
    if (posted !== a.posted) v.push(`account ${a.id} (${a.kind} ${a.uid}) records ${a.posted} but its transfers give ${posted}`);
    if (BigInt(held) !== a.pendingDebits) v.push(`account ${a.id} (${a.kind} ${a.uid}) holds ${a.pendingDebits} but its pending transfers give ${held}`);
  }
  const orderRows = q.select({
    o: orders,
    paid: sql<bigint>`(select coalesce(sum(p.amount), 0) from payments p where p.order_id = ${outer('orders', 'id')})`,
    refunded: sql<bigint>`(select coalesce(sum(r.amount), 0) from refunds r where r.order_id = ${outer('orders', 'id')})`,
  }).from(orders).all();
  for (const { o, paid: paidSum, refunded: refundedSum } of orderRows) {
    const paid = BigInt(paidSum);
    const refunded = BigInt(refundedSum);
    if (paid !== o.paidAmount) v.push(`order ${o.id} records paid ${o.paidAmount} but its payments total ${paid}`);
    if (refunded !== o.refundedAmount) v.push(`order ${o.id} records refunded ${o.refundedAmount} but its refunds total ${refunded}`);
    if (refunded > paid) v.push(`order ${o.id} refunded ${refunded}, more than the ${paid} it was paid`);
    if (statusFor(o.amount, o.paidAmount, o.refundedAmount) !== o.status) v.push(`order ${o.id} is ${o.status} but its amounts say ${statusFor(o.amount, o.paidAmount, o.refundedAmount)}`);
  }
  const stateOf: Record<string, string> = { PENDING: 'pending', CONFIRMED: 'posted', REJECTED: 'voided' };
  for (const w of q.select({ id: withdrawals.id, status: withdrawals.status, state: transfers.state }).from(withdrawals).innerJoin(transfers, eq(transfers.id, withdrawals.transferId)).all()) {
    if (stateOf[w.status] !== w.state) v.push(`withdrawal ${w.id} is ${w.status} but its transfer is ${w.state}`);
  }
  return v;
}
