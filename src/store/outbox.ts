import type Database from 'better-sqlite3';
import { and, asc, eq, gt, isNotNull, lt, sql, type SQL } from 'drizzle-orm';
import { conflict, notFound } from '../core/errors.js';
import { formatAmount } from '../core/money.js';
import type { AttemptView, CallbackStatus, CallbackView } from '../core/types.js';
import { defaultRandomId } from './ids.js';
import type { Q } from './ledger.js';
import { callbackCursors, callbacks, orders } from './schema.js';
import { decimalsOf } from './store-context.js';

/**
 * The callbacks outbox (decisions §9, issue #13), the way Stripe's webhooks and pg-boss work:
 * the row that says "tell the merchant" is written in the transaction of the change it reports,
 * so nothing is sent before that commit and nothing committed is lost by a crash. A sender
 * (src/callbacks/worker.ts) leases due rows, attempts them outside any transaction, and records
 * each attempt here.
 */
export type CallbackEvent = 'order.paid' | 'order.expired' | 'order.refunded' | 'withdraw.confirmed' | 'withdraw.rejected';
export const CALLBACK_EVENTS: readonly CallbackEvent[] = ['order.paid', 'order.expired', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected'];
export type { CallbackStatus };
export const CALLBACK_STATUSES: readonly CallbackStatus[] = ['pending', 'delivered', 'failed'];

/** A flat object: every value is signed as text by decisions §1. */
export type EventFields = Record<string, string | number | boolean | null>;

export type CallbackRow = typeof callbacks.$inferSelect;

/**
 * Senders in this process hear of a new row at once; other processes find it when they poll.
 * A sender may also take new rows of its ledger file straight from the transaction that writes
 * them (a handoff): the row is written already leased to it, and handed over once that
 * transaction has committed, so the first attempt needs no poll and no transaction of its own.
 */
export interface LocalSender {
  owner: string;
  leaseMs: number;
  take(ids: string[]): void;
}
const listeners = new Set<() => void>();
/** Rows written to an outbox by this process: a sender's list of hosts (pendingHosts) is then read again. */
let outboxWrites = 0;
const handoffs = new Map<string, LocalSender>();
let wakeScheduled = false;
const handed = new Map<LocalSender, string[]>();

export function onOutboxWrite(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Takes the new rows of the ledger file `path` written in this process (the first sender registered wins). */
export function takeNewRows(path: string, sender: LocalSender): () => void {
  if (!handoffs.has(path)) handoffs.set(path, sender);
  return () => {
    if (handoffs.get(path) === sender) handoffs.delete(path);
  };
}

function wakeSenders(): void {
  if (wakeScheduled || (listeners.size === 0 && handed.size === 0)) return;
  wakeScheduled = true;
  // After the transaction that wrote the row: group commit commits within this turn, so the
  // next turn finds the row (or, if it was rolled back, nothing: a sender reads it back first).
  setImmediate(() => {
    wakeScheduled = false;
    const batches = [...handed];
    handed.clear();
    for (const [sender, ids] of batches) sender.take(ids);
    for (const fn of listeners) fn();
  });
}

/** The file of the connection a transaction runs on (better-sqlite3 calls it `name`). */
const fileOf = (tx: Q) => (tx as unknown as { $client?: { name?: string } }).$client?.name;

/** host:port of a callback URL, the unit its deliveries are bounded by. */
export function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
}

export interface NewEvent {
  merchantId: string;
  event: CallbackEvent;
  subjectType: 'order' | 'withdrawal';
  subjectId: string;
  url: string;
  fields: EventFields;
  now: number;
}

/** Writes an event in the caller's transaction; returns its eventId (undefined if already there). */
export function enqueueEvent(tx: Q, e: NewEvent): string | undefined {
  const id = defaultRandomId('evt');
  const payload: EventFields = { event: e.event, eventId: id, ...e.fields };
  const file = handoffs.size ? fileOf(tx) : undefined;
  const sender = file === undefined ? undefined : handoffs.get(file);
  const inserted = tx.insert(callbacks).values({
    id, merchantId: e.merchantId, event: e.event, subjectType: e.subjectType, subjectId: e.subjectId, url: e.url, host: hostOf(e.url),
    payload: JSON.stringify(payload), status: 'pending', nextAttemptAt: e.now, createdAt: e.now, updatedAt: e.now,
    ...(sender ? { leaseOwner: sender.owner, leaseUntil: e.now + sender.leaseMs } : {}),
  }).onConflictDoNothing().run();
  if (inserted.changes === 0) return undefined;
  outboxWrites++;
  if (sender) {
    const ids = handed.get(sender);
    if (ids) ids.push(id);
    else handed.set(sender, [id]);
  }
  wakeSenders();
  return id;
}

type OrderRow = typeof orders.$inferSelect;

/** The order's own fields that every order event carries. */
export function orderFields(o: OrderRow): EventFields {
  const d = decimalsOf(o.asset);
  return { id: o.id, oid: o.oid, uid: o.uid, amount: formatAmount(o.amount, d), paidAmount: formatAmount(o.paidAmount, d), asset: o.asset };
}

export function orderPaidEvent(tx: Q, o: OrderRow, p: { status: string; late: boolean; paidAmount: bigint; paidAt: number; txHash: string; chainType: string | null; chainId: string | null; token: string | null }, now: number): void {
  if (!o.notifyUrl) return;
  enqueueEvent(tx, {
    merchantId: o.merchantId, event: 'order.paid', subjectType: 'order', subjectId: o.id, url: o.notifyUrl, now,
    fields: {
      ...orderFields({ ...o, paidAmount: p.paidAmount }), status: p.status, late: p.late, paidAt: p.paidAt,
      txHash: p.txHash, chainType: p.chainType, chainId: p.chainId, token: p.token,
    },
  });
}

export function orderRefundedEvent(tx: Q, o: OrderRow, r: { refundId: string; amount: bigint; refundedAmount: bigint; status: string; remark: string; refundTime: number }): void {
  if (!o.notifyUrl) return;
  const d = decimalsOf(o.asset);
  enqueueEvent(tx, {
    merchantId: o.merchantId, event: 'order.refunded', subjectType: 'order', subjectId: o.id, url: o.notifyUrl, now: r.refundTime,
    fields: {
      ...orderFields(o), amount: formatAmount(r.amount, d), orderAmount: formatAmount(o.amount, d), refundId: r.refundId,
      refundedAmount: formatAmount(r.refundedAmount, d), status: r.status, remark: r.remark, refundTime: r.refundTime,
    },
  });
}

export function withdrawalEvent(tx: Q, event: 'withdraw.confirmed' | 'withdraw.rejected', w: { merchantId: string; notifyUrl: string | null; id: string }, fields: EventFields, now: number): void {
  if (!w.notifyUrl) return;
  enqueueEvent(tx, { merchantId: w.merchantId, event, subjectType: 'withdrawal', subjectId: w.id, url: w.notifyUrl, now, fields });
}

/** The columns of a callbacks row, in CallbackRow's order (rowOf reads them back). */
const ROW = 'id, merchant_id, event, subject_type, subject_id, url, host, payload, status, attempts, step, next_attempt_at, lease_owner, lease_until, last_status, last_error, created_at, updated_at, delivered_at';
type RawRow = [string, string, string, string, string, string, string, string, string, bigint, bigint, bigint, string | null, bigint | null, bigint | null, string | null, bigint, bigint, bigint | null];
const num = (v: bigint | null) => (v === null ? null : Number(v));
function rowOf(r: RawRow): CallbackRow {
  return {
    id: r[0], merchantId: r[1], event: r[2], subjectType: r[3], subjectId: r[4], url: r[5], host: r[6], payload: r[7], status: r[8],
    attempts: Number(r[9]), step: Number(r[10]), nextAttemptAt: Number(r[11]), leaseOwner: r[12], leaseUntil: num(r[13]),
    lastStatus: num(r[14]), lastError: r[15], createdAt: Number(r[16]), updatedAt: Number(r[17]), deliveredAt: num(r[18]),
  };
}
const DUE = `status = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)`;

/**
 * The sender's statements, prepared once per connection, on better-sqlite3 itself (as the status
 * read, src/store/statements.ts): drizzle's placeholder filling and row mapping around each
 * statement were about a third of the sender's ledger time per delivery. The same SQL as the
 * drizzle queries they replace (the callbacks_due index serves the due reads).
 */
function prepareSender(sqlite: Database.Database) {
  return {
    due: sqlite.prepare<{ now: number }, number>(`SELECT 1 FROM callbacks WHERE ${DUE} LIMIT 1`).pluck(),
    candidates: sqlite.prepare<{ now: number; limit: number }, Candidate>(`SELECT id, host, merchant_id FROM callbacks WHERE ${DUE} ORDER BY next_attempt_at LIMIT @limit`).raw(),
    // With hosts left out (full), the due rows are read host by host (index callbacks_pending_host,
    // 0009): the next host that has pending rows, then that host's due rows. Read in due order with
    // the full hosts filtered out, a backlog of one full host was stepped over row by row on every
    // poll (~20 ms of serve's event loop per 100,000 rows).
    nextHost: sqlite.prepare<[string], string>(
      `SELECT host FROM callbacks INDEXED BY callbacks_pending_host WHERE status = 'pending' AND host > ? ORDER BY host LIMIT 1`,
    ).pluck(),
    hostCandidates: sqlite.prepare<{ host: string; now: number; limit: number }, [string, string, string, bigint]>(
      `SELECT id, host, merchant_id, next_attempt_at FROM callbacks INDEXED BY callbacks_pending_host WHERE host = @host AND ${DUE} ORDER BY next_attempt_at LIMIT @limit`,
    ).raw().safeIntegers(),
    lease: sqlite.prepare<{ owner: string; until: number; id: string; now: number }, RawRow>(
      `UPDATE callbacks SET lease_owner = @owner, lease_until = @until WHERE id = @id AND ${DUE} RETURNING ${ROW}`,
    ).raw(),
    insertAttempt: sqlite.prepare<[string, number, number | null, number, string | null, string]>(
      'INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, owner) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    byId: sqlite.prepare<[string], RawRow>(`SELECT ${ROW} FROM callbacks WHERE id = ?`).raw(),
    // recordAttempt's common case in one statement: an acknowledged attempt of a row this sender
    // still holds (what the read-then-update below would write for it).
    delivered: sqlite.prepare<{ id: string; owner: string; statusCode: number; error: string | null; done: number }>(
      `UPDATE callbacks SET attempts = attempts + 1, last_status = @statusCode, last_error = @error, updated_at = @done,
       lease_owner = NULL, lease_until = NULL, status = 'delivered', delivered_at = coalesce(delivered_at, @done)
       WHERE id = @id AND lease_owner = @owner`,
    ),
    after: sqlite.prepare<Omit<CallbackRow, 'merchantId' | 'event' | 'subjectType' | 'subjectId' | 'url' | 'host' | 'payload' | 'createdAt'>>(
      `UPDATE callbacks SET attempts = @attempts, last_status = @lastStatus, last_error = @lastError, updated_at = @updatedAt,
       lease_owner = @leaseOwner, lease_until = @leaseUntil, status = @status, step = @step, next_attempt_at = @nextAttemptAt,
       delivered_at = @deliveredAt WHERE id = @id`,
    ),
    secret: sqlite.prepare<[string], string>('SELECT secret FROM merchants WHERE id = ?').pluck(),
    /** pendingHosts' last list. */
    hosts: undefined as { at: number; writes: number; list: string[] } | undefined,
  };
}
type SenderStatements = ReturnType<typeof prepareSender>;
/** A due row as a claim reads it first: id, host:port, merchant. */
type Candidate = [string, string, string];
const prepared = new WeakMap<Database.Database, SenderStatements>();
function senderStatements(q: Q): SenderStatements {
  const sqlite = (q as unknown as { $client: Database.Database }).$client;
  let st = prepared.get(sqlite);
  if (!st) prepared.set(sqlite, (st = prepareSender(sqlite)));
  return st;
}

/**
 * Rows handed over by their transaction, read back on the sender's connection: only a committed
 * row is found, and only one still leased to this sender and pending is sent.
 */
export function handedRows(q: Q, ids: string[], owner: string): CallbackRow[] {
  const st = senderStatements(q);
  const out: CallbackRow[] = [];
  for (const id of ids) {
    const raw = st.byId.get(id);
    const row = raw && rowOf(raw);
    if (row && row.status === 'pending' && row.leaseOwner === owner) out.push(row);
  }
  return out;
}

/** The merchant's current secret, read for each attempt (a rotated secret applies to retries too). */
export function merchantSecret(q: Q, merchantId: string): string | undefined {
  return senderStatements(q).secret.get(merchantId);
}

/** Whether any delivery is due (a read: the sender leases, in a write, only when one is). */
export function deliveryDue(q: Q, now: number, busyHosts: string[]): boolean {
  const st = senderStatements(q);
  if (busyHosts.length === 0) return st.due.get({ now }) !== undefined;
  const busy = new Set(busyHosts);
  for (const host of pendingHosts(st, now)) {
    if (!busy.has(host) && st.hostCandidates.all({ host, now, limit: 1 }).length > 0) return true;
  }
  return false;
}

/** How long a sender's list of the hosts with pending rows is used before it is read again. */
const HOSTS_FRESH_MS = 250;

/**
 * The hosts that have pending rows: read with a step of the index per host, and kept for
 * HOSTS_FRESH_MS unless this process wrote a row meanwhile. A claim asks for it whenever a host
 * fills up, which under one busy receiver is every claim (~7 µs a delivery when read each time);
 * a host that another process gave its first pending row is seen within that time, a host whose
 * rows all left is read in vain (its due read finds nothing).
 */
function pendingHosts(st: SenderStatements, now: number): string[] {
  const kept = st.hosts;
  if (kept && kept.writes === outboxWrites && now >= kept.at && now - kept.at < HOSTS_FRESH_MS) return kept.list;
  const list: string[] = [];
  for (let host = st.nextHost.get(''); host !== undefined; host = st.nextHost.get(host)) list.push(host);
  st.hosts = { at: now, writes: outboxWrites, list };
  return list;
}

/**
 * Up to `limit` due rows of the hosts not in `busy`, in due order: each host with pending rows in
 * turn, and of each the first `limit` due rows. Costs a few index steps per host that has pending
 * rows, whatever the full hosts' backlog.
 */
function otherHostsDue(st: SenderStatements, now: number, busy: ReadonlySet<string>, limit: number, fullMerchants: ReadonlySet<string> = new Set()): Candidate[] {
  const found: [string, string, string, bigint][] = [];
  for (const host of pendingHosts(st, now)) {
    if (busy.has(host)) continue;
    // A full merchant's rows are left out before the earliest are kept: they would fill the list.
    for (const row of st.hostCandidates.all({ host, now, limit })) if (!fullMerchants.has(row[2])) found.push(row);
  }
  found.sort((a, b) => (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0));
  return found.slice(0, limit).map(([id, host, merchant]) => [id, host, merchant]);
}

/**
 * Leases up to `limit` due deliveries for `owner` until now + leaseMs, skipping hosts that are
 * already at their limit in this process. Inside one BEGIN IMMEDIATE transaction, so two
 * processes never lease one row: each attempt is sent by one process.
 */
export function claimDue(
  tx: Q,
  c: {
    now: number; owner: string; leaseMs: number; limit: number; perHost: number; inFlight: ReadonlyMap<string, number>;
    /** A merchant's share of the process, whatever its receivers, and what each has in flight (by merchant id). */
    perMerchant?: number; merchantsInFlight?: ReadonlyMap<string, number>;
  },
): CallbackRow[] {
  if (c.limit <= 0) return [];
  const busy = new Set(busyHosts(c.inFlight, c.perHost));
  const st = senderStatements(tx);
  const page = candidatePage(c.limit, c.perHost);
  const counts = new Map(c.inFlight);
  const perMerchant = c.perMerchant ?? Infinity;
  const merchants = new Map(c.merchantsInFlight ?? []);
  const claimed: CallbackRow[] = [];
  const tried = new Set<string>();
  let filled = false;
  const lease = (candidates: Candidate[]) => {
    for (const [id, host, merchant] of candidates) {
      if (claimed.length >= c.limit) break;
      const n = counts.get(host) ?? 0;
      if (n >= c.perHost || tried.has(id)) continue;
      const m = merchants.get(merchant) ?? 0;
      if (m >= perMerchant) {
        // Its rows may lead the page (an attacker review: one merchant's backlog to eight hanging
        // receivers held every slot): the other hosts' rows are read too.
        filled = true;
        continue;
      }
      tried.add(id);
      const leased = st.lease.get({ owner: c.owner, until: c.now + c.leaseMs, id, now: c.now });
      if (!leased) continue;
      counts.set(host, n + 1);
      merchants.set(merchant, m + 1);
      if (n + 1 >= c.perHost) {
        busy.add(host);
        filled = true;
      }
      claimed.push(rowOf(leased));
    }
  };
  const full = () => new Set([...merchants].filter(([, n]) => n >= perMerchant).map(([m]) => m));
  lease(busy.size === 0 && full().size === 0 ? st.candidates.all({ now: c.now, limit: page }) : otherHostsDue(st, c.now, busy, page, full()));
  // A host or a merchant filled up while its rows led the page (a backlog behind a receiver one
  // below its limit): the other hosts' due rows, host by host, so they do not wait behind it.
  if (filled && claimed.length < c.limit) lease(otherHostsDue(st, c.now, busy, page, full()));
  return claimed;
}

/**
 * How many due rows a claim reads: a few more than it may lease, to step past rows of hosts that
 * fill up meanwhile, but never more than two hosts' worth; the hosts that filled up are then left
 * out, and the others' rows read host by host. A page of four times the free slots (452 rows with
 * 113 free) was read to lease the one row a freed slot had room for.
 */
const candidatePage = (limit: number, perHost: number) => Math.min(limit * 4, perHost * 2);

export function busyHosts(inFlight: ReadonlyMap<string, number>, perHost: number): string[] {
  return [...inFlight].filter(([, n]) => n >= perHost).map(([h]) => h);
}

export interface AttemptOutcome {
  id: string;
  owner: string;
  at: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** Any 2xx answer acknowledges the event (decisions §9). */
export const acknowledged = (statusCode: number | null) => statusCode !== null && statusCode >= 200 && statusCode < 300;

/**
 * Records one attempt and moves the delivery on: delivered on a 2xx; otherwise due again after
 * the schedule's next delay (`delayAfter(step)`, jitter included), or failed when the schedule
 * is used up.
 */
export function recordAttempt(tx: Q, a: AttemptOutcome, delayAfter: (step: number) => number | undefined): CallbackStatus {
  const st = senderStatements(tx);
  st.insertAttempt.run(a.id, a.at, a.statusCode, a.latencyMs, a.error, a.owner);
  const done = a.at + a.latencyMs;
  if (acknowledged(a.statusCode) && st.delivered.run({ id: a.id, owner: a.owner, statusCode: a.statusCode!, error: a.error, done }).changes === 1) return 'delivered';
  const raw = st.byId.get(a.id);
  if (!raw) throw notFound(`callback ${a.id} not found`);
  const row = rowOf(raw);
  // A lease that ran out and was taken by another sender is that sender's to move on.
  const ours = row.leaseOwner === a.owner;
  const next = {
    id: a.id, attempts: row.attempts + 1, lastStatus: a.statusCode, lastError: a.error, updatedAt: done,
    leaseOwner: ours ? null : row.leaseOwner, leaseUntil: ours ? null : row.leaseUntil,
    status: row.status, step: row.step, nextAttemptAt: row.nextAttemptAt, deliveredAt: row.deliveredAt,
  };
  if (acknowledged(a.statusCode)) {
    next.status = 'delivered';
    next.deliveredAt ??= done;
  } else if (ours && row.status === 'pending') {
    const delay = delayAfter(row.step);
    next.status = delay === undefined ? 'failed' : 'pending';
    next.step = row.step + 1;
    if (delay !== undefined) next.nextAttemptAt = done + delay;
  }
  st.after.run(next);
  return next.status as CallbackStatus;
}

/** Gives leases back unattempted (a sender stopping before it sent them). */
export function releaseLeases(tx: Q, owner: string, ids: string[]): void {
  if (ids.length === 0) return;
  tx.update(callbacks).set({ leaseOwner: null, leaseUntil: null }).where(and(eq(callbacks.leaseOwner, owner), sql`${callbacks.id} in ${ids}`)).run();
}

export type { AttemptView, CallbackView };
// The reads of `callbacks list|show` live in callback-reads.ts; re-exported for the sender's callers.
export { callbackView, findCallback, listCallbacks, pageCallbacks, showCallback } from './callback-reads.js';
import { findCallback } from './callback-reads.js';

/**
 * A delivery due again now with its whole schedule ahead (an operator's resend: the merchant
 * fixed its endpoint, or lost the event), leased to `owner` so the sender that asked sends it.
 */
export function leaseForResend(tx: Q, id: string, c: { now: number; owner: string; leaseMs: number; mchId?: string }): CallbackRow {
  const row = findCallback(tx, id, c.mchId);
  if (row.leaseOwner && row.leaseUntil !== null && row.leaseUntil > c.now) {
    throw conflict(`callback ${id} is being sent right now by ${row.leaseOwner}; try again in a moment`);
  }
  return tx.update(callbacks).set({ status: 'pending', step: 0, nextAttemptAt: c.now, leaseOwner: c.owner, leaseUntil: c.now + c.leaseMs, updatedAt: c.now })
    .where(eq(callbacks.id, id)).returning().get()!;
}
