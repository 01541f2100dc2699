import { randomBytes } from 'node:crypto';
import { and, asc, desc, eq, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Registry, RegistryConfig } from '../chains/registry.js';
import { isTxHash } from '../chains/tx-hash.js';
import { ASSETS } from '../core/assets.js';
import { AppError, conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount, parseAmount, parseSignedAmount } from '../core/money.js';
import type {
  CreateOrderRequest,
  RefundRequest,
  WithdrawApplyRequest,
  WithdrawConfirmRequest,
  WithdrawRejectRequest,
} from '../core/schemas.js';
import type { Caller, PaymentService } from '../core/service.js';
import { applyRefund, readStatus, statusFor, withdrawalAfter } from '../core/state.js';
import type {
  Addresses,
  ChainType,
  Order,
  OrderDetail,
  OrderStatus,
  Payment,
  RefundResult,
  Withdrawal,
  WithdrawalStatus,
} from '../core/types.js';
import type { Ledger } from './db.js';
import { groupCommit } from './group-commit.js';
import { accountId, audit, balanceOf, holdTransfer, postTransfer, resolvePending, type Q } from './ledger.js';
import {
  accounts,
  auditLog,
  merchants,
  nonces,
  orderAddresses,
  orders,
  payments,
  refunds,
  transfers,
  withdrawals,
} from './schema.js';

export interface LocalDeps {
  now: () => number;
  caller: Caller;
  registry?: Registry;
  /** Extra chains and tokens (the chains config file); the registry is built on first use. */
  registryConfig?: RegistryConfig;
  /** 96+ random bits, URL-safe (decisions §1: ids of the unsigned GETs must be unguessable). */
  randomId?: (prefix: string) => string;
}

const heavy = () => import('./heavy.js');
/**
 * What creating an order needs (zod and the deriver, not ethers), loaded on first use and then
 * kept: a dynamic import per request, even of a loaded module, was ~7% of what serve allocated.
 */
let orderDeps: typeof import('./order-deps.js') | undefined;

/**
 * The statements of the hottest paths (the payment page's two reads, create order), prepared
 * once per ledger connection: building and preparing SQL for each request cost about a third
 * of a create order.
 */
function prepareStatements(db: Ledger['db']) {
  const p = sql.placeholder;
  return {
    status: db.select({ status: orders.status, expiredAt: orders.expiredAt }).from(orders).where(eq(orders.id, p('id'))).prepare(),
    addresses: db.select({ chainType: orderAddresses.chainType, address: orderAddresses.address }).from(orderAddresses).where(eq(orderAddresses.orderId, p('id'))).prepare(),
    insertNonce: db.insert(nonces).values({ merchantId: p('merchantId'), nonce: p('nonce'), expiresAt: p('expiresAt') }).onConflictDoNothing().prepare(),
    merchantById: db.select().from(merchants).where(eq(merchants.id, p('id'))).prepare(),
    merchantAuth: db.select({ secret: merchants.secret, rateLimit: merchants.rateLimit }).from(merchants).where(eq(merchants.id, p('id'))).prepare(),
    orderByOid: db.select().from(orders).where(and(eq(orders.merchantId, p('merchantId')), eq(orders.oid, p('oid')))).prepare(),
    insertOrder: db.insert(orders).values({
      id: p('id'), merchantId: p('merchantId'), oid: p('oid'), uid: p('uid'), asset: p('asset'), amount: p('amount'),
      status: 'PENDING_PAY', memo: p('memo'), expiredAt: p('expiredAt'), notifyUrl: p('notifyUrl'), redirectUrl: p('redirectUrl'),
      logo: p('logo'), createdAt: p('createdAt'),
    }).prepare(),
    insertAddress: db.insert(orderAddresses).values({ orderId: p('orderId'), chainType: p('chainType'), address: p('address'), derivationIndex: p('index') }).onConflictDoNothing().prepare(),
    setNextIndices: db.update(merchants).set({ evmNextIndex: sql`${p('evm')}`, tronNextIndex: sql`${p('tron')}` }).where(eq(merchants.id, p('id'))).prepare(),
  };
}
const prepared = new WeakMap<Ledger, ReturnType<typeof prepareStatements>>();

/**
 * Ids of orders, refunds and withdrawals: the creation time (milliseconds, 9 base-32 digits
 * whose ASCII order is their numeric order) then 128 random bits (base64url). The random part
 * keeps ids unguessable (decisions §1 asks at least 96 bits); the time part makes new ids sort
 * after old ones, so each insert lands at the right edge of the id indexes instead of on a random
 * page: a create order dirtied ~20 index pages fewer per group commit of 25.
 */
const defaultRandomId = (prefix: string) => `${prefix}_${Date.now().toString(32).padStart(9, '0')}${random16().toString('base64url')}`;
/** 16 random bytes from a pool filled 4 KiB at a time (one call into the CSPRNG per 256 ids); no byte is handed out twice. */
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function random16(): Buffer {
  if (randomAt + 16 > randomPool.length) {
    randomPool = randomBytes(4096);
    randomAt = 0;
  }
  randomAt += 16;
  return randomPool.subarray(randomAt - 16, randomAt);
}
const newSecret = () => `sk_${randomBytes(24).toString('base64url')}`;

const DAY = 86_400_000;
const MAX_ORDER_AHEAD = 7 * DAY;

type MerchantRow = typeof merchants.$inferSelect;
type OrderRow = typeof orders.$inferSelect;
type WithdrawalRow = typeof withdrawals.$inferSelect;

export interface MerchantView {
  mchId: string;
  name: string;
  evmXpub: string | null;
  tronXpub: string | null;
  orderLifetime: string;
  rateLimit: number;
  asset: string;
  addressesIssued: { EVM: number; TRON: number };
  createdAt: number;
  secretRotatedAt: number | null;
}

export interface NewMerchant {
  name: string;
  evmXpub?: string;
  tronXpub?: string;
  generateWallet?: boolean;
  orderLifetime?: string;
  rateLimit?: number;
}

export interface BalanceView {
  mchId: string;
  uid: string;
  asset: string;
  available: string;
  held: string;
}

export interface AuditView {
  id: number;
  at: number;
  actor: string;
  action: string;
  mchId: string | null;
  subject: string;
  detail: Record<string, unknown>;
}

export interface RefundView extends RefundResult {
  refundId: string;
  mchId: string;
}

export interface MarkPaidInput {
  id: string;
  txHash: string;
  amount?: string;
  chainType?: string;
  chainId?: string;
  token?: string;
}

/** "30m", "2h", "1d", "90s" to milliseconds. */
export function parseDuration(value: string, field: string): number {
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(value.trim());
  if (!m) throw invalid(`${field} must be a duration such as 30m, 2h or 1d`);
  const ms = Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: DAY }[m[2] as 's' | 'm' | 'h' | 'd'];
  if (ms < 60_000 || ms > MAX_ORDER_AHEAD) throw invalid(`${field} must be between 1m and 7d`);
  return ms;
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', DAY], ['h', 3_600_000], ['m', 60_000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

/** The ledger behind the PaymentService seam, plus the administration only a local ledger offers. */
export class LocalPaymentService implements PaymentService {
  private registryBuilt?: Registry;
  private readonly randomId: (prefix: string) => string;

  constructor(
    readonly ledger: Ledger,
    private readonly deps: LocalDeps,
  ) {
    this.registryBuilt = deps.registry;
    this.randomId = deps.randomId ?? defaultRandomId;
  }

  /** The chains and tokens, built (and the config checked) on first use. */
  async registry(): Promise<Registry> {
    this.registryBuilt ??= (await heavy()).createRegistry(this.deps.registryConfig);
    return this.registryBuilt;
  }

  /** The same ledger, acting for another caller (the server: one per verified request). */
  as(caller: Caller): LocalPaymentService {
    return new LocalPaymentService(this.ledger, { ...this.deps, registry: this.registryBuilt, randomId: this.randomId, caller });
  }

  private get db() {
    return this.ledger.db;
  }

  private now(): number {
    return this.deps.now();
  }

  /**
   * Every change runs in a BEGIN IMMEDIATE transaction (writers queue on the file lock instead of
   * failing), shared through group commit with the other changes of this event-loop turn, each
   * in its own savepoint (src/store/group-commit.ts). The nonce of a signed request is used up
   * only if the change lands. Settles once the change is durable.
   */
  private async write<T>(fn: (tx: Q) => T): Promise<T> {
    try {
      return await groupCommit(this.ledger.sqlite).submit(() => {
        this.consumeNonce(this.db);
        return fn(this.db);
      });
    } catch (e) {
      if (e instanceof AppError) throw e;
      const code = (e as { code?: string }).code ?? '';
      if (code.startsWith('SQLITE_BUSY')) throw new AppError('unavailable', 'the ledger is busy: another process held it too long; try again', { cause: e });
      throw e;
    }
  }

  private consumeNonce(tx: Q): void {
    const n = this.deps.caller.nonce;
    if (!n) return;
    const now = this.now();
    const inserted = this.stmts().insertNonce.run({ merchantId: n.merchantId, nonce: n.value, expiresAt: n.expiresAt });
    if (inserted.changes === 0) throw new AppError('unauthorized', 'nonce has already been used');
    // Forget nonces whose timestamps can no longer pass the freshness window; a little at a time.
    if (Math.random() < 0.01) tx.delete(nonces).where(lte(nonces.expiresAt, now)).run();
  }

  // ---------------------------------------------------------------- merchants

  private merchant(q: Q, mchId: string | undefined): MerchantRow {
    if (mchId) {
      const m = this.stmts().merchantById.get({ id: mchId });
      if (!m) throw notFound(`merchant ${mchId} not found`);
      return m;
    }
    const some = q.select().from(merchants).limit(2).all();
    if (some.length === 1) return some[0]!;
    if (some.length === 0) throw invalid('the ledger holds no merchant yet: add one with `cryptopay merchant add --name NAME --generate-wallet`');
    throw invalid('mchId is required: the ledger holds more than one merchant');
  }

  /** The merchant's secret, for verifying a signed request; undefined when unknown. */
  merchantSecret(mchId: string): string | undefined {
    return this.merchantAuth(mchId)?.secret;
  }

  /** Resolves a missing mchId the way every operation does (the only merchant of the ledger). */
  resolveMerchantId(mchId?: string): string {
    return this.merchant(this.db, mchId).id;
  }

  /** The secret and create-order limit (per minute, 0 = none) of a signed request's merchant, in one lookup. */
  merchantAuth(mchId: string): { secret: string; rateLimit: number } | undefined {
    const m = this.stmts().merchantAuth.get({ id: mchId });
    return m && { secret: m.secret, rateLimit: m.rateLimit };
  }

  /** Health: the ledger answers a query. */
  ping(): void {
    this.ledger.sqlite.prepare('select 1').get();
  }

  /**
   * The wallets of the `limit` merchants that gave out the most addresses, each with the next
   * index it will give out: serve primes its address pool with these.
   */
  walletCursors(limit: number): { chain: ChainType; xpub: string; next: number }[] {
    const out: { chain: ChainType; xpub: string; next: number }[] = [];
    const busiest = this.db.select().from(merchants).orderBy(desc(sql`${merchants.evmNextIndex} + ${merchants.tronNextIndex}`)).limit(limit).all();
    for (const m of busiest) {
      if (m.evmXpub) out.push({ chain: 'EVM', xpub: m.evmXpub, next: m.evmNextIndex });
      if (m.tronXpub) out.push({ chain: 'TRON', xpub: m.tronXpub, next: m.tronNextIndex });
    }
    return out;
  }

  countMerchants(): number {
    return Number(this.db.select({ n: sql<bigint>`count(*)` }).from(merchants).get()?.n ?? 0);
  }

  async addMerchant(input: NewMerchant): Promise<{ merchant: MerchantView; secret: string; mnemonic?: string }> {
    const name = input.name?.trim();
    if (!name || name.length > 100) throw invalid('name is required (1 to 100 characters)');
    if (input.generateWallet && (input.evmXpub || input.tronXpub)) {
      throw invalid('give either --generate-wallet or xpubs, not both');
    }
    const h = await heavy();
    let evmXpub = input.evmXpub ? h.parseAccountXpub(input.evmXpub, 'evm-xpub') : null;
    let tronXpub = input.tronXpub ? h.parseAccountXpub(input.tronXpub, 'tron-xpub') : null;
    let mnemonic: string | undefined;
    if (input.generateWallet) {
      const w = h.generateWallet();
      ({ mnemonic, evmXpub, tronXpub } = w);
    }
    if (!evmXpub && !tronXpub) {
      throw invalid('a merchant needs a wallet to receive payments: give --evm-xpub and/or --tron-xpub, or --generate-wallet');
    }
    const lifetime = parseDuration(input.orderLifetime ?? '30m', 'order-lifetime');
    const rateLimit = input.rateLimit ?? 60;
    if (!Number.isInteger(rateLimit) || rateLimit < 0 || rateLimit > 1_000_000) {
      throw invalid('rate-limit must be a whole number of requests per minute (0 means no limit)');
    }
    const secret = newSecret();
    const now = this.now();
    const row = await this.write((tx) => {
      for (const xpub of [evmXpub, tronXpub]) {
        if (!xpub) continue;
        const other = tx.select({ id: merchants.id }).from(merchants).where(or(eq(merchants.evmXpub, xpub), eq(merchants.tronXpub, xpub))).get();
        if (other) throw conflict(`that xpub is already the wallet of merchant ${other.id}: two merchants must never share addresses`);
      }
      const seq = Number(tx.select({ n: sql<bigint>`coalesce(max(${merchants.seq}), 100000)` }).from(merchants).get()!.n) + 1;
      const id = `M${seq}`;
      const created = tx
        .insert(merchants)
        .values({ id, seq, name, secret, evmXpub, tronXpub, orderLifetimeMs: lifetime, rateLimit, createdAt: now })
        .returning()
        .get();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'merchant.created', merchantId: id, subjectType: 'merchant', subjectId: id,
        detail: { name, evmXpub: !!evmXpub, tronXpub: !!tronXpub, generatedWallet: !!input.generateWallet, orderLifetime: formatDuration(lifetime), rateLimit },
      });
      return created;
    });
    return { merchant: this.merchantView(row), secret, ...(mnemonic ? { mnemonic } : {}) };
  }

  async listMerchants(): Promise<MerchantView[]> {
    return this.db.select().from(merchants).orderBy(asc(merchants.seq)).all().map((m) => this.merchantView(m));
  }

  async showMerchant(mchId?: string): Promise<MerchantView> {
    return this.merchantView(this.merchant(this.db, mchId));
  }

  async rotateSecret(mchId?: string): Promise<{ mchId: string; secret: string }> {
    const secret = newSecret();
    const now = this.now();
    const id = await this.write((tx) => {
      const m = this.merchant(tx, mchId);
      tx.update(merchants).set({ secret, secretRotatedAt: now }).where(eq(merchants.id, m.id)).run();
      audit(tx, { at: now, actor: this.deps.caller.actor, action: 'merchant.secret_rotated', merchantId: m.id, subjectType: 'merchant', subjectId: m.id, detail: {} });
      return m.id;
    });
    return { mchId: id, secret };
  }

  private merchantView(m: MerchantRow): MerchantView {
    return {
      mchId: m.id,
      name: m.name,
      evmXpub: m.evmXpub,
      tronXpub: m.tronXpub,
      orderLifetime: formatDuration(m.orderLifetimeMs),
      rateLimit: m.rateLimit,
      asset: m.asset,
      addressesIssued: { EVM: m.evmNextIndex, TRON: m.tronNextIndex },
      createdAt: m.createdAt,
      secretRotatedAt: m.secretRotatedAt,
    };
  }

  // ---------------------------------------------------------------- orders

  async createOrder(input: CreateOrderRequest): Promise<Order> {
    const h = (orderDeps ??= await import('./order-deps.js'));
    const req = h.parseInput(h.createOrderSchema, input);
    const now = this.now();
    return this.write((tx) => {
      const m = this.merchant(tx, req.mchId);
      const decimals = this.decimalsOf(m.asset);
      const amount = parseAmount(req.amount, decimals);
      const existing = this.stmts().orderByOid.get({ merchantId: m.id, oid: req.oid });
      if (existing) {
        const differs = (
          [
            ['uid', existing.uid, req.uid],
            ['amount', existing.amount, amount],
            ['memo', existing.memo, req.memo ?? null],
            ['notifyUrl', existing.notifyUrl, req.notifyUrl ?? null],
            ['redirectUrl', existing.redirectUrl, req.redirectUrl ?? null],
            ['logo', existing.logo, req.logo ?? null],
            ['expiredAt', existing.expiredAt, req.expiredAt ?? existing.expiredAt],
          ] as const
        ).filter(([, a, b]) => a !== b).map(([k]) => k);
        if (differs.length) {
          throw conflict(`oid ${req.oid} is already used by order ${existing.id} with a different ${differs.join(', ')}`);
        }
        return this.orderView(existing, now);
      }
      const expiredAt = req.expiredAt ?? now + m.orderLifetimeMs;
      if (expiredAt <= now) throw invalid('expiredAt must lie in the future');
      if (expiredAt > now + MAX_ORDER_AHEAD) throw invalid('expiredAt must be at most 7 days ahead');
      const id = this.randomId('ord');
      this.stmts().insertOrder.run({
        id, merchantId: m.id, oid: req.oid, uid: req.uid, asset: m.asset, amount,
        memo: req.memo ?? null, expiredAt, notifyUrl: req.notifyUrl ?? null, redirectUrl: req.redirectUrl ?? null,
        logo: req.logo ?? null, createdAt: now,
      });
      const addresses = this.allocateAddresses(m, id, h.deriveAddress);
      return { id, oid: req.oid, uid: req.uid, amount: formatAmount(amount, decimals), status: 'PENDING_PAY', expiredAt, addresses };
    });
  }

  /** A fresh address per chain type; the index counter moves inside the same transaction. */
  private allocateAddresses(m: MerchantRow, orderId: string, deriveAddress: (chain: ChainType, xpub: string, index: number) => string): Addresses {
    const addresses: Addresses = {};
    const next = { EVM: m.evmNextIndex, TRON: m.tronNextIndex };
    const st = this.stmts();
    for (const chain of ['EVM', 'TRON'] as const) {
      const xpub = chain === 'EVM' ? m.evmXpub : m.tronXpub;
      if (!xpub) continue;
      let index = next[chain];
      // An address already given out (the unique index says so) is skipped, never shared.
      for (;;) {
        const address = deriveAddress(chain, xpub, index);
        if (st.insertAddress.run({ orderId, chainType: chain, address, index }).changes === 1) {
          addresses[chain] = address;
          break;
        }
        index++;
      }
      next[chain] = index + 1;
    }
    // Both counters in one statement.
    st.setNextIndices.run({ evm: next.EVM, tron: next.TRON, id: m.id });
    return addresses;
  }

  private addressesOf(orderId: string): Addresses {
    const out: Addresses = {};
    for (const a of this.stmts().addresses.all({ id: orderId })) out[a.chainType as ChainType] = a.address;
    return out;
  }

  private orderView(o: OrderRow, now: number): Order {
    return {
      id: o.id, oid: o.oid, uid: o.uid, amount: formatAmount(o.amount, this.decimalsOf(o.asset)),
      status: readStatus(o.status, o.expiredAt, now), expiredAt: o.expiredAt, addresses: this.addressesOf(o.id),
    };
  }

  private stmts() {
    let r = prepared.get(this.ledger);
    if (!r) prepared.set(this.ledger, (r = prepareStatements(this.db)));
    return r;
  }

  async getAddresses(id: string): Promise<Addresses> {
    // Every order has at least one address (a merchant needs a wallet), so none means no order.
    const addresses = this.addressesOf(id);
    if (Object.keys(addresses).length === 0) throw notFound('Not found');
    return addresses;
  }

  async getOrderStatus(id: string): Promise<OrderStatus> {
    const o = this.stmts().status.get({ id });
    if (!o) throw notFound('Order not found');
    return readStatus(o.status, o.expiredAt, this.now());
  }

  async getOrder(id: string, mchId?: string): Promise<OrderDetail> {
    const o = this.db.select().from(orders).where(mchId ? and(eq(orders.id, id), eq(orders.merchantId, mchId)) : eq(orders.id, id)).get();
    if (!o) throw notFound('Order not found');
    return this.orderDetail(o);
  }

  /** By id or by the merchant's oid, as a refund names it. */
  async findOrderDetail(mchId: string, id?: string, oid?: string): Promise<OrderDetail> {
    return this.orderDetail(this.findOrder(this.db, mchId, id, oid));
  }

  private orderDetail(o: OrderRow): OrderDetail {
    const d = this.decimalsOf(o.asset);
    const pays: Payment[] = this.db.select().from(payments).where(eq(payments.orderId, o.id)).orderBy(asc(payments.id)).all().map((p) => ({
      txHash: p.txHash, amount: formatAmount(p.amount, d), chainType: p.chainType as ChainType | null, chainId: p.chainId,
      token: p.token, late: p.late, source: p.source as 'manual' | 'chain', createdAt: p.createdAt,
    }));
    return {
      ...this.orderView(o, this.now()),
      mchId: o.merchantId, asset: o.asset, memo: o.memo, notifyUrl: o.notifyUrl, redirectUrl: o.redirectUrl, logo: o.logo,
      paidAmount: formatAmount(o.paidAmount, d), refundedAmount: formatAmount(o.refundedAmount, d), paidAt: o.paidAt,
      late: o.late, createdAt: o.createdAt, payments: pays,
    };
  }

  async listOrders(filter: { mchId?: string; status?: OrderStatus; uid?: string; limit?: number }): Promise<OrderDetail[]> {
    const now = this.now();
    const where: SQL[] = [];
    if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
    if (filter.uid) where.push(eq(orders.uid, filter.uid));
    if (filter.status === 'EXPIRED') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} < ${now}`)!);
    else if (filter.status === 'PENDING_PAY') where.push(and(eq(orders.status, 'PENDING_PAY'), sql`${orders.expiredAt} >= ${now}`)!);
    else if (filter.status) where.push(eq(orders.status, filter.status));
    const rows = this.db.select().from(orders).where(and(...where)).orderBy(desc(orders.createdAt), desc(orders.id)).limit(filter.limit ?? 50).all();
    return rows.map((o) => this.orderDetail(o));
  }

  /** Records a payment by hand (decisions §3, §6b): credits the user; PAID once paid in full. */
  async markPaid(input: MarkPaidInput): Promise<OrderDetail> {
    const now = this.now();
    let chainId: string | null = null;
    let chainType: ChainType | null = (input.chainType as ChainType | undefined) ?? null;
    let token: string | null = null;
    if (chainType && chainType !== 'EVM' && chainType !== 'TRON') throw invalid('chain-type must be EVM or TRON');
    if (input.chainId !== undefined) {
      const registry = await this.registry();
      const chain = registry.chain(input.chainId);
      if (chainType && chain.chainType !== chainType) throw invalid(`chain ${chain.chainId} is a${chain.chainType === 'EVM' ? 'n' : ''} ${chain.chainType} chain, not ${chainType}`);
      chainType = chain.chainType;
      chainId = chain.chainId;
      if (input.token !== undefined) token = registry.token(chainId, input.token).address;
    } else if (input.token !== undefined) {
      throw invalid('token needs chain-id');
    }
    // After the chain is known, so a chain id alone also fixes the hash form (TRON has no 0x).
    const txHash = this.normalizeTxHash(input.txHash, chainType ?? undefined, 'tx-hash');
    const id = await this.write((tx) => {
      const o = tx.select().from(orders).where(eq(orders.id, input.id)).get();
      if (!o) throw notFound('Order not found');
      const d = this.decimalsOf(o.asset);
      const amount = input.amount === undefined ? o.amount : parseAmount(input.amount, d);
      const used = tx.select({ orderId: payments.orderId }).from(payments).where(eq(payments.txHash, txHash)).get();
      if (used) throw conflict(`transaction ${txHash} already paid order ${used.orderId}`);
      const late = now > o.expiredAt;
      const transferId = postTransfer(tx, {
        merchantId: o.merchantId, asset: o.asset, amount, kind: 'payment', ref: o.id, now, decimals: d,
        debit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'payments' }),
        credit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'user', uid: o.uid }),
      });
      tx.insert(payments).values({ orderId: o.id, txHash, amount, chainType, chainId, token, late, source: 'manual', transferId, createdAt: now }).run();
      const paid = o.paidAmount + amount;
      const status = statusFor(o.amount, paid, o.refundedAmount);
      const becamePaid = status === 'PAID' && o.status === 'PENDING_PAY';
      tx.update(orders).set({
        paidAmount: paid, status, late: o.late || (becamePaid && late), paidAt: becamePaid ? now : o.paidAt,
      }).where(eq(orders.id, o.id)).run();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'order.payment_recorded', merchantId: o.merchantId, subjectType: 'order', subjectId: o.id,
        detail: { txHash, amount: formatAmount(amount, d), paidTotal: formatAmount(paid, d), statusBefore: readStatus(o.status, o.expiredAt, now), statusAfter: status, late, chainType, chainId, token },
      });
      return o.id;
    });
    return this.getOrder(id);
  }

  private normalizeTxHash(value: unknown, chainType: ChainType | undefined, field: string): string {
    if (typeof value !== 'string' || !value) throw invalid(`${field} is required`);
    const ok = chainType ? isTxHash(chainType, value) : isTxHash('EVM', value) || isTxHash('TRON', value);
    if (!ok) {
      const form = chainType === 'TRON' ? '64 hex digits' : chainType === 'EVM' ? '0x and 64 hex digits' : '0x and 64 hex digits (EVM) or 64 hex digits (TRON)';
      throw invalid(`${field} must be a transaction hash: ${form}`);
    }
    return value.toLowerCase();
  }

  // ---------------------------------------------------------------- refunds

  async refund(input: RefundRequest): Promise<RefundResult> {
    const r = await this.refundWithId(input);
    return { id: r.id, oid: r.oid, amount: r.amount, status: r.status, remark: r.remark, refundTime: r.refundTime };
  }

  async refundWithId(input: RefundRequest): Promise<RefundView> {
    const h = await heavy();
    const req = h.parseInput(h.refundSchema, input);
    if (!req.id && !req.oid) throw invalid('id or oid is required');
    const now = this.now();
    return this.write((tx) => {
      const m = this.merchant(tx, req.mchId);
      const o = this.findOrder(tx, m.id, req.id, req.oid);
      const d = this.decimalsOf(o.asset);
      const amount = parseAmount(req.amount, d);
      const next = applyRefund({ status: readStatus(o.status, o.expiredAt, now), paid: o.paidAmount, refunded: o.refundedAmount, amount, decimals: d });
      const transferId = postTransfer(tx, {
        merchantId: m.id, asset: o.asset, amount, kind: 'refund', ref: o.id, now, decimals: d,
        debit: accountId(tx, { merchantId: m.id, asset: o.asset, kind: 'user', uid: o.uid }),
        credit: accountId(tx, { merchantId: m.id, asset: o.asset, kind: 'refunds' }),
      });
      const refundId = this.randomId('rf');
      const remark = req.remark ?? '';
      tx.insert(refunds).values({ id: refundId, orderId: o.id, amount, remark, transferId, createdAt: now }).run();
      tx.update(orders).set({ refundedAmount: next.refunded, status: next.status }).where(eq(orders.id, o.id)).run();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'order.refunded', merchantId: m.id, subjectType: 'order', subjectId: o.id,
        detail: { refundId, amount: formatAmount(amount, d), refundedTotal: formatAmount(next.refunded, d), paid: formatAmount(o.paidAmount, d), statusAfter: next.status, remark },
      });
      return { refundId, mchId: m.id, id: o.id, oid: o.oid, amount: formatAmount(amount, d), status: 'REFUNDED' as const, remark, refundTime: now };
    });
  }

  private findOrder(q: Q, merchantId: string, id?: string, oid?: string): OrderRow {
    const byId = id ? q.select().from(orders).where(and(eq(orders.id, id), eq(orders.merchantId, merchantId))).get() : undefined;
    if (id && !byId) throw notFound('Order not found');
    if (byId && oid && byId.oid !== oid) throw invalid(`id ${id} and oid ${oid} name different orders`);
    const o = byId ?? q.select().from(orders).where(and(eq(orders.oid, oid!), eq(orders.merchantId, merchantId))).get();
    if (!o) throw notFound('Order not found');
    return o;
  }

  async listRefunds(filter: { orderId?: string; mchId?: string; limit?: number }): Promise<RefundView[]> {
    const where: SQL[] = [];
    if (filter.orderId) where.push(eq(refunds.orderId, filter.orderId));
    if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
    const rows = this.db
      .select({ r: refunds, o: { id: orders.id, oid: orders.oid, asset: orders.asset, merchantId: orders.merchantId } })
      .from(refunds).innerJoin(orders, eq(orders.id, refunds.orderId))
      .where(and(...where)).orderBy(desc(refunds.createdAt), desc(refunds.id)).limit(filter.limit ?? 50).all();
    return rows.map(({ r, o }) => ({
      refundId: r.id, mchId: o.merchantId, id: o.id, oid: o.oid, amount: formatAmount(r.amount, this.decimalsOf(o.asset)),
      status: 'REFUNDED' as const, remark: r.remark, refundTime: r.createdAt,
    }));
  }

  // ---------------------------------------------------------------- withdrawals

  async applyWithdrawal(input: WithdrawApplyRequest): Promise<Withdrawal> {
    const h = await heavy();
    const req = h.parseInput(h.withdrawApplySchema, input);
    const registry = await this.registry();
    const chain = registry.chain(req.chainId);
    if (chain.chainType !== req.chainType) {
      throw invalid(`chainType ${req.chainType} does not match chain ${chain.chainId} (${chain.name} is ${chain.chainType})`);
    }
    const token = registry.token(chain.chainId, req.token);
    const assetDecimals = this.decimalsOf(token.asset);
    parseAmount(req.amount, h.maxDecimals(token));
    const amount = parseAmount(req.amount, assetDecimals);
    const to = h.validateAddress(chain.chainType, req.to, 'to');
    const now = this.now();
    return this.write((tx) => {
      const m = this.merchant(tx, req.mchId);
      const id = this.randomId('wd');
      const transferId = holdTransfer(tx, {
        merchantId: m.id, asset: token.asset, amount, kind: 'withdrawal', ref: id, now, decimals: assetDecimals,
        debit: accountId(tx, { merchantId: m.id, asset: token.asset, kind: 'user', uid: req.uid }),
        credit: accountId(tx, { merchantId: m.id, asset: token.asset, kind: 'withdrawals' }),
      });
      const row = tx.insert(withdrawals).values({
        id, merchantId: m.id, uid: req.uid, asset: token.asset, amount, to, chainId: chain.chainId, chainType: chain.chainType,
        token: token.address, status: 'PENDING', notifyUrl: req.notifyUrl ?? null, transferId, createdAt: now, updatedAt: now,
      }).returning().get();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'withdrawal.applied', merchantId: m.id, subjectType: 'withdrawal', subjectId: id,
        detail: { uid: req.uid, amount: formatAmount(amount, assetDecimals), to, chainId: chain.chainId, token: token.address },
      });
      return this.withdrawalView(row);
    });
  }

  async confirmWithdrawal(input: WithdrawConfirmRequest): Promise<Withdrawal> {
    const h = await heavy();
    const req = h.parseInput(h.withdrawConfirmSchema, input);
    const now = this.now();
    return this.write((tx) => {
      const m = this.merchant(tx, req.mchId);
      const w = this.findWithdrawal(tx, m.id, req.logId);
      const status = withdrawalAfter(w.status as WithdrawalStatus, 'confirm');
      const txHash = this.normalizeTxHash(req.txHash, w.chainType as ChainType, 'txHash');
      const used = tx.select({ id: withdrawals.id, merchantId: withdrawals.merchantId }).from(withdrawals).where(eq(withdrawals.txHash, txHash)).get();
      if (used) {
        // Another merchant's withdrawal is not this merchant's business: do not name it.
        throw conflict(`transaction ${txHash} already confirms ${used.merchantId === m.id ? `withdrawal ${used.id}` : 'another withdrawal'}`);
      }
      resolvePending(tx, w.transferId, 'posted', now);
      const row = tx.update(withdrawals).set({ status, txHash, blockNumber: req.blockNumber, updatedAt: now }).where(eq(withdrawals.id, w.id)).returning().get();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'withdrawal.confirmed', merchantId: m.id, subjectType: 'withdrawal', subjectId: w.id,
        detail: { txHash, blockNumber: req.blockNumber, amount: formatAmount(w.amount, this.decimalsOf(w.asset)) },
      });
      return this.withdrawalView(row);
    });
  }

  async rejectWithdrawal(input: WithdrawRejectRequest): Promise<Withdrawal> {
    const h = await heavy();
    const req = h.parseInput(h.withdrawRejectSchema, input);
    const now = this.now();
    return this.write((tx) => {
      const m = this.merchant(tx, req.mchId);
      const w = this.findWithdrawal(tx, m.id, req.id);
      const status = withdrawalAfter(w.status as WithdrawalStatus, 'reject');
      resolvePending(tx, w.transferId, 'voided', now);
      const row = tx.update(withdrawals).set({ status, remark: req.remark ?? null, updatedAt: now }).where(eq(withdrawals.id, w.id)).returning().get();
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'withdrawal.rejected', merchantId: m.id, subjectType: 'withdrawal', subjectId: w.id,
        detail: { remark: req.remark ?? null, amount: formatAmount(w.amount, this.decimalsOf(w.asset)) },
      });
      return this.withdrawalView(row);
    });
  }

  private findWithdrawal(q: Q, merchantId: string | undefined, id: string): WithdrawalRow {
    const w = q.select().from(withdrawals).where(merchantId ? and(eq(withdrawals.id, id), eq(withdrawals.merchantId, merchantId)) : eq(withdrawals.id, id)).get();
    if (!w) throw notFound('withdrawal not found');
    return w;
  }

  async getWithdrawal(id: string, mchId?: string): Promise<Withdrawal & { mchId: string }> {
    const w = this.findWithdrawal(this.db, mchId, id);
    return { ...this.withdrawalView(w), mchId: w.merchantId };
  }

  async listWithdrawals(filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; limit?: number }): Promise<Withdrawal[]> {
    const where: SQL[] = [];
    if (filter.mchId) where.push(eq(withdrawals.merchantId, filter.mchId));
    if (filter.status) where.push(eq(withdrawals.status, filter.status));
    if (filter.uid) where.push(eq(withdrawals.uid, filter.uid));
    return this.db.select().from(withdrawals).where(and(...where)).orderBy(desc(withdrawals.createdAt), desc(withdrawals.id)).limit(filter.limit ?? 50).all().map((w) => this.withdrawalView(w));
  }

  private withdrawalView(w: WithdrawalRow): Withdrawal {
    return {
      id: w.id, uid: w.uid, amount: formatAmount(w.amount, this.decimalsOf(w.asset)), to: w.to, chainId: w.chainId,
      chainType: w.chainType as ChainType, token: w.token, status: w.status as WithdrawalStatus, txHash: w.txHash,
      blockNumber: w.blockNumber, remark: w.remark, createdAt: w.createdAt, updatedAt: w.updatedAt,
    };
  }

  // ---------------------------------------------------------------- balances and audit

  private decimalsOf(asset: string): number {
    const a = ASSETS[asset];
    if (!a) throw new AppError('internal', `unknown asset ${asset}`);
    return a.decimals;
  }

  async balance(uid: string, opts: { asset?: string; mchId?: string } = {}): Promise<BalanceView> {
    const m = this.merchant(this.db, opts.mchId);
    const asset = opts.asset ?? m.asset;
    const d = this.decimalsOf(asset);
    const b = balanceOf(this.db, { merchantId: m.id, asset, kind: 'user', uid });
    return { mchId: m.id, uid, asset, available: formatAmount(b.available, d), held: formatAmount(b.held, d) };
  }

  async adjustBalance(input: { uid: string; amount: string; reason: string; asset?: string; mchId?: string }): Promise<BalanceView & { change: string }> {
    if (typeof input.uid !== 'string' || !input.uid || input.uid.length > 64) throw invalid('uid is required (1 to 64 characters)');
    if (typeof input.amount !== 'string') throw invalid('amount must be a signed decimal string such as "+5" or "-2.5"');
    const reason = input.reason?.trim();
    if (!reason) throw invalid('reason is required: say why the balance changes');
    const now = this.now();
    const m0 = this.merchant(this.db, input.mchId);
    const asset = input.asset ?? m0.asset;
    const d = this.decimalsOf(asset);
    const change = parseSignedAmount(input.amount, d);
    await this.write((tx) => {
      const user = accountId(tx, { merchantId: m0.id, asset, kind: 'user', uid: input.uid });
      const system = accountId(tx, { merchantId: m0.id, asset, kind: 'adjustments' });
      const before = balanceOf(tx, { merchantId: m0.id, asset, kind: 'user', uid: input.uid });
      postTransfer(tx, {
        merchantId: m0.id, asset, amount: change < 0n ? -change : change, kind: 'adjustment', ref: `adjust:${input.uid}`, now, decimals: d,
        debit: change < 0n ? user : system, credit: change < 0n ? system : user,
      });
      audit(tx, {
        at: now, actor: this.deps.caller.actor, action: 'balance.adjusted', merchantId: m0.id, subjectType: 'balance', subjectId: input.uid,
        detail: { asset, change: formatAmount(change, d), before: formatAmount(before.available, d), after: formatAmount(before.available + change, d), reason },
      });
    });
    return { ...(await this.balance(input.uid, { asset, mchId: m0.id })), change: formatAmount(change, d) };
  }

  async log(filter: { orderId?: string; withdrawalId?: string; mchId?: string; limit?: number }): Promise<AuditView[]> {
    const where: SQL[] = [];
    const subjects: SQL[] = [];
    if (filter.orderId) subjects.push(and(eq(auditLog.subjectType, 'order'), eq(auditLog.subjectId, filter.orderId))!);
    if (filter.withdrawalId) subjects.push(and(eq(auditLog.subjectType, 'withdrawal'), eq(auditLog.subjectId, filter.withdrawalId))!);
    if (subjects.length) where.push(or(...subjects)!);
    if (filter.mchId) where.push(eq(auditLog.merchantId, filter.mchId));
    return this.db.select().from(auditLog).where(and(...where)).orderBy(desc(auditLog.id)).limit(filter.limit ?? 50).all().map((e) => ({
      id: Number(e.id), at: e.at, actor: e.actor, action: e.action, mchId: e.merchantId, subject: `${e.subjectType}:${e.subjectId}`,
      detail: JSON.parse(e.detail) as Record<string, unknown>,
    }));
  }

  /** Every invariant of the ledger; an empty list means all hold. */
  async check(): Promise<string[]> {
    const v: string[] = [];
    const q = this.db;
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
}
