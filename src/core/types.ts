export type ChainType = 'EVM' | 'TRON';
export const CHAIN_TYPES: readonly ChainType[] = ['EVM', 'TRON'];

export type OrderStatus = 'PENDING_PAY' | 'PAID' | 'EXPIRED' | 'REFUNDED';
export const ORDER_STATUSES: readonly OrderStatus[] = ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'];

export type WithdrawalStatus = 'PENDING' | 'CONFIRMED' | 'REJECTED';
export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PENDING', 'CONFIRMED', 'REJECTED'];

export type Addresses = Partial<Record<ChainType, string>>;

/** The payment order of interface §2.2, as create order answers it. */
export interface Order {
  id: string;
  oid: string;
  uid: string;
  amount: string;
  status: OrderStatus;
  expiredAt: number;
  addresses: Addresses;
  /** The payment page (decisions §11), on create order's answer only. */
  payUrl?: string;
}

/** Everything the ledger knows of an order (decisions §3: "order fields beyond ..."). */
export interface OrderDetail extends Order {
  mchId: string;
  asset: string;
  memo: string | null;
  notifyUrl: string | null;
  redirectUrl: string | null;
  logo: string | null;
  paidAmount: string;
  refundedAmount: string;
  paidAt: number | null;
  late: boolean;
  createdAt: number;
  payments: Payment[];
}

export interface Payment {
  txHash: string;
  amount: string;
  chainType: ChainType | null;
  chainId: string | null;
  token: string | null;
  late: boolean;
  source: 'manual' | 'chain';
  createdAt: number;
}

/** Interface §2.5. */
export interface RefundResult {
  id: string;
  oid: string;
  amount: string;
  status: 'REFUNDED';
  remark: string;
  refundTime: number;
}

/** Decisions §6: the record all three withdrawal operations answer with. */
export interface Withdrawal {
  id: string;
  uid: string;
  amount: string;
  to: string;
  chainId: string;
  chainType: ChainType;
  token: string;
  status: WithdrawalStatus;
  txHash: string | null;
  blockNumber: number | null;
  remark: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * How far a payout's block time may be before its withdrawal's request and still pay it: the two
 * clocks (the chain's, the service's) may disagree by this much (decisions, "Withdrawal
 * confirmations checked on chain").
 */
export const PAYOUT_CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * What the chain says about a withdrawal's transaction next to what the withdrawal expects
 * (issue #12): `withdraw verify`, the question of `withdraw confirm`, `POST /api/v1/withdraw/verify`.
 */
export interface VerificationReport {
  id: string;
  status: WithdrawalStatus;
  /** How its confirmation was trusted: null (not confirmed), confirming, verified, unverified. */
  verification: 'confirming' | 'verified' | 'unverified' | null;
  txHash: string;
  blockNumber: number;
  /** The transaction pays exactly this withdrawal in that block. */
  matches: boolean;
  /** It matches and has the chain's confirmations. */
  deep: boolean;
  verdict: 'match' | 'mismatch' | 'unknown' | 'unmined';
  /** One sentence for the operator: what matches, or everything that differs. */
  message: string;
  /** `requestedAt`: when the withdrawal was requested (ms); a transaction mined before it cannot pay it. */
  /** `payoutWallets`: the merchant's on this chain type; when any, the tokens must come from one of them. */
  expected: { token: string; tokenSymbol: string; amount: string; rawAmount: string; to: string; blockNumber: number; confirmations: number; requestedAt: number; payoutWallets: string[] };
  chain: {
    known: boolean;
    mined: boolean;
    succeeded: boolean | null;
    blockNumber: number | null;
    blockHash: string | null;
    /** The block's timestamp (ms); null when not mined. */
    blockTime: number | null;
    head: number;
    confirmations: number;
    /** Every Transfer log of the transaction; `from`: whose tokens moved. */
    transfers: { token: string; from: string; to: string; rawAmount: string; amount: string | null }[];
  };
}

/** A refund as the ledger keeps it: the interface's result plus the refund's own id. */
export interface RefundView extends RefundResult {
  refundId: string;
  mchId: string;
}

/** A user's balance in one asset. */
export interface BalanceView {
  mchId: string;
  uid: string;
  asset: string;
  available: string;
  held: string;
}

/** One entry of the audit log. */
export interface AuditView {
  id: number;
  at: number;
  actor: string;
  action: string;
  mchId: string | null;
  subject: string;
  detail: Record<string, unknown>;
}

/** A payment seen on chain more than 24 h after its order expired, waiting for an operator. */
export interface HeldPaymentView {
  orderId: string;
  oid: string;
  uid: string;
  mchId: string;
  chainId: string;
  txHash: string;
  logIndex: number;
  blockNumber: number;
  token: string;
  amount: string;
  asset: string;
  rawAmount: string;
  expiredAt: number;
  heldAt: number | null;
}

/**
 * A withdrawal as the extension reads show it (lists, show, find): the record of the interface
 * with the asset its amount is in, which a chain the reader does not know would not tell
 * (decisions §12: the interface's own operations keep their shape).
 */
export interface ListedWithdrawal extends Withdrawal {
  /** Always answered by this service; absent only from a server that predates it (remote mode). */
  asset?: string;
  /** Whose it is (a list of a ledger with several merchants); absent from a server that predates it. */
  mchId?: string;
}

/** Everything `withdraw show` tells: the record, its merchant, and how its confirmation was trusted. */
export interface WithdrawalDetail extends ListedWithdrawal {
  mchId: string;
  /** null: not confirmed; `confirming`: matched on chain, waiting for depth; `verified`; `unverified`. */
  verification: 'confirming' | 'verified' | 'unverified' | null;
  /** Why it is unverified, or what a reorg undid. */
  verificationNote: string | null;
}

/** A payment as the chain watcher saw it (src/chains/watch/seen.ts). */
export interface OnChainPayment {
  chainId: string;
  txHash: string;
  logIndex: number;
  blockNumber: number;
  token: string;
  amount: string;
  rawAmount: string;
  /** seen (waiting for confirmations), counted, held (past the late window, for an operator), returned, or refused by the ledger. */
  status: string;
  confirmations: number;
  required: number;
  /** When it arrived on chain: its block's timestamp, ms (null for a payment seen before the ledger kept it). */
  blockTime: number | null;
  /** Who paid: whose tokens the transfer moved (the payer's wallet, or the exchange it paid from); null for a payment seen before the ledger kept it. */
  from: string | null;
}

/** `order show`: the order, and its payments as the watcher saw them. */
/**
 * What the payment page shows of an order, read in one statement with its merchant's name (null
 * when the merchant row is gone): the page needs neither the order's payments nor its callbacks.
 */
export interface PayPageOrder {
  id: string;
  oid: string;
  mchId: string;
  merchantName: string | null;
  asset: string;
  amount: string;
  paidAmount: string;
  status: OrderStatus;
  expiredAt: number;
  memo: string | null;
  logo: string | null;
  redirectUrl: string | null;
  /**
   * Whether the chain watcher has payments of this order it has seen and not counted yet (read in
   * the same statement): only then does the page read them for its "waiting for confirmations".
   */
  seenOnChain: boolean;
  /** The merchant's wallet is the public anvil test wallet (src/chains/sandbox/public-wallet.ts): test money only. */
  testWallet: boolean;
  addresses: Addresses;
}

export interface OrderShow extends OrderDetail {
  onChain: OnChainPayment[];
}

/**
 * A chain the service knows and the tokens it books on it, as a merchant may see them: what
 * `withdraw apply` on a remote needs to know a chain only the service knows (its type, its
 * tokens). Never its rpcUrl, which may hold the node's key.
 */
export interface KnownChain {
  chainId: string;
  chainType: 'EVM' | 'TRON';
  name: string;
  confirmations: number;
  /** A local chain whose tokens anyone can mint (serve --dev's). */
  development: boolean;
  tokens: { address: string; symbol: string; asset: string; decimals: number }[];
}

/** Who a merchant's signed request acts as: what `profile add` and `profile test` check. */
export interface MerchantIdentity {
  mchId: string;
  name: string;
  asset: string;
}

/** Where a callback stands (decisions §9). */
export type CallbackStatus = 'pending' | 'delivered' | 'failed';

/** One callback of the outbox, as `callbacks list` shows it. */
export interface CallbackView {
  id: string;
  eventId: string;
  mchId: string;
  event: string;
  subject: string;
  url: string;
  status: CallbackStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

/** One delivery attempt; `by` is the sending process (over HTTP: `service`). */
export interface AttemptView {
  at: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  by: string;
}

/** `callbacks show`: the callback, the event it carries, and every attempt. */
export interface CallbackShow extends CallbackView {
  payload: Record<string, string | number | boolean | null>;
  history: AttemptView[];
}

/**
 * One page of a list, newest first (issue #15 item 2): the rows, how many match in all, how many
 * come before this page, and the cursor of the next page (null on the last): the id of the last
 * row shown.
 */
export interface Page<T> {
  items: T[];
  total: number;
  /** Rows before this page (0 on the first). */
  before: number;
  next: string | null;
}

/** A refund just made, with its order as it stands after it (what the CLI prints, issue #15 item 3). */
export interface RefundDone extends RefundView {
  asset: string;
  orderStatus: 'PAID' | 'REFUNDED';
  paidAmount: string;
  refundedAmount: string;
}

/** Amounts by asset, each a canonical decimal string. */
export type Totals = Record<string, string>;

export interface Tally {
  count: number;
  total: Totals;
}

export interface Period {
  since: number;
  payments: Tally;
  refunds: Tally;
  /** Withdrawals paid out (confirmed) in the period. */
  withdrawals: Tally;
  /**
   * An operator's changes of users' balances in the period: `balance adjust` either way, and a
   * refused payment credited by hand (`order credit-held`). With them the period's figures add
   * up to what users hold. Absent from a server that predates it.
   */
  adjustments?: Adjusted;
}

/** Balance adjustments: how many, and what they credited to users and debited from them, by asset. */
export interface Adjusted {
  count: number;
  credited: Totals;
  debited: Totals;
}

/**
 * `cryptopay summary` (issue #15 item 10): the state of the ledger at a glance, of one merchant
 * or (locally, no merchant named) of all. A chain's `name` is the registry's (null when the
 * registry no longer has it).
 */
export interface Summary {
  at: number;
  mchId: string | null;
  pendingWithdrawals: Tally & { confirming: number };
  today: Period;
  week: Period;
  balances: { available: Totals; held: Totals };
  heldPayments: Tally;
  /**
   * Payments seen on chain that the ledger refused (their transaction already confirms a
   * withdrawal): money on chain that no balance shows, for an operator to settle by hand.
   */
  /** `orders`: the first REFUSED_ORDERS_LISTED of their orders, by id. */
  refusedPayments: Tally & { orders: string[] };
  chains: { chainId: string; name: string | null; head: number | null; scannedTo: number | null; lag: number | null; headAt: number | null; lastError: string | null; deepReorg: string | null }[];
  /** Callbacks that used up their retries. */
  failedCallbacks: number;
  /**
   * Callbacks still being retried after a failed attempt, and when the oldest of them was made: a
   * receiver failing now (a callback only counts as failed after ~2 days of retries). Absent from
   * a server that predates it.
   */
  retryingCallbacks?: { count: number; since: number | null };
}

/** How `order find` found an order. */
/** `payer`: the address an order's payment came from (the watcher's Transfer log). */
/** `refund`: the text is the id of one of the order's refunds (what a customer's refund e-mail names). */
export type MatchedBy = 'id' | 'oid' | 'uid' | 'txHash' | 'address' | 'payer' | 'refund';

/**
 * `order find`: the orders whose id, oid, uid, payment transaction or deposit address is the
 * text, newest first; the withdrawals whose payout transaction it is; `more` when more orders
 * match than were answered.
 */
export interface FindResult {
  orders: (OrderDetail & { matchedBy: MatchedBy[] })[];
  withdrawals: (ListedWithdrawal & { mchId: string; matchedBy: MatchedBy[] })[];
  more: boolean;
}

/**
 * `log --follow`: the entries after `after` (entry numbers), oldest first, and the mark to ask
 * from next time: every entry up to it has been read. Without `after`, the newest entries.
 */
export interface LogFollow {
  entries: AuditView[];
  mark: number;
}

/** Most entries one answer of `log --follow` carries after a mark; the rest come with the next ask. */
export const FOLLOW_MAX = 500;

/** How many orders summary's refusedPayments names at most. */
export const REFUSED_ORDERS_LISTED = 20;
