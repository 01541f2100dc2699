import { and, asc, eq, sql } from 'drizzle-orm';
import { PUBLIC_TEST_XPUBS } from '../chains/sandbox/public-wallet.js';
import type { Ledger } from './db.js';
import { merchants, nonces, orderAddresses, orders, payments } from './schema.js';

/**
 * The statements of the hottest paths (the status read, the payment page, create order), prepared
 * once per ledger connection: building and preparing SQL for each request cost about a third
 * of a create order.
 */
function prepareStatements(ledger: Ledger) {
  const { db } = ledger;
  const p = sql.placeholder;
  return lazily({
    /**
     * The status GET's read, on better-sqlite3 itself: drizzle's prepared query added its
     * placeholder filling, logger call and row mapping to every status request. A row is
     * [status, expired_at] (expired_at a bigint: the connection reads safe integers).
     */
    status: () => ledger.sqlite.prepare<[string], [string, bigint]>('SELECT status, expired_at FROM orders WHERE id = ?').raw(true),
    /**
     * The payment page's order: what it shows of the order, its merchant's name, its addresses and
     * whether the watcher has seen payments not yet counted, one row, on better-sqlite3 itself
     * like the status read; last, the row as one text (below), read in the same statement.
     */
    payPageOrder: () => ledger.sqlite.prepare<[string], PayPageRow>(`SELECT ${PAGE_COLUMNS.join(', ')}, ${PAGE_VERSION} ${PAGE_FROM}`).raw(true),
    /**
     * The same row as one text (each column SQL-quoted, so that distinct rows give distinct
     * texts), with the status and expiry apart: the page's read when it has a page of the order
     * already. Built from the very same column list, so it changes whenever anything the page
     * shows does; one string read instead of fifteen values.
     */
    payPageVersion: () =>
      ledger.sqlite
        .prepare<[string], [string, string, bigint]>(`SELECT ${PAGE_VERSION}, o.status, o.expired_at ${PAGE_FROM}`)
        .raw(true),
    // The order and its payments (order show, the payment state).
    orderById: () => db.select().from(orders).where(eq(orders.id, p('id'))).prepare(),
    paymentsOf: () => db.select().from(payments).where(eq(payments.orderId, p('id'))).orderBy(asc(payments.id)).prepare(),
    addresses: () => db.select({ chainType: orderAddresses.chainType, address: orderAddresses.address }).from(orderAddresses).where(eq(orderAddresses.orderId, p('id'))).prepare(),
    insertNonce: () => db.insert(nonces).values({ merchantId: p('merchantId'), nonce: p('nonce'), expiresAt: p('expiresAt') }).onConflictDoNothing().prepare(),
    nonceSeen: () => db.select({ n: nonces.nonce }).from(nonces).where(and(eq(nonces.merchantId, p('merchantId')), eq(nonces.nonce, p('nonce')))).prepare(),
    merchantById: () => db.select().from(merchants).where(eq(merchants.id, p('id'))).prepare(),
    merchantAuth: () => db.select({ secret: merchants.secret, rateLimit: merchants.rateLimit }).from(merchants).where(eq(merchants.id, p('id'))).prepare(),
    orderByOid: () => db.select().from(orders).where(and(eq(orders.merchantId, p('merchantId')), eq(orders.oid, p('oid')))).prepare(),
    insertOrder: () => db.insert(orders).values({
      id: p('id'), merchantId: p('merchantId'), oid: p('oid'), uid: p('uid'), asset: p('asset'), amount: p('amount'),
      status: 'PENDING_PAY', memo: p('memo'), expiredAt: p('expiredAt'), notifyUrl: p('notifyUrl'), redirectUrl: p('redirectUrl'),
      logo: p('logo'), createdAt: p('createdAt'),
    }).onConflictDoNothing().prepare(),
    /**
     * An order's address, unless it was given out already (the unique index on lower(address))
     * or a withdrawal, any merchant's, in any status, pays to it (index withdrawals_to): the
     * watcher would count that payout as this order's payment. No change: take the next index.
     */
    insertAddress: () =>
      ledger.sqlite.prepare<{ orderId: string; chainType: string; address: string; index: number }>(
        'INSERT INTO order_addresses (order_id, chain_type, address, derivation_index) SELECT @orderId, @chainType, @address, @index ' +
          'WHERE NOT EXISTS (SELECT 1 FROM withdrawals WHERE lower(to_address) = lower(@address)) ON CONFLICT DO NOTHING',
      ),
    setNextIndices: () => db.update(merchants).set({ evmNextIndex: sql`${p('evm')}`, tronNextIndex: sql`${p('tron')}` }).where(eq(merchants.id, p('id'))).prepare(),
  });
}

export type Statements = ReturnType<typeof prepareStatements>;

/** What the payment page reads of an order, in PayPageRow's order (a chain type has at most one address). */
const PAGE_COLUMNS = [
  'o.id', 'o.oid', 'o.merchant_id', 'm.name', 'o.asset', 'o.amount', 'o.paid_amount', 'o.status', 'o.expired_at', 'o.memo', 'o.logo', 'o.redirect_url',
  "(SELECT address FROM order_addresses WHERE order_id = o.id AND chain_type = 'EVM')",
  "(SELECT address FROM order_addresses WHERE order_id = o.id AND chain_type = 'TRON')",
  "EXISTS (SELECT 1 FROM chain_payments c WHERE c.order_id = o.id AND c.status = 'seen')",
  // The merchant's wallet is the public test wallet (base58: no quote can occur in them).
  `(m.evm_xpub = '${PUBLIC_TEST_XPUBS.EVM}' OR m.tron_xpub = '${PUBLIC_TEST_XPUBS.TRON}')`,
];
const PAGE_FROM = 'FROM orders o LEFT JOIN merchants m ON m.id = o.merchant_id WHERE o.id = ?';
/** Every column of the page's row as one text, each SQL-quoted (quote() never gives NULL). */
const PAGE_VERSION = PAGE_COLUMNS.map((c) => `quote(${c})`).join(" || ',' || ");

/** A row of payPageOrder (integers are bigints: the connection reads safe integers). */
export type PayPageRow = [
  id: string, oid: string, merchantId: string, merchantName: string | null, asset: string, amount: bigint, paidAmount: bigint,
  status: string, expiredAt: bigint, memo: string | null, logo: string | null, redirectUrl: string | null,
  evmAddress: string | null, tronAddress: string | null, seenOnChain: bigint, testWallet: bigint | null, version: string,
];

/**
 * Each statement prepared on its first use, then kept: a CLI command such as `order status`
 * uses one of them, and preparing them all was ~10% of its start-up.
 */
function lazily<T extends Record<string, () => unknown>>(makers: T): { [K in keyof T]: ReturnType<T[K]> } {
  const out = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const [key, make] of Object.entries(makers)) {
    Object.defineProperty(out, key, {
      configurable: true,
      enumerable: true,
      get() {
        const value = make();
        Object.defineProperty(out, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return out;
}

const prepared = new WeakMap<Ledger, Statements>();

export function statementsOf(ledger: Ledger): Statements {
  let r = prepared.get(ledger);
  if (!r) prepared.set(ledger, (r = prepareStatements(ledger)));
  return r;
}
