/**
 * A stateful, model-based property test of the money operations (fast-check `fc.commands` +
 * `fc.asyncModelRun`): random sequences of create order (duplicate oids, expiries), mark-paid
 * (full, under, over; hashes reused in other spellings), refund (by id, oid, both; partial, full,
 * over), withdrawal apply / confirm / reject, balance adjust (+/-), reads and clock moves run
 * against the real LocalPaymentService on a real SQLite ledger file (two merchants), and every
 * answer is compared with a small in-memory model written from the spec
 * (../shared/spec/decisions.md §2-§6) and docs/decisions.md. Amounts are drawn as base units and
 * sent in the accepted spellings (canonical, padded, leading zeros) or as edge texts (zero,
 * signs, exponents, 7 places, past the 10^12 cap, non-strings); some are read from the model at
 * run time (what remains to refund, the available balance, plus one unit).
 *
 * After every command:
 *  - success or refusal, and the refusal's kind (400 invalid / 404 not_found / 409 conflict), are
 *    the model's; the amounts and statuses of a successful answer are the model's;
 *  - a refusal changed nothing (accounts, transfers, orders, withdrawals, tx keys, row counts);
 *  - every account of the ledger (users' posted and held, the system accounts) equals the model's,
 *    every order's paid / refunded / status / late / paidAt, every withdrawal's status and hash,
 *    the set of used transaction keys, `balance` of every user, and no order address is a
 *    withdrawal's destination;
 *  - `ledger check` (service.check()) finds nothing wrong (and once more at the end of a run).
 *
 * Also: `together(A, B)` runs two changes at once (the group commit may put both in one
 * transaction); the outcome must be that of A-then-B or B-then-A. `elsewhere(X)` runs X through a
 * second connection to the same ledger file. A second property ("whale") sends mostly the largest
 * amount one operation may carry, to one merchant and two users: the ledger's ±(2^63 - 1) bound.
 *
 * Model: per merchant, user accounts (posted, held) and system accounts (payments, refunds,
 * withdrawals, adjustments); orders (amount, paid, refunded, stored status, expiry, addresses);
 * withdrawals (status, hash, destination); the set of transaction keys (32 bytes, any spelling),
 * each held in the whole ledger (payments) or within one merchant (payouts).
 *
 * Env: MODEL_RUNS (default 150), MODEL_WHALE_RUNS (40), MODEL_COMMANDS (at most, 100),
 * MODEL_SEED and MODEL_PATH to replay a failure, MODEL_STATS=1 to print how often each command
 * was accepted or refused and why.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../src/chains/address.js';
import { deriveAddress } from '../../src/chains/derive.js';
import { AppError, type ErrorKind } from '../../src/core/errors.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { SHOP_WALLET, TRON_CHAIN, USDT, addOtherMerchant, addShopMerchant, openHarness, type Harness } from '../helpers/service.js';

// ------------------------------------------------------------------------------------------------
// Constants of the spec

/** Ledger bound: every balance / total within ±(2^63 - 1) base units (docs/decisions.md). */
const MAX = 2n ** 63n - 1n;
/** USDT: 6 decimals (spec §2, §6a). */
const DECIMALS = 6;
const SCALE = 10n ** BigInt(DECIMALS);
/** One operation carries at most 10^12 whole units (docs/decisions.md "Largest amount"). */
const MAX_OP = 1_000_000_000_000n * SCALE;
/** Default order lifetime: 30 minutes (spec §3). */
const LIFETIME = 30 * 60_000;

const TO_EVM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const TO_TRON = tronAddressFromEvm(TO_EVM);
const ZERO_TO = { EVM: `0x${'0'.repeat(40)}`, TRON: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' };
/** Merchant 0's own addresses (the test mnemonic's xpubs), given out or still to come. */
const derivedTo = (chain: Chain, k: number) => deriveAddress(chain, chain === 'EVM' ? SHOP_WALLET.evmXpub : SHOP_WALLET.tronXpub, k);
/** Addresses are one whatever the case on EVM (hex), exactly on TRON (base58). */
const sameAddress = (chain: Chain, a: string, b: string) => (chain === 'EVM' ? a.toLowerCase() === b.toLowerCase() : a === b);

type Mch = 0 | 1;
type Stored = 'PENDING_PAY' | 'PAID' | 'REFUNDED';
type Chain = 'EVM' | 'TRON';
type WdStatus = 'PENDING' | 'CONFIRMED' | 'REJECTED';
type SysKind = 'payments' | 'refunds' | 'withdrawals' | 'adjustments';

interface MOrder { id: string; mch: Mch; oid: string; uid: string; amount: bigint; paid: bigint; refunded: bigint; expiredAt: number; stored: Stored; addrs: { EVM?: string; TRON?: string }; late: boolean; paidAt: number | null }
interface MWd { id: string; mch: Mch; uid: string; amount: bigint; chain: Chain; status: WdStatus; txHash: string | null; to: string }
interface Acct { posted: bigint; pending: bigint }
interface Model { now: number; accounts: Map<string, Acct>; orders: MOrder[]; wds: MWd[]; keys: Set<string> }
/** `s` answers the calls; `s2` is a second connection to the same ledger file (another process, as it were). */
interface Real { h: Harness; s: LocalPaymentService; s2: LocalPaymentService; mch: [string, string] }

/** Users; 'Alice' and 'alice' are two users (a uid is compared exactly), 'ali\u200dce' (a joiner) is taken. */
const USERS = ['alice', 'bob', 'carol', 'Alice', 'ali\u200dce'] as const;
/** Refused uids: '&' (callbacks), empty, 65 characters, a direction override, a control character. */
const BAD_UIDS = ['tom&jerry', '', 'u'.repeat(65), 'bo\u202eb', 'bob\u0007'];
const DAY = 86_400_000;

// ------------------------------------------------------------------------------------------------
// The model's rules, written from the spec

/** Spec §2: digits, optionally a point and digits; at most 6 places; positive; at most 10^12 whole units. */
function specAmount(v: unknown): bigint | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(v);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > DECIMALS) return undefined;
  const units = BigInt(m[1]!) * SCALE + BigInt(frac.padEnd(DECIMALS, '0'));
  if (units <= 0n || units > MAX_OP) return undefined;
  return units;
}

/** Balance adjust: "+5", "-2.5" or "5" (docs/decisions.md, src/core/money.ts doc). */
function specSignedAmount(v: unknown): bigint | undefined {
  if (typeof v !== 'string') return undefined;
  const neg = v.startsWith('-');
  const body = neg || v.startsWith('+') ? v.slice(1) : v;
  const u = specAmount(body);
  return u === undefined ? undefined : neg ? -u : u;
}

/** Canonical form (spec §2): no leading zeros, no trailing fractional zeros. */
function fmt(units: bigint): string {
  if (units < 0n) return `-${fmt(-units)}`;
  const frac = (units % SCALE).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  return `${units / SCALE}${frac ? `.${frac}` : ''}`;
}

/** A uid: 1 to 64 characters, no "&" (callbacks), no control or hidden characters. */
const validUid = (u: string) =>
  u.length >= 1 && u.length <= 64 && !u.includes('&') && !/[\u0000-\u001f\u007f-\u009f]/.test(u) &&
  // docs "Nothing hidden in what a payer reads": format characters but the joiners, separators, invisible blanks.
  !/(?![\u200c\u200d])[\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u3164\uffa0]/u.test(u);

/** Spec §3: an unpaid order past expiredAt reads EXPIRED at once. */
const readStatus = (o: MOrder, now: number) => (o.stored === 'PENDING_PAY' && now > o.expiredAt ? 'EXPIRED' : o.stored);

/**
 * Spec §3/§5, docs "Payments recorded by hand": paid >= amount is PAID, or REFUNDED when refunds
 * equal payments; a fully refunded order is PAID again only when what arrived since covers its
 * amount (dust does not); a partly refunded order stays PAID.
 */
const statusFor = (o: MOrder): Stored =>
  o.paid < o.amount ? 'PENDING_PAY' : o.refunded >= o.paid ? 'REFUNDED' : o.stored === 'REFUNDED' && o.paid - o.refunded < o.amount ? 'REFUNDED' : 'PAID';

/** One transaction, one key: 32 bytes whatever the spelling (`0x` or not, any case). */
const keyOf = (hash: string) => hash.toLowerCase().replace(/^0x/, '');

/**
 * docs "Who holds a transaction": a payment holds its key in the whole ledger (scope ''), a
 * payout within its merchant (scope: the merchant). A key is in a claimant's way when held in the whole ledger or
 * by the claimant's own merchant. Entries are `key|scope`, the scope a merchant's index.
 */
const keyEntry = (hash: string, scope: Mch | '') => `${keyOf(hash)}|${scope}`;
const keyTaken = (m: Model, hash: string, mch: Mch) => m.keys.has(keyEntry(hash, '')) || m.keys.has(keyEntry(hash, mch));
const ZERO_HASH = /^(0x)?0{64}$/i;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/** Which spellings of a hash each operation takes (spec §6; docs "Confirm"; payments by hand). */
function hashForm(hash: string, where: 'pay-any' | 'pay-EVM' | 'pay-TRON' | 'wd-EVM' | 'wd-TRON'): string | undefined {
  const evm = /^0x[0-9a-fA-F]{64}$/.test(hash);
  const bare = HEX64.test(hash);
  let ok: boolean;
  let stored = hash.toLowerCase();
  switch (where) {
    case 'pay-any': ok = evm || bare; break;
    case 'pay-EVM': ok = evm; break;
    case 'wd-EVM': ok = evm; break;
    case 'pay-TRON':
    case 'wd-TRON':
      // "TRON takes 64 hex digits, 0x accepted and dropped (the record keeps TRON's own spelling)";
      // payments by hand too, since session 20.
      ok = bare || /^0[xX][0-9a-fA-F]{64}$/.test(hash);
      stored = stored.replace(/^0x/, '');
      break;
  }
  if (!ok || ZERO_HASH.test(hash)) return undefined;
  return stored;
}

/** blockNumber: a positive integer, as a number or a digit string (≤ 2^53 - 1). */
function validBlock(b: unknown): boolean {
  if (typeof b === 'number') return Number.isSafeInteger(b) && b > 0;
  return typeof b === 'string' && /^[1-9][0-9]{0,15}$/.test(b) && Number(b) <= Number.MAX_SAFE_INTEGER;
}

class Refusal extends Error {
  constructor(readonly kind: ErrorKind, why: string) {
    super(why);
  }
}

const acctKey = (mch: Mch, kind: 'user' | SysKind, uid = '') => `${mch}|${kind}|${uid}`;
function acct(m: Model, key: string): Acct {
  let a = m.accounts.get(key);
  if (!a) m.accounts.set(key, (a = { posted: 0n, pending: 0n }));
  return a;
}
/** Credits never pass the ledger's bound (409, nothing changed). */
function credit(m: Model, key: string, amount: bigint) {
  const a = acct(m, key);
  if (a.posted + amount > MAX) throw new Refusal('conflict', `${key} would pass the ledger bound`);
  a.posted += amount;
}
/** A user's available balance must cover a debit (spec §4); a system account stays above -MAX. */
function debit(m: Model, key: string, amount: bigint) {
  const a = acct(m, key);
  const user = key.includes('|user|');
  if (user ? a.posted - a.pending < amount : a.posted - amount < -MAX) throw new Refusal('conflict', `${key} cannot be debited ${amount}: ${user ? 'insufficient balance' : 'bound'}`);
  a.posted -= amount;
}
/** Withdrawal apply: available to held (spec §4). */
function hold(m: Model, key: string, amount: bigint) {
  const a = acct(m, key);
  if (a.posted - a.pending < amount) throw new Refusal('conflict', `${key}: insufficient balance for a hold of ${amount}`);
  a.pending += amount;
}
const available = (m: Model, mch: Mch, uid: string) => {
  const a = m.accounts.get(acctKey(mch, 'user', uid));
  return a ? a.posted - a.pending : 0n;
};

const cloneModel = (m: Model): Model => structuredClone(m);
function replaceModel(m: Model, next: Model) {
  m.now = next.now;
  m.accounts = next.accounts;
  m.orders = next.orders;
  m.wds = next.wds;
  m.keys = next.keys;
}

/** What the model expects of one call: a refusal of one of these kinds, or success and the next state. */
type Expect<R> = { refuse: ErrorKind; why: string } | { ok: (r: R) => void; bind?: (r: R) => void; next: Model };
const refuse = (kind: ErrorKind, why: string) => ({ refuse: kind, why });

/** Runs the model's effects on a copy; a Refusal thrown there is the expected refusal. */
function draft<R>(m: Model, effects: (d: Model) => (r: R) => void, bind?: (r: R) => void): Expect<R> {
  const d = cloneModel(m);
  try {
    const ok = effects(d);
    return { ok, next: d, ...(bind ? { bind } : {}) };
  } catch (e) {
    if (e instanceof Refusal) return refuse(e.kind, e.message);
    throw e;
  }
}

// ------------------------------------------------------------------------------------------------
// Generated parameters

type Rel = 'orderAmount' | 'orderAmountMinus' | 'orderAmountPlus' | 'remaining' | 'remainingPlus' | 'paid' | 'paidPlus' | 'available' | 'availablePlus' | 'half';
type Style = 'canon' | 'pad' | 'lead' | 'padlead';
type AmountSpec = { units: bigint; style: Style } | { rel: Rel; style: Style } | { raw: unknown };

function render(units: bigint, style: Style): string {
  if (units <= 0n) return style === 'pad' ? '0.000000' : '0';
  const c = fmt(units);
  const padded = `${units / SCALE}.${(units % SCALE).toString().padStart(DECIMALS, '0')}`;
  switch (style) {
    case 'canon': return c;
    case 'pad': return padded;
    case 'lead': return `000${c}`;
    case 'padlead': return `0${padded}`;
  }
}

/** The text sent for an amount; relative amounts are read from the model at run time. */
function amountText(spec: AmountSpec, ctx: { order?: MOrder; avail?: bigint }): unknown {
  if ('raw' in spec) return spec.raw;
  if ('units' in spec) return render(spec.units, spec.style);
  const o = ctx.order;
  const a = ctx.avail ?? 0n;
  const units = (() => {
    switch (spec.rel) {
      case 'orderAmount': return o ? o.amount : 1n;
      case 'orderAmountMinus': return o ? o.amount - 1n : 1n;
      case 'orderAmountPlus': return o ? o.amount + 1n : 2n;
      case 'remaining': return o ? o.paid - o.refunded : 1n;
      case 'remainingPlus': return o ? o.paid - o.refunded + 1n : 2n;
      case 'paid': return o ? o.paid : 1n;
      case 'paidPlus': return o ? o.paid + 1n : 2n;
      case 'available': return a;
      case 'availablePlus': return a + 1n;
      // Half of what the context offers: a partial refund, a partial payment, half the balance.
      case 'half': return ctx.avail !== undefined ? a / 2n : o ? (o.paid > o.refunded ? (o.paid - o.refunded) / 2n : o.amount / 2n) : 1n;
    }
  })();
  // An amount the context makes zero or less (nothing paid, no balance) is sent as 1 USDT instead:
  // zero itself comes from the edge texts.
  return render(units > 0n ? units : SCALE, spec.style);
}
const showAmount = (s: AmountSpec) => ('raw' in s ? JSON.stringify(s.raw) : 'units' in s ? `${s.units}u/${s.style}` : `${s.rel}/${s.style}`);

const styleArb = fc.constantFrom<Style>('canon', 'pad', 'lead', 'padlead');
const RAW_AMOUNTS: unknown[] = [
  '0', '0.0', '0.000000', '-1', '+1', '.5', '1.', '1e3', ' 1', '1 ', '1,5', '1.0000000', '0.0000001', '0.000001',
  '10000000000000', '1000000000000', '1000000000000.000001', '999999999999.999999', '99999999999999999999999',
  '00000000000000000000001.5', '', '\u0661', '0x10', 'NaN', 10, '1_000',
];

type Spelling = '0x' | '0xU' | 'bare' | 'bareU' | '0X' | 'mixed';
type HashSpec = { n: number; sp: Spelling } | { bad: 'zero' | 'zeroBare' | 'short' | 'nonhex' | 'long' };
const hexOf = (n: number) => createHash('sha256').update(`tx-${n}`).digest('hex');
function hashText(h: HashSpec): string {
  if ('bad' in h) {
    return { zero: `0x${'0'.repeat(64)}`, zeroBare: '0'.repeat(64), short: '0x1234', nonhex: `0x${'g'.repeat(64)}`, long: `0x${hexOf(1)}00` }[h.bad];
  }
  const hex = hexOf(h.n);
  switch (h.sp) {
    case '0x': return `0x${hex}`;
    case '0xU': return `0x${hex.toUpperCase()}`;
    case 'bare': return hex;
    case 'bareU': return hex.toUpperCase();
    case '0X': return `0X${hex}`;
    case 'mixed': return `0x${[...hex].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('')}`;
  }
}
const showHash = (h: HashSpec) => ('bad' in h ? h.bad : `tx${h.n}/${h.sp}`);
type Sign = '' | '+' | '-';

// ------------------------------------------------------------------------------------------------
// Running calls against both

function snapshot(r: Real) {
  const q = (sql: string) => r.h.ledger.sqlite.prepare(sql).all();
  return {
    accounts: q('select * from accounts order by id'),
    transfers: q('select * from transfers order by id'),
    orders: q('select * from orders order by id'),
    withdrawals: q('select * from withdrawals order by id'),
    keys: q('select * from tx_keys order by key'),
    counts: q(`select (select count(*) from payments) p, (select count(*) from refunds) r, (select count(*) from audit_log) a,
      (select count(*) from callbacks) c, (select count(*) from order_addresses) oa`),
  };
}

const describeError = (e: unknown) => (e instanceof AppError ? `${e.kind}: ${e.message}` : e instanceof Error ? `${e.name}: ${e.message}` : String(e));
const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));

/** How often each command was accepted or refused, and why (printed with MODEL_STATS=1). */
const stats = new Map<string, number>();
const count = (label: string, exp: Expect<unknown>) => {
  const k = `${label.slice(0, label.indexOf('('))} ${'refuse' in exp ? `refused ${exp.refuse} ${exp.why.replace(/[0-9a-fA-F]{20,}|"[^"]*"|[0-9]{2,}/g, '#')}` : 'ok'}`;
  stats.set(k, (stats.get(k) ?? 0) + 1);
};

/** One call: its label, what the model expects of it in a given state, and the call itself (inputs fixed). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyOp = Op<any>;
interface Op<R = unknown> {
  label: string;
  predict(m: Model): Expect<R>;
  invoke(r: Real): Promise<R>;
}

async function step(m: Model, r: Real, op: AnyOp): Promise<void> {
  const exp = op.predict(m);
  count(op.label, exp);
  const before = snapshot(r);
  let result: unknown;
  let error: unknown;
  let threw = false;
  try {
    result = await op.invoke(r);
  } catch (e) {
    threw = true;
    error = e;
  }
  if ('refuse' in exp) {
    if (!threw) throw new Error(`${op.label}: the model expects a refusal (${exp.refuse}: ${exp.why}) but the service answered ${json(result)}`);
    if (!(error instanceof AppError)) throw new Error(`${op.label}: refused with an error that is not an AppError: ${describeError(error)}`);
    if (error.kind !== exp.refuse) throw new Error(`${op.label}: refused as ${describeError(error)}; the model expects ${exp.refuse} (${exp.why})`);
    expect(snapshot(r), `${op.label}: refused (${error.message}) but the ledger changed`).toEqual(before);
  } else {
    if (threw) throw new Error(`${op.label}: the model expects success, the service refused: ${describeError(error)}`);
    exp.bind?.(result);
    exp.ok(result);
    replaceModel(m, exp.next);
  }
  await compareAll(m, r, op.label);
}

/** Every account, order, withdrawal, key and balance against the model; then `ledger check`. */
async function compareAll(m: Model, r: Real, label: string): Promise<void> {
  const mchIndex = (id: string): Mch => {
    if (id === r.mch[0]) return 0;
    if (id === r.mch[1]) return 1;
    throw new Error(`unknown merchant ${id}`);
  };
  const rows = r.h.ledger.sqlite.prepare('select merchant_id as m, asset, kind, uid, posted, pending_debits as p from accounts').all() as { m: string; asset: string; kind: string; uid: string; posted: bigint; p: bigint }[];
  const seen = new Set<string>();
  for (const row of rows) {
    expect(row.asset, `${label}: account asset`).toBe('USDT');
    const key = `${mchIndex(row.m)}|${row.kind}|${row.uid}`;
    seen.add(key);
    const want = m.accounts.get(key) ?? { posted: 0n, pending: 0n };
    expect({ account: key, posted: row.posted, held: row.p }, `${label}: ledger account differs from the model`).toEqual({ account: key, posted: want.posted, held: want.pending });
  }
  for (const [key, a] of m.accounts) {
    if (!seen.has(key) && (a.posted !== 0n || a.pending !== 0n)) throw new Error(`${label}: the model has account ${key} = ${a.posted}/${a.pending}, the ledger has none`);
  }
  for (const mch of [0, 1] as const) {
    for (const uid of USERS) {
      const a = m.accounts.get(acctKey(mch, 'user', uid)) ?? { posted: 0n, pending: 0n };
      expect(await r.s.balance(uid, { mchId: r.mch[mch] }), `${label}: balance of ${uid}@mch${mch}`).toMatchObject({ available: fmt(a.posted - a.pending), held: fmt(a.pending) });
    }
  }
  const realOrders = (r.h.ledger.sqlite.prepare('select id from orders').all() as { id: string }[]).map((o) => o.id).sort();
  expect(realOrders, `${label}: the orders in the ledger`).toEqual(m.orders.map((o) => o.id).sort());
  for (const o of m.orders) {
    const d = await r.s.getOrder(o.id);
    expect({ oid: d.oid, uid: d.uid, mch: d.mchId, amount: d.amount, paid: d.paidAmount, refunded: d.refundedAmount, status: d.status, expiredAt: d.expiredAt, late: d.late, paidAt: d.paidAt }, `${label}: order ${o.oid}@mch${o.mch}`)
      .toEqual({ oid: o.oid, uid: o.uid, mch: r.mch[o.mch], amount: fmt(o.amount), paid: fmt(o.paid), refunded: fmt(o.refunded), status: readStatus(o, m.now), expiredAt: o.expiredAt, late: o.late, paidAt: o.paidAt });
    expect(await r.s.getOrderStatus(o.id), `${label}: status of order ${o.oid}@mch${o.mch}`).toBe(readStatus(o, m.now));
  }
  const realWds = (r.h.ledger.sqlite.prepare('select id from withdrawals').all() as { id: string }[]).map((w) => w.id).sort();
  expect(realWds, `${label}: the withdrawals in the ledger`).toEqual(m.wds.map((w) => w.id).sort());
  for (const w of m.wds) {
    const d = await r.s.getWithdrawal(w.id);
    expect({ uid: d.uid, amount: d.amount, status: d.status, txHash: d.txHash }, `${label}: withdrawal ${w.id}`).toEqual({ uid: w.uid, amount: fmt(w.amount), status: w.status, txHash: w.txHash });
  }
  // docs "Where a payout may go": an order is never given an address a withdrawal pays to, and
  // a payout never goes to one given out: either way the payout would count as a payment.
  const clash = r.h.ledger.sqlite.prepare(`select a.address, w.id from order_addresses a join withdrawals w
    on a.chain_type = w.chain_type and (a.address = w.to_address or (a.chain_type = 'EVM' and lower(a.address) = lower(w.to_address)))`).all();
  expect(clash, `${label}: order addresses that withdrawals pay to`).toEqual([]);
  const keys = (r.h.ledger.sqlite.prepare('select key, scope from tx_keys').all() as { key: string; scope: string }[])
    .map((k) => `${k.key}|${k.scope === '' ? '' : r.mch.indexOf(k.scope)}`).sort();
  expect(keys, `${label}: transaction keys`).toEqual([...m.keys].sort());
  expect(await r.s.check(), `${label}: ledger check`).toEqual([]);
}

// ------------------------------------------------------------------------------------------------
// Commands

type Cmd = fc.AsyncCommand<Model, Real>;
const pickOf = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined);
/** With `prefer`, picks among the items that pass `live` when there are any: fewer runs spent on dead targets. */
const pickLive = <T>(list: T[], n: number, prefer: boolean, live: (t: T) => boolean): T | undefined => {
  const alive = prefer ? list.filter(live) : [];
  return pickOf(alive.length ? alive : list, n);
};

/** A command that is one call: its inputs are fixed from the model as it stands (prepare), then run. */
abstract class OneCall implements Cmd {
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  abstract prepare(m: Model): AnyOp;
  async run(m: Model, r: Real) {
    await step(m, r, this.prepare(m));
  }
  abstract toString(): string;
}

type Expiry = 'none' | 'plus10m' | 'plus7d' | 'plus7d1' | 'now' | 'past' | 'same' | 'string10m' | 'bad';
class CreateOrder extends OneCall {
  constructor(readonly mch: Mch, readonly oid: string, readonly uid: string, readonly amount: AmountSpec, readonly expiry: Expiry = 'none') {
    super();
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['createOrder']>>> {
    const existing = m.orders.find((o) => o.mch === this.mch && o.oid === this.oid);
    const amount = amountText(this.amount, { order: existing });
    const expiredAt: number | string | undefined = (() => {
      switch (this.expiry) {
        case 'none': return undefined;
        case 'plus10m': return m.now + 10 * 60_000;
        case 'plus7d': return m.now + 7 * DAY;
        case 'plus7d1': return m.now + 7 * DAY + 1;
        case 'now': return m.now;
        case 'past': return m.now - 60_000;
        case 'same': return existing?.expiredAt ?? m.now + LIFETIME;
        case 'string10m': return String(m.now + 10 * 60_000);
        case 'bad': return 'tomorrow';
      }
    })();
    const input = { oid: this.oid, uid: this.uid, amount: amount as string, ...(expiredAt === undefined ? {} : { expiredAt: expiredAt as number }) };
    return {
      label: `${this} = createOrder(${json(input)})`,
      invoke: (r) => r.s.createOrder({ mchId: r.mch[this.mch], ...input }),
      predict: (m) => {
        if (!validUid(this.uid)) return refuse('invalid', 'uid');
        const units = specAmount(amount);
        if (units === undefined) return refuse('invalid', `amount ${json(amount)}`);
        // Spec §3: expiredAt is a milliseconds timestamp, a number or a digit string.
        if (typeof expiredAt === 'string' && !/^[0-9]{1,16}$/.test(expiredAt)) return refuse('invalid', 'expiredAt is no timestamp');
        const exp = expiredAt === undefined ? undefined : Number(expiredAt);
        const existing = m.orders.find((o) => o.mch === this.mch && o.oid === this.oid);
        if (existing) {
          // Spec §3: same oid and the same fields is the idempotent retry (docs: a retry without
          // expiredAt matches any expiry); other fields fail.
          if (existing.uid !== this.uid || existing.amount !== units || (exp !== undefined && exp !== existing.expiredAt)) return refuse('conflict', 'oid taken with other fields');
          return { next: cloneModel(m), ok: (o) => expect(o).toMatchObject({ id: existing.id, oid: this.oid, uid: this.uid, amount: fmt(units), status: readStatus(existing, m.now), expiredAt: existing.expiredAt }) };
        }
        // Spec §3: in the future, at most 7 days ahead; default now + 30 minutes.
        const at = exp ?? m.now + LIFETIME;
        if (at <= m.now) return refuse('invalid', 'expiredAt not in the future');
        if (at > m.now + 7 * DAY) return refuse('invalid', 'expiredAt more than 7 days ahead');
        let order: MOrder;
        return draft(m, (d) => {
          order = { id: '', mch: this.mch, oid: this.oid, uid: this.uid, amount: units, paid: 0n, refunded: 0n, expiredAt: at, stored: 'PENDING_PAY', addrs: {}, late: false, paidAt: null };
          d.orders.push(order);
          return (res) => {
            expect(res).toMatchObject({ oid: this.oid, uid: this.uid, amount: fmt(units), status: 'PENDING_PAY', expiredAt: at });
            expect(m.orders.some((x) => x.id === res.id), 'a new order has a new id').toBe(false);
          };
        }, (res) => {
          order.id = res.id;
          order.addrs = { ...res.addresses };
        });
      },
    };
  }
  toString() {
    return `createOrder(mch${this.mch}, ${this.oid}, ${json(this.uid)}, ${showAmount(this.amount)}${this.expiry === 'none' ? '' : `, expiry ${this.expiry}`})`;
  }
}

type PayChain = 'none' | 'EVM' | 'TRON';
class MarkPaid extends OneCall {
  constructor(readonly pick: number, readonly unknown: boolean, readonly hash: HashSpec, readonly amount: AmountSpec | undefined, readonly chain: PayChain) {
    super();
  }
  override check(m: Readonly<Model>) {
    return this.unknown || m.orders.length > 0;
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['markPaid']>>> {
    const target = this.unknown ? undefined : pickOf(m.orders, this.pick);
    const id = target?.id ?? 'ord_unknown';
    const tx = hashText(this.hash);
    const amount = this.amount === undefined ? undefined : amountText(this.amount, { order: target });
    const input = {
      id, txHash: tx, ...(amount === undefined ? {} : { amount: amount as string }),
      ...(this.chain === 'EVM' ? { chainId: '1' } : this.chain === 'TRON' ? { chainId: TRON_CHAIN } : {}),
    };
    return {
      label: `${this} = markPaid(${json(input)})`,
      invoke: (r) => r.s.markPaid(input),
      predict: (m) => {
        const stored = hashForm(tx, this.chain === 'none' ? 'pay-any' : this.chain === 'EVM' ? 'pay-EVM' : 'pay-TRON');
        if (stored === undefined) return refuse('invalid', `hash ${tx} for ${this.chain}`);
        // docs "Payments recorded by hand": accepted on an unpaid, expired, paid or refunded order.
        const o = m.orders.find((x) => x.id === id);
        if (!o) return refuse('not_found', 'no such order');
        // Without an amount: what is still due; nothing due is refused (docs "Payments recorded by hand").
        const units = amount === undefined ? o.amount - o.paid : specAmount(amount);
        if (units === undefined) return refuse('invalid', `amount ${json(amount)}`);
        if (units <= 0n) return refuse('invalid', 'nothing is due');
        // One transaction, one key: a hash pays at most one order and never also a withdrawal.
        if (keyTaken(m, tx, o.mch)) return refuse('conflict', 'transaction already recorded');
        return draft(m, (d) => {
          const od = d.orders.find((x) => x.id === o.id)!;
          if (od.paid + units > MAX) throw new Refusal('conflict', 'paid total past the bound');
          // Spec §4, §6b: the order's user is credited what arrived (over- or underpaid).
          debit(d, acctKey(o.mch, 'payments'), units);
          credit(d, acctKey(o.mch, 'user', o.uid), units);
          d.keys.add(keyEntry(tx, ''));
          od.paid += units;
          const before = od.stored;
          od.stored = statusFor(od);
          // Spec §6b: a payment after expiredAt still makes the order PAID, marked late; the order
          // keeps the time it was paid (docs: by hand, the moment it is recorded stands in).
          const late = m.now > od.expiredAt;
          if (od.stored === 'PAID' && before !== 'PAID') {
            od.late ||= late;
            od.paidAt = m.now;
          }
          return (res) => expect({ paid: res.paidAmount, refunded: res.refundedAmount, status: res.status, late: res.late, paidAt: res.paidAt, payment: res.payments.at(-1) })
            .toEqual({ paid: fmt(od.paid), refunded: fmt(od.refunded), status: readStatus(od, m.now), late: od.late, paidAt: od.paidAt, payment: expect.objectContaining({ txHash: stored, amount: fmt(units), late, source: 'manual' }) });
        });
      },
    };
  }
  toString() {
    return `markPaid(${this.unknown ? 'unknown' : `order#${this.pick}`}, ${showHash(this.hash)}, ${this.amount ? showAmount(this.amount) : 'full'}, chain ${this.chain})`;
  }
}

type RefundHow = 'id' | 'oid' | 'both' | 'mismatch' | 'unknownId' | 'unknownOid' | 'none';
class Refund extends OneCall {
  constructor(readonly pick: number, readonly how: RefundHow, readonly otherMch: boolean, readonly amount: AmountSpec, readonly prefer: boolean) {
    super();
  }
  override check(m: Readonly<Model>) {
    return m.orders.length > 0 || this.how === 'unknownId' || this.how === 'unknownOid';
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['refundWithId']>>> {
    const o = pickLive(m.orders, this.pick, this.prefer, (x) => readStatus(x, m.now) === 'PAID');
    const mch: Mch = o ? (this.otherMch ? ((1 - o.mch) as Mch) : o.mch) : 0;
    const amount = amountText(this.amount, { order: o });
    const other = m.orders.find((x) => o && x.oid !== o.oid);
    const ref: { id?: string; oid?: string } = (() => {
      switch (this.how) {
        case 'id': return { id: o?.id ?? 'ord_unknown' };
        case 'oid': return { oid: o?.oid ?? 'nope' };
        case 'both': return o ? { id: o.id, oid: o.oid } : { id: 'ord_unknown', oid: 'nope' };
        case 'mismatch': return { id: o?.id ?? 'ord_unknown', oid: other?.oid ?? 'nope' };
        case 'unknownId': return { id: 'ord_unknown' };
        case 'unknownOid': return { oid: 'nope' };
        case 'none': return {};
      }
    })();
    return {
      label: `${this} = refund(mch${mch}, ${json({ ...ref, amount })})`,
      // refundWithId: the interface's refund (refund() is a projection of it) with the order after it.
      invoke: (r) => r.s.refundWithId({ mchId: r.mch[mch], ...ref, amount: amount as string }),
      predict: (m) => {
        // docs/decisions.md: an amount that is no decimal at all is refused before the order is looked for.
        if (typeof amount !== 'string' || !/^[0-9]+(\.[0-9]+)?$/.test(amount)) return refuse('invalid', `amount ${json(amount)} is no decimal`);
        // Spec §5: by id or oid, of the signing merchant; both given must name the same order.
        if (!ref.id && !ref.oid) return refuse('invalid', 'neither id nor oid');
        let t: MOrder | undefined;
        if (ref.id) {
          t = m.orders.find((x) => x.id === ref.id && x.mch === mch);
          if (!t) return refuse('not_found', 'id of no order of this merchant');
          if (ref.oid && t.oid !== ref.oid) return refuse('invalid', 'id and oid name different orders');
        } else {
          t = m.orders.find((x) => x.oid === ref.oid && x.mch === mch);
          if (!t) return refuse('not_found', 'oid of no order of this merchant');
        }
        const units = specAmount(amount);
        if (units === undefined) return refuse('invalid', `amount ${amount}`);
        const status = readStatus(t, m.now);
        // Spec §5: a refund of an order not PAID fails.
        if (status !== 'PAID') return refuse('conflict', `order is ${status}, not PAID`);
        // docs/decisions.md "Statuses": above the payment 400, above the remainder 409, balance short 409.
        if (units > t.paid) return refuse('invalid', 'above the original payment');
        if (units > t.paid - t.refunded) return refuse('conflict', 'above the remainder');
        const targetId = t.id;
        return draft(m, (d) => {
          const od = d.orders.find((x) => x.id === targetId)!;
          // Spec §4: a refund debits the user's available balance.
          debit(d, acctKey(od.mch, 'user', od.uid), units);
          credit(d, acctKey(od.mch, 'refunds'), units);
          od.refunded += units;
          od.stored = statusFor(od);
          return (res) => expect(res).toMatchObject({
            id: od.id, oid: od.oid, amount: fmt(units), status: 'REFUNDED', remark: '', refundTime: m.now,
            orderStatus: od.stored, paidAmount: fmt(od.paid), refundedAmount: fmt(od.refunded),
          });
        });
      },
    };
  }
  toString() {
    return `refund(${this.prefer ? 'paid ' : ''}order#${this.pick} by ${this.how}${this.otherMch ? ' as the other merchant' : ''}, ${showAmount(this.amount)})`;
  }
}

type To = 'fixed' | 'orderAddr' | 'orderAddrLower' | 'zero' | 'token' | 'derived';
class Apply extends OneCall {
  constructor(readonly mch: Mch, readonly uid: string, readonly amount: AmountSpec, readonly chain: Chain, readonly to: To = 'fixed', readonly k = 0) {
    super();
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['applyWithdrawal']>>> {
    const amount = amountText(this.amount, { avail: available(m, this.mch, this.uid), order: m.orders.find((o) => o.mch === this.mch && o.uid === this.uid) });
    const given = pickOf(m.orders.filter((o) => o.addrs[this.chain]), this.k)?.addrs[this.chain];
    const to = (() => {
      switch (this.to) {
        case 'fixed': return this.chain === 'EVM' ? TO_EVM : TO_TRON;
        case 'orderAddr': return given ?? derivedTo(this.chain, this.k);
        // A TRON address has no other spelling: the lower-cased one is not an address at all.
        case 'orderAddrLower': return (given ?? derivedTo(this.chain, this.k)).toLowerCase();
        case 'zero': return ZERO_TO[this.chain];
        case 'token': return this.chain === 'EVM' ? USDT.ETH : USDT.TRON;
        case 'derived': return derivedTo(this.chain, this.k);
      }
    })();
    const input = this.chain === 'EVM'
      ? { uid: this.uid, amount: amount as string, to, chainId: 1, chainType: 'EVM' as const, token: USDT.ETH }
      : { uid: this.uid, amount: amount as string, to, chainId: TRON_CHAIN, chainType: 'TRON' as const, token: USDT.TRON };
    return {
      label: `${this} = withdrawApply(${json({ amount, to })})`,
      invoke: (r) => r.s.applyWithdrawal({ mchId: r.mch[this.mch], ...input }),
      predict: (m) => {
        if (!validUid(this.uid)) return refuse('invalid', 'uid');
        const units = specAmount(amount);
        if (units === undefined) return refuse('invalid', `amount ${json(amount)}`);
        // Spec §6: `to` a valid address of the chain type (a lower-cased base58 is none).
        if (this.chain === 'TRON' && to !== to.toUpperCase() && to === to.toLowerCase()) return refuse('invalid', 'not a TRON address');
        // docs "Where a payout may go": not the zero address, not a token contract, not an
        // address given out for an order (any merchant's, any spelling).
        if (sameAddress(this.chain, to, ZERO_TO[this.chain])) return refuse('invalid', 'the zero address');
        if (sameAddress(this.chain, to, this.chain === 'EVM' ? USDT.ETH : USDT.TRON)) return refuse('invalid', 'a token contract');
        if (m.orders.some((o) => o.addrs[this.chain] && sameAddress(this.chain, o.addrs[this.chain]!, to))) return refuse('invalid', 'a payment address given out');
        let w: MWd;
        return draft(m, (d) => {
          // Spec §4, §6: sufficient available balance; the amount moves from available to a hold.
          hold(d, acctKey(this.mch, 'user', this.uid), units);
          w = { id: '', mch: this.mch, uid: this.uid, amount: units, chain: this.chain, status: 'PENDING', txHash: null, to };
          d.wds.push(w);
          return (res) => expect(res).toMatchObject({ uid: this.uid, amount: fmt(units), status: 'PENDING', chainType: this.chain, txHash: null });
        }, (res) => {
          w.id = res.id;
        });
      },
    };
  }
  toString() {
    return `withdrawApply(mch${this.mch}, ${json(this.uid)}, ${showAmount(this.amount)}, ${this.chain}${this.to === 'fixed' ? '' : `, to ${this.to} ${this.k}`})`;
  }
}

class Confirm extends OneCall {
  constructor(readonly pick: number, readonly unknown: boolean, readonly otherMch: boolean, readonly hash: HashSpec, readonly block: unknown, readonly prefer: boolean) {
    super();
  }
  override check(m: Readonly<Model>) {
    return this.unknown || m.wds.length > 0;
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['confirmWithdrawal']>>> {
    const target = this.unknown ? undefined : pickLive(m.wds, this.pick, this.prefer, (x) => x.status === 'PENDING');
    const mch: Mch = target ? (this.otherMch ? ((1 - target.mch) as Mch) : target.mch) : 0;
    const id = target?.id ?? 'wd_unknown';
    const tx = hashText(this.hash);
    return {
      label: `${this} = withdrawConfirm(mch${mch}, ${json({ txHash: tx, blockNumber: this.block })})`,
      invoke: (r) => r.s.confirmWithdrawal({ mchId: r.mch[mch], logId: id, txHash: tx, blockNumber: this.block as number }),
      predict: (m) => {
        if (!validBlock(this.block)) return refuse('invalid', `blockNumber ${json(this.block)}`);
        const w = m.wds.find((x) => x.id === id && x.mch === mch);
        if (!w) return refuse('not_found', 'no such withdrawal of this merchant');
        // Spec §6: only PENDING can be confirmed.
        if (w.status !== 'PENDING') return refuse('conflict', `withdrawal is ${w.status}`);
        const stored = hashForm(tx, w.chain === 'EVM' ? 'wd-EVM' : 'wd-TRON');
        if (stored === undefined) return refuse('invalid', `hash ${tx} for ${w.chain}`);
        // Spec §6: a transaction confirms at most one withdrawal; a payment's never confirms a payout.
        if (keyTaken(m, tx, w.mch)) return refuse('conflict', 'transaction already recorded');
        return draft(m, (d) => {
          const wd = d.wds.find((x) => x.id === w.id)!;
          // Spec §4: confirm settles the hold out of the ledger (no rpcUrl: accepted, unverified).
          const user = acct(d, acctKey(w.mch, 'user', w.uid));
          user.pending -= w.amount;
          user.posted -= w.amount;
          credit(d, acctKey(w.mch, 'withdrawals'), w.amount);
          d.keys.add(keyEntry(tx, w.mch));
          wd.status = 'CONFIRMED';
          wd.txHash = stored;
          return (res) => expect(res).toMatchObject({ id: w.id, amount: fmt(w.amount), status: 'CONFIRMED', txHash: stored, blockNumber: Number(this.block) });
        });
      },
    };
  }
  toString() {
    return `withdrawConfirm(${this.unknown ? 'unknown' : `${this.prefer ? 'pending ' : ''}wd#${this.pick}`}${this.otherMch ? ' as the other merchant' : ''}, ${showHash(this.hash)}, block ${json(this.block)})`;
  }
}

class Reject extends OneCall {
  constructor(readonly pick: number, readonly unknown: boolean, readonly otherMch: boolean, readonly prefer: boolean) {
    super();
  }
  override check(m: Readonly<Model>) {
    return this.unknown || m.wds.length > 0;
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['rejectWithdrawal']>>> {
    const target = this.unknown ? undefined : pickLive(m.wds, this.pick, this.prefer, (x) => x.status === 'PENDING');
    const mch: Mch = target ? (this.otherMch ? ((1 - target.mch) as Mch) : target.mch) : 0;
    const id = target?.id ?? 'wd_unknown';
    return {
      label: `${this} = withdrawReject(mch${mch})`,
      invoke: (r) => r.s.rejectWithdrawal({ mchId: r.mch[mch], id }),
      predict: (m) => {
        const w = m.wds.find((x) => x.id === id && x.mch === mch);
        if (!w) return refuse('not_found', 'no such withdrawal of this merchant');
        if (w.status !== 'PENDING') return refuse('conflict', `withdrawal is ${w.status}`);
        return draft(m, (d) => {
          // Spec §4: reject returns the hold to available.
          acct(d, acctKey(w.mch, 'user', w.uid)).pending -= w.amount;
          d.wds.find((x) => x.id === w.id)!.status = 'REJECTED';
          return (res) => expect(res).toMatchObject({ id: w.id, amount: fmt(w.amount), status: 'REJECTED', txHash: null });
        });
      },
    };
  }
  toString() {
    return `withdrawReject(${this.unknown ? 'unknown' : `${this.prefer ? 'pending ' : ''}wd#${this.pick}`}${this.otherMch ? ' as the other merchant' : ''})`;
  }
}

class Adjust extends OneCall {
  constructor(readonly mch: Mch, readonly uid: string, readonly sign: Sign, readonly amount: AmountSpec) {
    super();
  }
  prepare(m: Model): Op<Awaited<ReturnType<LocalPaymentService['adjustBalance']>>> {
    const body = amountText(this.amount, { avail: available(m, this.mch, this.uid) });
    const text = typeof body === 'string' ? `${this.sign}${body}` : body;
    return {
      label: `${this} = balanceAdjust(${json(text)})`,
      invoke: (r) => r.s.adjustBalance({ mchId: r.mch[this.mch], uid: this.uid, amount: text as string, reason: 'model test' }),
      predict: (m) => {
        if (!validUid(this.uid)) return refuse('invalid', 'uid');
        const change = specSignedAmount(text);
        if (change === undefined) return refuse('invalid', `amount ${json(text)}`);
        return draft(m, (d) => {
          // Spec §4: an operator credits or debits a user by hand; no user balance ever goes negative.
          const user = acctKey(this.mch, 'user', this.uid);
          const sys = acctKey(this.mch, 'adjustments');
          if (change > 0n) {
            debit(d, sys, change);
            credit(d, user, change);
          } else {
            debit(d, user, -change);
            credit(d, sys, -change);
          }
          const a = acct(d, user);
          return (res) => expect(res).toMatchObject({ uid: this.uid, available: fmt(a.posted - a.pending), held: fmt(a.pending), change: fmt(change) });
        });
      },
    };
  }
  toString() {
    return `balanceAdjust(mch${this.mch}, ${json(this.uid)}, ${json(this.sign)} ${showAmount(this.amount)})`;
  }
}

class ReadBalance extends OneCall {
  constructor(readonly mch: Mch, readonly uid: string) {
    super();
  }
  prepare(): Op<Awaited<ReturnType<LocalPaymentService['balance']>>> {
    return {
      label: this.toString(),
      invoke: (r) => r.s.balance(this.uid, { mchId: r.mch[this.mch] }),
      predict: (m) => {
        const a = m.accounts.get(acctKey(this.mch, 'user', this.uid)) ?? { posted: 0n, pending: 0n };
        return { next: cloneModel(m), ok: (b) => expect(b).toMatchObject({ uid: this.uid, available: fmt(a.posted - a.pending), held: fmt(a.pending) }) };
      },
    };
  }
  toString() {
    return `balance(mch${this.mch}, ${this.uid})`;
  }
}

class ReadOrder extends OneCall {
  constructor(readonly pick: number, readonly unknown: boolean) {
    super();
  }
  override check(m: Readonly<Model>) {
    return this.unknown || m.orders.length > 0;
  }
  prepare(m: Model): Op<string> {
    const id = (this.unknown ? undefined : pickOf(m.orders, this.pick))?.id ?? 'ord_unknown';
    return {
      label: this.toString(),
      invoke: (r) => r.s.getOrderStatus(id),
      predict: (m) => {
        const o = m.orders.find((x) => x.id === id);
        return o ? { next: cloneModel(m), ok: (s) => expect(s).toBe(readStatus(o, m.now)) } : refuse('not_found', 'no such order');
      },
    };
  }
  toString() {
    return `orderStatus(${this.unknown ? 'unknown' : `order#${this.pick}`})`;
  }
}

class Clock implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    r.h.clock.now += this.ms;
    m.now += this.ms;
    await compareAll(m, r, this.toString());
  }
  toString() {
    return `clock(+${this.ms / 60_000} min)`;
  }
}

/** A call through the second connection to the ledger file. */
class Elsewhere extends OneCall {
  constructor(readonly inner: OneCall) {
    super();
  }
  override check(m: Readonly<Model>) {
    return this.inner.check(m);
  }
  prepare(m: Model): AnyOp {
    const op = this.inner.prepare(m);
    return { ...op, label: `[2nd connection] ${op.label}`, invoke: (r) => op.invoke({ ...r, s: r.s2 }) };
  }
  toString() {
    return `elsewhere(${this.inner})`;
  }
}

/**
 * Two calls at once (Promise.all): the group commit runs the changes of one event-loop turn in one
 * transaction, each in its own savepoint. The outcome must be that of one of the two orders: the
 * refusals and successes of A-then-B or of B-then-A, and the ledger afterwards that order's model.
 * (The answers' figures are not compared here: a read-back after the batch may include the other.)
 */
class Together implements Cmd {
  constructor(readonly a: OneCall, readonly b: OneCall) {}
  check(m: Readonly<Model>) {
    return this.a.check(m) && this.b.check(m);
  }
  async run(m: Model, r: Real) {
    const ops: AnyOp[] = [this.a.prepare(m), this.b.prepare(m)];
    const settled = await Promise.allSettled(ops.map((op) => op.invoke(r)));
    for (const [i, s] of settled.entries()) {
      if (s.status === 'rejected' && !(s.reason instanceof AppError)) throw new Error(`${ops[i]!.label} (at once with the other): not an AppError: ${describeError(s.reason)}`);
    }
    const show = (i: number) => {
      const s = settled[i]!;
      return s.status === 'fulfilled' ? 'ok' : (s.reason as AppError).kind;
    };
    const tried: string[] = [];
    const candidates: Model[] = [];
    for (const order of [[0, 1], [1, 0]] as const) {
      let state = m;
      const wanted: string[] = [];
      let fits = true;
      for (const i of order) {
        const exp = ops[i]!.predict(state);
        wanted.push('refuse' in exp ? `${exp.refuse} (${exp.why})` : 'ok');
        const s = settled[i]!;
        if ('refuse' in exp) {
          if (s.status !== 'rejected' || (s.reason as AppError).kind !== exp.refuse) fits = false;
        } else if (s.status !== 'fulfilled') {
          fits = false;
        } else {
          exp.bind?.(s.value);
          state = exp.next;
        }
        if (!fits) break;
      }
      tried.push(`${order.map((i) => (i ? 'B' : 'A')).join(' then ')}: model ${wanted.join(', ')}`);
      if (fits) candidates.push(state);
    }
    for (const [i, op] of ops.entries()) count(op.label, settled[i]!.status === 'fulfilled' ? { ok: () => {}, next: m } : refuse((settled[i] as PromiseRejectedResult).reason.kind, 'at once'));
    if (candidates.length === 0) {
      throw new Error(`${this}: A answered ${show(0)} ${settled[0]!.status === 'rejected' ? `"${(settled[0] as PromiseRejectedResult).reason.message}"` : ''}, B answered ${show(1)} ${settled[1]!.status === 'rejected' ? `"${(settled[1] as PromiseRejectedResult).reason.message}"` : ''}: neither order fits (${tried.join('; ')})`);
    }
    let last: unknown;
    for (const c of candidates) {
      try {
        await compareAll(c, r, this.toString());
        replaceModel(m, c);
        return;
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }
  toString() {
    return `together(A: ${this.a}, B: ${this.b})`;
  }
}

// ------------------------------------------------------------------------------------------------
// Arbitraries

interface Mode {
  /** Most amounts the largest one operation carries, one merchant, two users: the ledger's bound. */
  whale: boolean;
}

function commandArbs(mode: Mode): fc.Arbitrary<Cmd>[] {
  const hugeW = mode.whale ? 12 : 0;
  const unitsArb = fc.oneof(
    { weight: 8, arbitrary: fc.bigInt(1n, 30n * SCALE) },
    { weight: 2, arbitrary: fc.constantFrom(1n, SCALE, 10n * SCALE, 10n * SCALE + 500_000n) },
    { weight: 1, arbitrary: fc.bigInt(MAX_OP - 10n * SCALE, MAX_OP) },
    { weight: 1, arbitrary: fc.constantFrom(MAX_OP, MAX_OP + 1n, 0n) },
  );
  /** Plain units in four spellings, amounts read from the model at run time (`rels`), edge texts, the largest amount. */
  const amountArbOf = (rels: Rel[], w: { units: number; rel: number; raw: number; huge?: number }): fc.Arbitrary<AmountSpec> => fc.oneof(
    { weight: w.units, arbitrary: fc.record({ units: unitsArb, style: styleArb }) },
    { weight: (w.huge ?? 0) + hugeW, arbitrary: fc.record({ units: fc.constantFrom(MAX_OP, MAX_OP - 1n), style: styleArb }) },
    { weight: w.rel, arbitrary: fc.record({ rel: fc.constantFrom<Rel>(...rels), style: styleArb }) },
    { weight: w.raw, arbitrary: fc.record({ raw: fc.constantFrom(...RAW_AMOUNTS) }) },
  );
  const orderAmountArb = amountArbOf(['orderAmount', 'orderAmountPlus'], { units: 10, rel: 2, raw: 2, huge: 1 });
  const payAmountArb = amountArbOf(['orderAmount', 'orderAmountMinus', 'orderAmountPlus', 'half'], { units: 3, rel: 6, raw: 1, huge: 2 });
  const refundAmountArb = amountArbOf(['remaining', 'remaining', 'remainingPlus', 'half', 'paid', 'paidPlus'], { units: 3, rel: 8, raw: 2 });
  const applyAmountArb = amountArbOf(['available', 'available', 'availablePlus', 'half'], { units: 4, rel: 8, raw: 2 });
  const adjustAmountArb = amountArbOf(['available', 'availablePlus', 'half'], { units: 8, rel: 3, raw: 1, huge: 3 });
  const signedArb = fc.oneof(
    { weight: 10, arbitrary: fc.record({ sign: mode.whale ? fc.constantFrom<Sign>('', '+', '+', '+', '-') : fc.constantFrom<Sign>('', '+', '+', '-', '-'), amount: adjustAmountArb }) },
    { weight: 1, arbitrary: fc.record({ sign: fc.constant<Sign>(''), amount: fc.record({ raw: fc.constantFrom<unknown>('--1', '+-1', '-0', '-', '+', '-+1', '- 1', '\u22121') }) }) },
  );
  const hashArb: fc.Arbitrary<HashSpec> = fc.oneof(
    { weight: 20, arbitrary: fc.record({ n: fc.integer({ min: 1, max: mode.whale ? 40 : 12 }), sp: fc.constantFrom<Spelling>('0x', '0x', '0x', 'bare', 'bare', '0xU', 'bareU', '0X', 'mixed') }) },
    { weight: 1, arbitrary: fc.record({ bad: fc.constantFrom('zero', 'zeroBare', 'short', 'nonhex', 'long') as fc.Arbitrary<'zero'> }) },
  );
  const users = mode.whale ? ['alice', 'bob'] : [...USERS];
  // Most calls name the first user or two, so that money gathers somewhere and leaves again.
  const uidArb = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom<string>(...users.slice(0, 2), users[0]!, users[0]!) },
    { weight: 4, arbitrary: fc.constantFrom<string>(...users) },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_UIDS) },
  );
  const mchArb = mode.whale ? fc.constant<Mch>(0) : fc.constantFrom<Mch>(0, 0, 1);
  const blockArb = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 20_000_000 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>('19000000', 0, -1, '01', 1.5, '') });
  const pickArb = fc.nat({ max: 50 });
  const sometimes = (weight: number) => fc.oneof({ weight: weight - 1, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
  const refundHowArb = fc.constantFrom<RefundHow>('id', 'id', 'id', 'oid', 'oid', 'oid', 'both', 'mismatch', 'unknownId', 'unknownOid', 'none');
  const payChainArb = fc.constantFrom<PayChain>('none', 'none', 'none', 'none', 'EVM', 'TRON');

  const expiryArb = fc.oneof(
    { weight: 12, arbitrary: fc.constant<Expiry>('none') },
    { weight: 6, arbitrary: fc.constantFrom<Expiry>('plus10m', 'plus7d', 'plus7d1', 'now', 'past', 'same', 'same', 'string10m', 'bad') },
  );
  const create = fc.tuple(mchArb, fc.constantFrom('o1', 'o2', 'o3', 'o4'), uidArb, orderAmountArb, expiryArb).map(([mch, oid, uid, a, e]) => new CreateOrder(mch, oid, uid, a, e));
  const pay = fc.tuple(pickArb, sometimes(12), hashArb, fc.option(payAmountArb, { freq: 2 }), payChainArb).map(([p, u, h, a, c]) => new MarkPaid(p, u, h, a ?? undefined, c));
  const refund = fc.tuple(pickArb, refundHowArb, sometimes(10), refundAmountArb, fc.boolean()).map(([p, how, other, a, pr]) => new Refund(p, how, other, a, pr));
  const toArb = fc.oneof({ weight: 12, arbitrary: fc.constant<To>('fixed') }, { weight: 6, arbitrary: fc.constantFrom<To>('orderAddr', 'orderAddrLower', 'zero', 'token', 'derived', 'derived') });
  const apply = fc.tuple(mchArb, uidArb, applyAmountArb, fc.constantFrom<Chain>('EVM', 'TRON'), toArb, fc.nat({ max: 6 }))
    .map(([mch, uid, a, c, to, k]) => new Apply(mch, uid, a, c, to, k));
  const confirm = fc.tuple(pickArb, sometimes(12), sometimes(10), hashArb, blockArb, fc.boolean()).map(([p, u, o, h, b, pr]) => new Confirm(p, u, o, h, b, pr));
  const reject = fc.tuple(pickArb, sometimes(12), sometimes(10), fc.boolean()).map(([p, u, o, pr]) => new Reject(p, u, o, pr));
  const adjust = fc.tuple(mchArb, uidArb, signedArb).map(([mch, uid, s]) => new Adjust(mch, uid, s.sign, s.amount));
  const changes: fc.Arbitrary<OneCall>[] = [create, pay, pay, refund, refund, apply, apply, confirm, confirm, reject, adjust, adjust];
  const change = fc.oneof(...changes);
  /** Through the second connection now and then: another process on the same ledger file. */
  const anywhere = fc.tuple(change, sometimes(3)).map(([c, second]) => (second ? new Elsewhere(c) : c));
  const together = fc.tuple(anywhere, anywhere).map(([a, b]) => new Together(a, b));

  /** [weight, command]: fc.commands picks each arbitrary alike, so a weight is that many copies. */
  const weighted: [number, fc.Arbitrary<Cmd>][] = [
    [3, create],
    [3, pay],
    [3, refund],
    [3, apply],
    [2, confirm],
    [1, reject],
    [mode.whale ? 10 : 3, adjust],
    [1, fc.tuple(mchArb, fc.constantFrom<string>(...users)).map(([mch, uid]) => new ReadBalance(mch, uid))],
    [1, fc.tuple(pickArb, sometimes(8)).map(([p, u]) => new ReadOrder(p, u))],
    [1, fc.constantFrom(60_000, 10 * 60_000, 31 * 60_000, 2 * 3_600_000).map((ms) => new Clock(ms))],
    [3, together],
    [2, change.map((c) => new Elsewhere(c))],
  ];
  return weighted.flatMap(([w, arb]) => Array.from({ length: w }, () => arb));
}

// ------------------------------------------------------------------------------------------------
// The properties

const RUNS = Number(process.env.MODEL_RUNS ?? 150);
const WHALE_RUNS = Number(process.env.MODEL_WHALE_RUNS ?? 40);
const COMMANDS = Number(process.env.MODEL_COMMANDS ?? 100);
const SEED = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED);
const PATH = process.env.MODEL_PATH;

async function runModel(mode: Mode, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.commands(commandArbs(mode), { maxCommands: COMMANDS, size: 'max' }), async (cmds) => {
      const h = openHarness();
      const second = openLedger(h.file);
      try {
        const a = await addShopMerchant(h.service);
        const b = await addOtherMerchant(h.service);
        const s2 = new LocalPaymentService(second, { now: () => h.clock.now, caller: { actor: 'tester-2' } });
        const real: Real = { h, s: h.service, s2, mch: [a.mchId, b.mchId] };
        const model: Model = { now: h.clock.now, accounts: new Map(), orders: [], wds: [], keys: new Set() };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        // At the end: every invariant of `ledger check` (it is also run after every command).
        expect(await h.service.check()).toEqual([]);
      } finally {
        second.close();
        h.close();
      }
    }),
    { numRuns, ...(SEED === undefined ? {} : { seed: SEED }), ...(PATH === undefined ? {} : { path: PATH }) },
  );
  if (process.env.MODEL_STATS) console.log([...stats].sort().map(([k, n]) => `${k}: ${n}`).join('\n'));
  stats.clear();
}

describe('money operations against a model (fast-check commands)', () => {
  it('every answer, balance, order and withdrawal matches the model; refusals change nothing; ledger check holds', async () => {
    await runModel({ whale: false }, RUNS);
  }, 600_000);

  it('the same with the largest amounts, again and again: the ledger bound refuses and changes nothing', async () => {
    await runModel({ whale: true }, WHALE_RUNS);
  }, 600_000);
});
