import { sql } from 'drizzle-orm';
import { formatAmount } from '../core/money.js';
import { allCursors } from './chain-state.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

import { REFUSED_ORDERS_LISTED, type Adjusted, type Period, type Summary, type Tally, type Totals } from '../core/types.js';

export type { Adjusted, Period, Summary, Tally, Totals };

const DAY = 86_400_000;

/** Midnight UTC of `now`'s day, and of the Monday of its week (the CLI writes every time in UTC). */
export function periodStarts(now: number): { today: number; week: number } {
  const today = now - (now % DAY);
  const weekday = (new Date(today).getUTCDay() + 6) % 7; // Monday 0
  return { today, week: today - weekday * DAY };
}

/**
 * The sum of an amount column in two halves, each of which SQLite adds within 64 bits: the high
 * 31 bits of every amount and the low 32 (amounts are at most 2^63 - 1, decisions "The ledger's
 * bound"). SQL's sum() of the amounts themselves throws past 64 bits, and a period's money that
 * comes and goes (credited then debited back, paid then refunded, or several merchants' together)
 * passes it while no balance nears the bound: summary then failed whole (a review of session 25).
 */
const halves = (column: string) => sql.raw(`coalesce(sum(${column} >> 32), 0) as hi, coalesce(sum(${column} & 4294967295), 0) as lo`);
const whole = (r: { hi: bigint | number; lo: bigint | number }) => (BigInt(r.hi) << 32n) + BigInt(r.lo);

/** Each query reads one small group per asset: asset, n, and the halves of its amounts' sum. */
function tally(s: StoreCtx, query: ReturnType<typeof sql>): Tally {
  const rows = s.db.all<{ asset: string; n: bigint; hi: bigint; lo: bigint }>(query);
  const total: Totals = {};
  let count = 0;
  for (const r of rows) {
    count += Number(r.n);
    total[r.asset] = formatAmount(whole(r), decimalsOf(r.asset));
  }
  return { count, total };
}

/**
 * The period's balance adjustments (transfers of kind `adjustment`: `balance adjust`, and a refused
 * payment credited by hand), split by whether a user's account was credited or debited. Read
 * from their own partial index (0020), never from the whole transfers table.
 */
function adjusted(s: StoreCtx, merchant: ReturnType<typeof sql>, since: number): Adjusted {
  const rows = s.db.all<{ asset: string; toUser: bigint; n: bigint; hi: bigint; lo: bigint }>(sql`select t.asset as asset, (a.kind = 'user') as toUser, count(*) as n,
      ${halves('t.amount')} from transfers t join accounts a on a.id = t.credit_account_id
    where t.kind = 'adjustment' and ${merchant} and t.created_at >= ${since} group by t.asset, toUser`);
  const out: Adjusted = { count: 0, credited: {}, debited: {} };
  for (const r of rows) {
    out.count += Number(r.n);
    (Number(r.toUser) ? out.credited : out.debited)[r.asset] = formatAmount(whole(r), decimalsOf(r.asset));
  }
  return out;
}

/** `chainName` is the registry's name of a chain, null when the registry has no such chain. */
export function summarize(s: StoreCtx, opts: { mchId?: string; chainName: (chainId: string) => string | null }): Summary {
  const now = s.now();
  const m = opts.mchId ?? null;
  const byMerchant = (col: string) => (m === null ? sql`1` : sql`${sql.raw(col)} = ${m}`);
  // The order's merchant as a filter, not a way in (unary +): the undecided payments are read
  // first, each order by its key, never every order of the merchant (a scale review: 3.1 s at
  // 240,000 orders).
  const ofOrderMerchant = m === null ? sql`1` : sql`+o.merchant_id = ${m}`;
  // The period's payments and refunds of the merchant (merchant_id, created_at: 0019), of every
  // merchant by time (0018): never another merchant's (session 24's attacker review).
  const period = (since: number): Period => ({
    since,
    payments: tally(s, sql`select o.asset as asset, count(*) as n, ${halves('p.amount')} from payments p join orders o on o.id = p.order_id
      where ${byMerchant('p.merchant_id')} and p.created_at >= ${since} group by o.asset`),
    refunds: tally(s, sql`select o.asset as asset, count(*) as n, ${halves('r.amount')} from refunds r join orders o on o.id = r.order_id
      where ${byMerchant('r.merchant_id')} and r.created_at >= ${since} group by o.asset`),
    withdrawals: tally(s, sql`select asset, count(*) as n, ${halves('amount')} from withdrawals
      where status = 'CONFIRMED' and updated_at >= ${since} and ${byMerchant('merchant_id')} group by asset`),
    adjustments: adjusted(s, byMerchant('t.merchant_id'), since),
  });
  const starts = periodStarts(now);
  const pending = tally(s, sql`select asset, count(*) as n, ${halves('amount')} from withdrawals where status = 'PENDING' and ${byMerchant('merchant_id')} group by asset`);
  const confirming = Number(s.db.get<{ n: bigint }>(sql`select count(*) as n from withdrawals where status = 'PENDING' and verification = 'confirming' and ${byMerchant('merchant_id')}`)?.n ?? 0);

  const available: Record<string, bigint> = {};
  const held: Record<string, bigint> = {};
  for (const a of s.db.all<{ asset: string; posted: bigint; pending: bigint }>(sql`select asset, posted, pending_debits as pending from accounts where kind = 'user' and ${byMerchant('merchant_id')}`)) {
    available[a.asset] = (available[a.asset] ?? 0n) + BigInt(a.posted) - BigInt(a.pending);
    held[a.asset] = (held[a.asset] ?? 0n) + BigInt(a.pending);
  }
  const fmt = (t: Record<string, bigint>): Totals => Object.fromEntries(Object.entries(t).map(([asset, v]) => [asset, formatAmount(v, decimalsOf(asset))]));

  const heldPayments = tally(s, sql`select o.asset as asset, count(*) as n, ${halves('c.amount')} from chain_payments c join orders o on o.id = c.order_id
    where c.status = 'held' and ${ofOrderMerchant} group by o.asset`);

  // Until an operator decides each (order credit-held or return-held): then no longer counted.
  const refusedPayments = {
    ...tally(s, sql`select o.asset as asset, count(*) as n, ${halves('c.amount')} from chain_payments c join orders o on o.id = c.order_id
      where c.status = 'refused' and ${ofOrderMerchant} group by o.asset`),
    orders: s.db.all<{ id: string }>(sql`select distinct c.order_id as id from chain_payments c join orders o on o.id = c.order_id
      where c.status = 'refused' and ${ofOrderMerchant} order by c.order_id limit ${REFUSED_ORDERS_LISTED}`).map((r) => r.id),
  };

  const chains = allCursors(s.db).map((c) => {
    const scannedTo = c.nextBlock >= 0 ? c.nextBlock - 1 : null;
    return {
      chainId: c.chainId, name: opts.chainName(c.chainId), head: c.head ?? null, scannedTo, lag: c.head != null && scannedTo !== null ? Math.max(0, c.head - scannedTo) : null,
      headAt: c.headAt ?? null, lastError: c.lastError ?? null, deepReorg: c.deepReorg ?? null,
    };
  });

  // Callbacks that used up their retries (the outbox, migration 0005): the merchant missed them.
  const failedCallbacks = Number(s.db.get<{ n: bigint }>(sql`select count(*) as n from callbacks where status = 'failed' and ${byMerchant('merchant_id')}`)?.n ?? 0);
  // Still retried after a failed attempt: a receiver failing now, days before any counts as failed.
  const retrying = s.db.get<{ n: bigint; since: bigint | null }>(sql`select count(*) as n, min(created_at) as since from callbacks where status = 'pending' and attempts > 0 and ${byMerchant('merchant_id')}`);
  const retryingCallbacks = { count: Number(retrying?.n ?? 0), since: retrying?.since == null ? null : Number(retrying.since) };

  return {
    at: now, mchId: m,
    pendingWithdrawals: { ...pending, confirming },
    today: period(starts.today), week: period(starts.week),
    balances: { available: fmt(available), held: fmt(held) },
    heldPayments, refusedPayments, chains, failedCallbacks, retryingCallbacks,
  };
}
