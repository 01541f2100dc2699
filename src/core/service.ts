import type {
  CreateOrderRequest,
  RefundRequest,
  WithdrawApplyRequest,
  WithdrawConfirmRequest,
  WithdrawRejectRequest,
  WithdrawVerifyRequest,
} from './schemas.js';
import type {
  Addresses,
  AuditView,
  BalanceView,
  CallbackShow,
  CallbackStatus,
  CallbackView,
  FindResult,
  HeldPaymentView,
  KnownChain,
  LogFollow,
  MerchantIdentity,
  Order,
  OrderDetail,
  OrderShow,
  OrderStatus,
  Page,
  RefundResult,
  RefundView,
  Summary,
  VerificationReport,
  ListedWithdrawal,
  Withdrawal,
  WithdrawalDetail,
  WithdrawalStatus,
} from './types.js';

/**
 * The operations of the REST interface, and the one seam of cryptopay: the ledger implements
 * it, the HTTP server serves it, the remote client forwards it. Inputs are the interface's
 * request bodies without the signing fields; every implementation validates them with the same
 * schemas and refuses with the same AppError kinds and messages.
 */
export interface PaymentService {
  createOrder(input: CreateOrderRequest): Promise<Order>;
  getAddresses(id: string): Promise<Addresses>;
  getOrderStatus(id: string): Promise<OrderStatus>;
  refund(input: RefundRequest): Promise<RefundResult>;
  applyWithdrawal(input: WithdrawApplyRequest): Promise<Withdrawal>;
  confirmWithdrawal(input: WithdrawConfirmRequest): Promise<Withdrawal>;
  rejectWithdrawal(input: WithdrawRejectRequest): Promise<Withdrawal>;
}

/**
 * What an operator needs beyond the interface, served as signed extension endpoints (decisions
 * §12, docs/api.md "Extensions") so that remote mode can do it too; the ledger and the remote
 * client both implement it. `mchId` names the merchant: locally an operator may leave it out
 * (every merchant, or the only one); over HTTP it is always the merchant whose secret signed the
 * request, so a merchant only ever reads its own data.
 */
export interface OperatorExtensions {
  /** The chain's view of a withdrawal's transaction (its own, or one about to confirm it); changes nothing. */
  verifyWithdrawal(input: WithdrawVerifyRequest): Promise<VerificationReport>;
  /** The merchant a signed request acts as (profile add and profile test check credentials with it). */
  whoami(mchId?: string): Promise<MerchantIdentity>;
  /** The chains and tokens the service knows, without their rpcUrl (withdraw apply on a remote). */
  knownChains(): Promise<KnownChain[]>;
  /** `since` inclusive, `until` exclusive (ms, creation time); `cursor` the id of the last order of the page before (issue #15 item 2). */
  listOrders(filter: { mchId?: string; status?: OrderStatus; uid?: string; oid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<OrderDetail[]>;
  /** One order by id or oid, with its payments as the chain watcher saw them. */
  showOrder(input: { mchId?: string; id?: string; oid?: string }): Promise<OrderShow>;
  heldPayments(filter: { mchId?: string; orderId?: string }): Promise<HeldPaymentView[]>;
  listWithdrawals(filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<ListedWithdrawal[]>;
  getWithdrawal(id: string, mchId?: string): Promise<WithdrawalDetail>;
  listRefunds(filter: { orderId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<RefundView[]>;
  /** With `known`, a uid the merchant never saw is refused (not_found) instead of answered with zeros. */
  balance(uid: string, opts?: { asset?: string; mchId?: string; known?: boolean }): Promise<BalanceView>;
  log(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<AuditView[]>;
  listCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<CallbackView[]>;
  showCallback(id: string, mchId?: string): Promise<CallbackShow>;
  // The lists as pages: the rows with how many match in all and where the page stands (the
  // CLI's "showing 51-100 of 230"); over HTTP the list endpoints with `"page": true`.
  pageOrders(filter: { mchId?: string; status?: OrderStatus; uid?: string; oid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<OrderDetail>>;
  pageWithdrawals(filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<ListedWithdrawal>>;
  pageRefunds(filter: { orderId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<Page<RefundView>>;
  pageLog(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<AuditView>>;
  pageCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<Page<CallbackView>>;
  /** `order find`: by id, oid, uid, transaction hash (payments and payouts) or deposit address. */
  findOrders(q: string, opts?: { mchId?: string; limit?: number }): Promise<FindResult>;
  /** `cryptopay summary`. */
  summary(opts?: { mchId?: string }): Promise<Summary>;
  /** `log --follow`: what was committed after a mark (see LogFollow). */
  followLog(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; after?: number; limit?: number }): Promise<LogFollow>;
}

/** What a command holds: the interface's operations and the operator's extensions, local or remote alike. */
export type OperatorService = PaymentService & OperatorExtensions;

/** Who acts, for the audit log and replay protection. */
export interface Caller {
  /** `--operator NAME` or the OS user on the CLI; `api:<mchId>` for the server. */
  actor: string;
  /** A verified request's nonce, consumed in the same transaction as the operation. */
  nonce?: { merchantId: string; value: string; expiresAt: number };
}
