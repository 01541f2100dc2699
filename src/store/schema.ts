import { sql } from 'drizzle-orm';
import { check, customType, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * The connection reads every integer as a bigint (safeIntegers), so amounts of any size stay
 * exact. Money columns keep the bigint; counters and millisecond times become numbers.
 */
const money = customType<{ data: bigint; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => v,
  fromDriver: (v) => BigInt(v),
});
const int = customType<{ data: number; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => v,
  fromDriver: (v) => Number(v),
});
const flag = customType<{ data: boolean; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => (v ? 1 : 0),
  fromDriver: (v) => Number(v) === 1,
});

export const merchants = sqliteTable('merchants', {
  id: text('id').primaryKey(),
  seq: int('seq').notNull().unique(),
  name: text('name').notNull(),
  secret: text('secret').notNull(),
  evmXpub: text('evm_xpub'),
  tronXpub: text('tron_xpub'),
  evmNextIndex: int('evm_next_index').notNull().default(0),
  tronNextIndex: int('tron_next_index').notNull().default(0),
  orderLifetimeMs: int('order_lifetime_ms').notNull(),
  rateLimit: int('rate_limit').notNull(),
  asset: text('asset').notNull().default('USDT'),
  createdAt: int('created_at').notNull(),
  secretRotatedAt: int('secret_rotated_at'),
});

/** The addresses a merchant pays out from, per chain type (src/store/payout-wallets.ts). */
export const payoutWallets = sqliteTable(
  'payout_wallets',
  {
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    chainType: text('chain_type').notNull(),
    address: text('address').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.chainType, t.address] })],
);

export const orders = sqliteTable(
  'orders',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    oid: text('oid').notNull(),
    uid: text('uid').notNull(),
    asset: text('asset').notNull(),
    amount: money('amount').notNull(),
    /** PENDING_PAY, PAID or REFUNDED; EXPIRED is read from expired_at, never stored. */
    status: text('status').notNull(),
    memo: text('memo'),
    expiredAt: int('expired_at').notNull(),
    notifyUrl: text('notify_url'),
    redirectUrl: text('redirect_url'),
    logo: text('logo'),
    paidAmount: money('paid_amount').notNull().default(sql`0`),
    refundedAmount: money('refunded_amount').notNull().default(sql`0`),
    paidAt: int('paid_at'),
    late: flag('late').notNull().default(false),
    createdAt: int('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('orders_merchant_oid').on(t.merchantId, t.oid),
    index('orders_merchant_status').on(t.merchantId, t.status, t.expiredAt),
    index('orders_uid').on(t.merchantId, t.uid),
    // The expiry sweep of the callbacks (0005): unpaid orders by expiry, across merchants.
    index('orders_expiry').on(t.status, t.expiredAt),
  ],
);

export const orderAddresses = sqliteTable(
  'order_addresses',
  {
    orderId: text('order_id').notNull().references(() => orders.id),
    chainType: text('chain_type').notNull(),
    address: text('address').notNull(),
    derivationIndex: int('derivation_index').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orderId, t.chainType] }),
    // An address is given out once, in any spelling, and every lookup searches this one index
    // (src/store/address-match.ts): the chain watcher matches a log's recipient as the node spells
    // it (lower-case hex), with no EIP-55 checksum (a keccak, ~13 µs) per log of a scan; a TRON
    // address is then compared as written. Migration 0010_address_index (it replaced a unique
    // index on the address and one on lower(address) for EVM: two random leaves per order).
    uniqueIndex('order_addresses_address').on(sql`lower(${t.address})`),
  ],
);

export const payments = sqliteTable(
  'payments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orderId: text('order_id').notNull().references(() => orders.id),
    /** The order's merchant (0019): a merchant's summary reads its own payments of a period. */
    merchantId: text('merchant_id'),
    /** As recorded (lower-case; with 0x on EVM). */
    txHash: text('tx_hash').notNull(),
    /** The canonical key of the hash (src/store/tx-keys.ts): one transaction, one key. */
    txKey: text('tx_key').notNull(),
    /** The Transfer log's index in its transaction; null for a payment recorded by hand. */
    logIndex: int('log_index'),
    amount: money('amount').notNull(),
    /** The on-chain amount in the token's base units; null when recorded by hand. */
    rawAmount: text('raw_amount'),
    chainType: text('chain_type'),
    chainId: text('chain_id'),
    token: text('token'),
    blockNumber: int('block_number'),
    blockHash: text('block_hash'),
    /** When the block holding it was made (ms), as the chain says; null when recorded by hand. */
    blockTime: int('block_time'),
    late: flag('late').notNull().default(false),
    source: text('source').notNull(),
    transferId: int('transfer_id').notNull(),
    createdAt: int('created_at').notNull(),
    /** When a reorg deeper than the confirmations took it off the chain, until an operator acknowledged it (src/store/reorg-holds.ts). */
    reorgedAt: int('reorged_at'),
  },
  (t) => [
    index('payments_order').on(t.orderId),
    index('payments_reorged').on(t.orderId).where(sql`${t.reorgedAt} IS NOT NULL`),
    index('payments_tx_key').on(t.txKey),
    index('payments_created').on(t.createdAt),
    index('payments_merchant_created').on(t.merchantId, t.createdAt),
    uniqueIndex('payments_chain_log').on(t.chainId, t.txKey, t.logIndex).where(sql`${t.logIndex} IS NOT NULL`),
    check('payments_amount', sql`typeof(${t.amount}) = 'integer' AND ${t.amount} > 0`),
  ],
);

/** Every transaction hash the ledger recorded, by canonical key: a payment's or a withdrawal's. */
export const txKeys = sqliteTable(
  'tx_keys',
  {
    key: text('key').notNull(),
    /** '' for the whole ledger (a payment, a verified payout); a merchant's id for its unverified payout (src/store/tx-keys.ts). */
    scope: text('scope').notNull().default(''),
    use: text('use').notNull(),
    /** 1 for a key first recorded by the chain watcher: other logs of that transaction may pay too. */
    shared: flag('shared').notNull().default(false),
    createdAt: int('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.scope] })],
);

export const refunds = sqliteTable(
  'refunds',
  {
    id: text('id').primaryKey(),
    orderId: text('order_id').notNull().references(() => orders.id),
    /** The order's merchant (0019), as on payments. */
    merchantId: text('merchant_id'),
    amount: money('amount').notNull(),
    remark: text('remark').notNull().default(''),
    transferId: int('transfer_id').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (t) => [index('refunds_order').on(t.orderId), index('refunds_created').on(t.createdAt), index('refunds_merchant_created').on(t.merchantId, t.createdAt)],
);

export const withdrawals = sqliteTable(
  'withdrawals',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    uid: text('uid').notNull(),
    asset: text('asset').notNull(),
    amount: money('amount').notNull(),
    to: text('to_address').notNull(),
    chainId: text('chain_id').notNull(),
    chainType: text('chain_type').notNull(),
    token: text('token').notNull(),
    status: text('status').notNull(),
    /** Unique within its merchant (migration 0013: another merchant's unverified payout may name it too, src/store/tx-keys.ts). */
    txHash: text('tx_hash'),
    blockNumber: int('block_number'),
    remark: text('remark'),
    notifyUrl: text('notify_url'),
    transferId: int('transfer_id').notNull(),
    createdAt: int('created_at').notNull(),
    updatedAt: int('updated_at').notNull(),
    /**
     * Decisions §6, migration 0006: `confirming` (the transaction matched on chain, short of its
     * confirmations; the watcher settles it), `verified` (matched at depth), `unverified`
     * (confirmed without the chain: no rpcUrl, or an operator's --unverified with a reason).
     */
    verification: text('verification'),
    /** Why it is unverified, or what a reorg undid (shown by withdraw show). */
    verificationNote: text('verification_note'),
    /** The block hash the transaction was found in. */
    blockHash: text('block_hash'),
    /**
     * Migration 0008: the sender and nonce of a confirming withdrawal's transaction (EVM; TRON has
     * no nonce), and when a reorg took it out of the chain: a lost transaction can be mined
     * again until its nonce is used by another (TRON: until it expires, 24 h at most).
     */
    payoutFrom: text('payout_from'),
    payoutNonce: int('payout_nonce'),
    payoutLostAt: int('payout_lost_at'),
  },
  (t) => [
    index('withdrawals_merchant_status').on(t.merchantId, t.status),
    index('withdrawals_uid').on(t.merchantId, t.uid),
    // The watcher's tick asks for these on every poll.
    index('withdrawals_confirming').on(t.chainId).where(sql`${t.verification} = 'confirming'`),
    // Create order skips an address a withdrawal pays to (migration 0012): one probe per address.
    index('withdrawals_to').on(sql`lower(${t.to})`),
    uniqueIndex('withdrawals_merchant_tx').on(t.merchantId, t.txHash),
  ],
);

/**
 * Double-entry accounts (TigerBeetle's idea): `posted` is credits minus debits of posted
 * transfers; `pendingDebits` is what pending transfers hold. A user's available balance is
 * posted - pendingDebits and never negative; system accounts may go below zero.
 */
export const accounts = sqliteTable(
  'accounts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    asset: text('asset').notNull(),
    /** user, or a system account: payments (in), withdrawals (out), refunds (out), adjustments. */
    kind: text('kind').notNull(),
    uid: text('uid').notNull().default(''),
    posted: money('posted').notNull().default(sql`0`),
    pendingDebits: money('pending_debits').notNull().default(sql`0`),
  },
  (t) => [
    uniqueIndex('accounts_key').on(t.merchantId, t.asset, t.kind, t.uid),
    check('accounts_integers', sql`typeof(${t.posted}) = 'integer' AND typeof(${t.pendingDebits}) = 'integer' AND ${t.pendingDebits} >= 0`),
  ],
);

export const transfers = sqliteTable(
  'transfers',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    merchantId: text('merchant_id').notNull(),
    asset: text('asset').notNull(),
    debitAccountId: int('debit_account_id').notNull().references(() => accounts.id),
    creditAccountId: int('credit_account_id').notNull().references(() => accounts.id),
    amount: money('amount').notNull(),
    /** posted, pending (a hold), or voided. */
    state: text('state').notNull(),
    kind: text('kind').notNull(),
    ref: text('ref').notNull(),
    createdAt: int('created_at').notNull(),
    resolvedAt: int('resolved_at'),
  },
  (t) => [
    index('transfers_debit').on(t.debitAccountId),
    index('transfers_credit').on(t.creditAccountId),
    index('transfers_ref').on(t.ref),
    // summary's adjustments of a period (0020).
    index('transfers_adjustments').on(t.merchantId, t.createdAt).where(sql`${t.kind} = 'adjustment'`),
  ],
);

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: int('at').notNull(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    merchantId: text('merchant_id'),
    subjectType: text('subject_type').notNull(),
    subjectId: text('subject_id').notNull(),
    detail: text('detail').notNull(),
    /** The entry's number in its merchant's own log (1, 2, 3 ...), given by a trigger (migration 0014). */
    merchantSeq: int('merchant_seq'),
  },
  (t) => [index('audit_subject').on(t.subjectType, t.subjectId), uniqueIndex('audit_merchant_seq').on(t.merchantId, t.merchantSeq)],
);

export const nonces = sqliteTable(
  'nonces',
  {
    merchantId: text('merchant_id').notNull(),
    nonce: text('nonce').notNull(),
    expiresAt: int('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.nonce] }), index('nonces_expiry').on(t.expiresAt)],
);

/**
 * The chain watcher's state (src/chains/watch): per chain, the first block not yet scanned, the
 * head last seen, the lease that lets one process scan it, and the last error and deep reorg.
 */
export const chainCursors = sqliteTable('chain_cursors', {
  chainId: text('chain_id').primaryKey(),
  nextBlock: int('next_block').notNull(),
  head: int('head'),
  headAt: int('head_at'),
  leaseHolder: text('lease_holder'),
  leaseExpiresAt: int('lease_expires_at'),
  lastError: text('last_error'),
  lastErrorAt: int('last_error_at'),
  deepReorg: text('deep_reorg'),
  updatedAt: int('updated_at').notNull(),
  /**
   * Every block with a timestamp (ms) at or before this has been scanned: the expiry sweep's
   * horizon (src/store/expiry-sweep.ts). Null until the first scan, and after a reorg until the rescan.
   */
  seenThrough: int('seen_through'),
});

/** Hashes of recent scanned blocks, to see a reorg and walk back to the fork. */
export const chainBlocks = sqliteTable(
  'chain_blocks',
  {
    chainId: text('chain_id').notNull(),
    number: int('number').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.number] })],
);

/** Payments seen on chain: `seen` until their confirmations, then decided: `counted` (credited), `held` (past the late window, for an operator, then `counted` or `returned`) or `refused`. */
export const chainPayments = sqliteTable(
  'chain_payments',
  {
    chainId: text('chain_id').notNull(),
    txHash: text('tx_hash').notNull(),
    logIndex: int('log_index').notNull(),
    blockNumber: int('block_number').notNull(),
    blockHash: text('block_hash').notNull(),
    /** The block's timestamp (ms): when the payment arrived, for late and held. Null on rows seen before 0007. */
    blockTime: int('block_time'),
    orderId: text('order_id').notNull().references(() => orders.id),
    token: text('token').notNull(),
    toAddress: text('to_address').notNull(),
    rawAmount: text('raw_amount').notNull(),
    amount: money('amount').notNull(),
    status: text('status').notNull(),
    seenAt: int('seen_at').notNull(),
    countedAt: int('counted_at'),
    /** Whose tokens moved (the Transfer log's `from`), in the ledger's form; null on rows seen before 0017. */
    fromAddress: text('from_address'),
  },
  (t) => [
    primaryKey({ columns: [t.chainId, t.txHash, t.logIndex] }),
    index('chain_payments_order').on(t.orderId),
    index('chain_payments_due').on(t.chainId, t.status, t.blockNumber),
    index('chain_payments_from').on(sql`lower(${t.fromAddress})`).where(sql`${t.fromAddress} IS NOT NULL`),
    index('chain_payments_status').on(t.status),
  ],
);

/**
 * Chains and tokens kept in the ledger itself (`serve --dev` records its local chain here), so
 * every command on this ledger knows them. `entry` is the JSON of one entry of the chains config
 * file, checked by the same schema when the registry is built.
 */
export const registryChains = sqliteTable('registry_chains', {
  chainId: text('chain_id').primaryKey(),
  entry: text('entry').notNull(),
  updatedAt: int('updated_at').notNull(),
});

export const registryTokens = sqliteTable(
  'registry_tokens',
  {
    chainId: text('chain_id').notNull(),
    /** Lower case on EVM chains, where addresses are case-insensitive. */
    addressKey: text('address_key').notNull(),
    entry: text('entry').notNull(),
    updatedAt: int('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.addressKey] })],
);

/** Service-wide settings by key (src/store/settings.ts). */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: int('updated_at').notNull(),
});

/**
 * The callbacks outbox (0005): one row per event to deliver, written in the transaction of the
 * change it reports. `id` is the event's eventId, the same on every attempt.
 */
export const callbacks = sqliteTable(
  'callbacks',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    event: text('event').notNull(),
    /** order or withdrawal */
    subjectType: text('subject_type').notNull(),
    subjectId: text('subject_id').notNull(),
    url: text('url').notNull(),
    /** host:port of the url: deliveries in flight are bounded per host. */
    host: text('host').notNull(),
    /** The event's fields as JSON, without mchId, timestamp, nonce and sign (added per attempt). */
    payload: text('payload').notNull(),
    /** pending, delivered or failed */
    status: text('status').notNull().default('pending'),
    attempts: int('attempts').notNull().default(0),
    /** How far along the retry schedule: the next failure waits schedule[step]. */
    step: int('step').notNull().default(0),
    nextAttemptAt: int('next_attempt_at').notNull(),
    leaseOwner: text('lease_owner'),
    leaseUntil: int('lease_until'),
    lastStatus: int('last_status'),
    lastError: text('last_error'),
    createdAt: int('created_at').notNull(),
    updatedAt: int('updated_at').notNull(),
    deliveredAt: int('delivered_at'),
  },
  (t) => [
    index('callbacks_due').on(t.status, t.nextAttemptAt),
    // The sender's reads that leave full hosts out (0009): one host's due rows, and the next host.
    index('callbacks_pending_host').on(t.host, t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('callbacks_subject').on(t.subjectType, t.subjectId),
    uniqueIndex('callbacks_expired_once').on(t.subjectId).where(sql`${t.event} = 'order.expired'`),
  ],
);

export const callbackAttempts = sqliteTable(
  'callback_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    callbackId: text('callback_id').notNull().references(() => callbacks.id),
    at: int('at').notNull(),
    statusCode: int('status_code'),
    latencyMs: int('latency_ms').notNull(),
    error: text('error'),
    owner: text('owner').notNull(),
  },
  (t) => [index('callback_attempts_callback').on(t.callbackId)],
);

/** Where the expiry sweep of the callbacks got to (name 'expiry': an expiredAt in ms). */
export const callbackCursors = sqliteTable('callback_cursors', {
  name: text('name').primaryKey(),
  value: int('value').notNull(),
});

/**
 * Unpaid orders past their expiry whose order.expired waits for a payment made before the expiry
 * to confirm (src/store/expiry-sweep.ts): each sweep looks at these few instead of holding its
 * cursor back. A row goes when the order is paid, or announced.
 */
export const expiryHolds = sqliteTable('expiry_holds', {
  orderId: text('order_id').primaryKey().references(() => orders.id),
  expiredAt: int('expired_at').notNull(),
});
