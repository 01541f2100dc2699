import { statusesFor } from '../core/state.js';
import { chainPaymentMismatches } from './check-chain.js';
import type { StoreCtx } from './store-context.js';
import { txKey } from './tx-keys.js';

type Row = Record<string, unknown>;

/**
 * Every invariant of the ledger (`cryptopay ledger check`); an empty list means all hold.
 *
 * Sums are taken here in bigint, never by SQL's sum(): a ledger that went wrong may hold totals
 * past 64 bits, and SQLite's sum() throws on those (the check must report, not crash). Each table
 * is read once, as a stream, so the check's memory is the per-account and per-order totals.
 */
export function checkLedger(s: StoreCtx): string[] {
  const v: string[] = [];
  const db = s.ledger.sqlite;
  const rows = (query: string) => db.prepare(query).iterate() as IterableIterator<Row>;
  const big = (x: unknown) => (typeof x === 'bigint' ? x : BigInt(x as number));
  const add = (m: Map<string, bigint>, k: string, n: bigint) => m.set(k, (m.get(k) ?? 0n) + n);

  const credits = new Map<string, bigint>();
  const debits = new Map<string, bigint>();
  const held = new Map<string, bigint>();
  for (const t of rows('select debit_account_id as d, credit_account_id as c, amount, state from transfers')) {
    const amount = big(t.amount);
    if (t.state === 'posted') {
      add(credits, String(t.c), amount);
      add(debits, String(t.d), amount);
    } else if (t.state === 'pending') {
      add(held, String(t.d), amount);
    }
  }
  const pendingWithdrawals = new Map<string, bigint>();
  for (const w of rows(`select merchant_id as m, uid, asset, amount from withdrawals where status = 'PENDING'`)) {
    add(pendingWithdrawals, `${w.m}\u0000${w.uid}\u0000${w.asset}`, big(w.amount));
  }

  const assetTotals = new Map<string, bigint>();
  for (const a of rows('select id, merchant_id as m, asset, kind, uid, posted, pending_debits as pending from accounts order by id')) {
    const posted = big(a.posted);
    const pending = big(a.pending);
    add(assetTotals, `${a.m}\u0000${a.asset}`, posted);
    if (a.kind === 'user') {
      if (posted - pending < 0n) v.push(`user ${a.uid} (${a.m}) has a negative available balance: ${posted - pending}`);
      if (pending < 0n) v.push(`user ${a.uid} (${a.m}) holds a negative amount: ${pending}`);
      const inFlight = pendingWithdrawals.get(`${a.m}\u0000${a.uid}\u0000${a.asset}`) ?? 0n;
      if (inFlight !== pending) v.push(`user ${a.uid} (${a.m}) holds ${pending} but pending withdrawals total ${inFlight}`);
    }
    const id = String(a.id);
    const fromTransfers = (credits.get(id) ?? 0n) - (debits.get(id) ?? 0n);
    if (fromTransfers !== posted) v.push(`account ${id} (${a.kind} ${a.uid}) records ${posted} but its transfers give ${fromTransfers}`);
    const heldByTransfers = held.get(id) ?? 0n;
    if (heldByTransfers !== pending) v.push(`account ${id} (${a.kind} ${a.uid}) holds ${pending} but its pending transfers give ${heldByTransfers}`);
  }
  for (const [k, total] of assetTotals) {
    const [merchantId, asset] = k.split('\u0000');
    if (total !== 0n) v.push(`asset ${asset} of merchant ${merchantId} sums to ${total}, not 0`);
  }

  const paid = new Map<string, bigint>();
  const refunded = new Map<string, bigint>();
  for (const p of rows('select order_id as o, amount from payments')) add(paid, String(p.o), big(p.amount));
  for (const r of rows('select order_id as o, amount from refunds')) add(refunded, String(r.o), big(r.amount));
  // A payment or refund counts in its merchant's summary by its own merchant_id (0019).
  for (const x of rows(`select 'payment' as kind, p.id, p.order_id as o from payments p join orders o on o.id = p.order_id where p.merchant_id is not o.merchant_id
      union all select 'refund', r.id, r.order_id from refunds r join orders o on o.id = r.order_id where r.merchant_id is not o.merchant_id`)) {
    v.push(`${x.kind} ${x.id} of order ${x.o} does not name the order's merchant`);
  }
  // An order's status depends on the order of its payments and refunds once it has refunds
  // (state.ts statusFor): those orders' histories, in the order their transfers were posted.
  const history = new Map<string, { kind: 'payment' | 'refund'; amount: bigint }[]>();
  for (const e of rows(`select order_id as o, transfer_id as t, amount, 'payment' as kind from payments where order_id in (select order_id from refunds)
      union all select order_id, transfer_id, amount, 'refund' from refunds order by o, t`)) {
    const list = history.get(String(e.o)) ?? [];
    list.push({ kind: e.kind as 'payment' | 'refund', amount: big(e.amount) });
    history.set(String(e.o), list);
  }
  for (const o of rows('select id, amount, paid_amount as paid, refunded_amount as refunded, status from orders order by id')) {
    const id = String(o.id);
    const [recordedPaid, recordedRefunded] = [big(o.paid), big(o.refunded)];
    const [p, r] = [paid.get(id) ?? 0n, refunded.get(id) ?? 0n];
    if (p !== recordedPaid) v.push(`order ${id} records paid ${recordedPaid} but its payments total ${p}`);
    if (r !== recordedRefunded) v.push(`order ${id} records refunded ${recordedRefunded} but its refunds total ${r}`);
    if (r > p) v.push(`order ${id} refunded ${r}, more than the ${p} it was paid`);
    const expected = statusesFor(big(o.amount), history.get(id) ?? [{ kind: 'payment', amount: recordedPaid }]);
    if (!expected.includes(o.status as never)) v.push(`order ${id} is ${String(o.status)} but its amounts say ${expected.join(' or ')}`);
  }

  const stateOf: Record<string, string> = { PENDING: 'pending', CONFIRMED: 'posted', REJECTED: 'voided' };
  for (const w of rows('select w.id, w.status, t.state from withdrawals w join transfers t on t.id = w.transfer_id')) {
    if (stateOf[String(w.status)] !== w.state) v.push(`withdrawal ${w.id} is ${w.status} but its transfer is ${w.state}`);
  }
  // Issue #12: a PENDING withdrawal holds a transaction only while it waits for its confirmations;
  // a CONFIRMED one says how it was trusted.
  for (const w of rows(`select id, status, tx_hash, verification from withdrawals where
      (status = 'CONFIRMED' and (tx_hash is null or coalesce(verification, '') not in ('verified', 'unverified')))
      or (status = 'PENDING' and (tx_hash is not null) <> (coalesce(verification, '') = 'confirming'))
      or (status = 'REJECTED' and (tx_hash is not null or coalesce(verification, '') = 'confirming'))`)) {
    v.push(`withdrawal ${w.id} is ${w.status} with ${w.tx_hash === null ? 'no transaction' : `transaction ${w.tx_hash}`} and verification ${w.verification ?? 'none'}`);
  }

  v.push(...duplicateTransactions(rows));
  v.push(...chainPaymentMismatches(rows));
  // Each merchant's log is numbered by the ledger's trigger (migration 0014): an entry without its
  // number would never be read by that merchant's log or follow (a code review).
  if (!db.prepare("select 1 from sqlite_master where type = 'trigger' and name = 'audit_merchant_seq'").get()) {
    v.push('the audit log has no trigger numbering each merchant\'s entries (audit_merchant_seq): its entries go unnumbered');
  }
  const unnumbered = Number(db.prepare('select count(*) from audit_log where merchant_id is not null and merchant_seq is null').pluck().get());
  if (unnumbered > 0) v.push(`${unnumbered} audit entries of a merchant have no number in its log (merchant_seq)`);
  return v;
}

/**
 * One transaction, one key (issue #10 item 4): a key used twice is reported, unless every use is
 * a different Transfer log of one transaction found on chain (one transaction may pay two orders).
 * A payment holds its key in the whole ledger, a payout within its merchant
 * (src/store/tx-keys.ts): two uses clash when both are payments, or both are one merchant's.
 * A ledger written before keys existed may hold such duplicates; they are reported, not removed.
 */
function duplicateTransactions(rows: (query: string) => IterableIterator<Row>): string[] {
  /** `payment`: held in the whole ledger; else a payout, held within its merchant. */
  interface Use { what: string; log: string | null; merchant: string; payment: boolean }
  const uses = new Map<string, Use[]>();
  const note = (key: string, use: Use) => {
    const list = uses.get(key);
    if (list) list.push(use);
    else uses.set(key, [use]);
  };
  for (const p of rows('select p.tx_key, p.order_id, p.chain_id, p.log_index, p.source, o.merchant_id from payments p join orders o on o.id = p.order_id order by p.id')) {
    note(String(p.tx_key), { what: `payment to order ${p.order_id}`, log: p.log_index !== null ? `${p.chain_id}:${p.log_index}` : null, merchant: String(p.merchant_id), payment: true });
  }
  for (const w of rows('select tx_hash, id, merchant_id from withdrawals where tx_hash is not null order by updated_at')) {
    note(txKey(String(w.tx_hash)), { what: `withdrawal ${w.id}`, log: null, merchant: String(w.merchant_id), payment: false });
  }
  // Each use holds its key where its kind says: a payment in the whole ledger (scope ''), a
  // payout within its merchant.
  const registered = new Set<string>();
  for (const k of rows('select key, scope from tx_keys')) registered.add(`${String(k.key)}|${String(k.scope)}`);
  const holds = (key: string, u: Use) => registered.has(u.payment ? `${key}|` : `${key}|${u.merchant}`);
  const out: string[] = [];
  const clash = (list: Use[]) => {
    if (list.length < 2) return false;
    const logs = list.map((u) => u.log);
    return !(logs.every((l) => l !== null) && new Set(logs).size === logs.length);
  };
  for (const [key, list] of uses) {
    const unheld = list.find((u) => !holds(key, u));
    if (unheld) out.push(`transaction ${key} is recorded (${unheld.what}) but its key is missing from tx_keys${unheld.payment ? '' : ` for merchant ${unheld.merchant}`}`);
    const groups = [list.filter((u) => u.payment), ...[...new Set(list.map((u) => u.merchant))].map((m) => list.filter((u) => u.merchant === m))];
    const bad = groups.filter(clash).sort((a, b) => b.length - a.length)[0];
    if (bad) out.push(`transaction ${key} is recorded ${bad.length} times: ${bad.map((u) => u.what).join(', ')}`);
  }
  return out;
}
