import type { ChainEntry, ChainInfo, Registry, RegistryConfig, TokenEntry } from '../chains/registry.js';
import { inwardUrlsAllowed } from './inward-urls.js';
import type { RpcClient } from '../chains/watch/rpc.js';
import type { OnChainPayment } from '../chains/watch/seen.js';
import { conflict, invalid } from '../core/errors.js';
import type {
  CreateOrderRequest,
  RefundRequest,
  WithdrawApplyRequest,
  WithdrawConfirmRequest,
  WithdrawRejectRequest,
  WithdrawVerifyRequest,
} from '../core/schemas.js';
import type { Caller, OperatorExtensions, PaymentService } from '../core/service.js';
import type { Addresses, CallbackShow, FindResult, KnownChain, LogFollow, MerchantIdentity, Order, OrderDetail, OrderShow, OrderStatus, PayPageOrder, RefundResult, VerificationReport, ListedWithdrawal, Withdrawal, WithdrawalStatus } from '../core/types.js';
import { followLog, pageLog, readLog, type AuditView, type LogFilter } from './audit-log.js';
import { adjustBalance, balance, userSeen, type BalanceView } from './balances.js';
import { checkLedger } from './check.js';
import type { Ledger } from './db.js';
import { groupCommit } from './group-commit.js';
import { readAnchorOf } from './read-anchor.js';
import { defaultRandomId } from './ids.js';
import type { Q } from './ledger.js';
import * as merchants from './merchants.js';
import type { MerchantView, NewMerchant } from './merchants.js';
import * as held from './held-payments.js';
import type { HeldPaymentRef, HeldPaymentView } from './held-payments.js';
import * as orders from './orders.js';
import { formatAmount } from '../core/money.js';
import { decimalsOf } from './store-context.js';
import { ownerOf, type Owned, type Owner } from './owners.js';
import { changePayoutWallet, listPayoutWallets, type PayoutWalletChange, type PayoutWallets } from './payout-wallets.js';
import * as outbox from './outbox.js';
import type { CallbackStatus, CallbackView } from './outbox.js';
import { markPaid, type MarkPaidInput } from './payments.js';
import { listRefunds, pageRefunds, refund, type NotARepeat, type RefundDone, type RefundView } from './refunds.js';
import type { Page } from './paging.js';
import { readLedgerRegistry, saveRegistryEntries } from './registry-entries.js';
import { SignedWriter } from './signed-requests.js';
import { statementsOf } from './statements.js';
import { summarize, type Summary } from './summary.js';
import type { StoreCtx } from './store-context.js';
import * as withdrawals from './withdrawals.js';
import * as verification from './withdrawal-verification.js';
import type { WithdrawalDetail } from './withdrawals.js';

export { formatDuration, parseDuration } from '../core/duration.js';
export type { WithdrawalDetail };
export type { Page };
export type { RefundDone };
export type { LogFilter } from './audit-log.js';
export type { AuditView, BalanceView, CallbackStatus, CallbackView, HeldPaymentRef, HeldPaymentView, MarkPaidInput, MerchantView, NewMerchant, RefundView };

export interface LocalDeps {
  now: () => number;
  caller: Caller;
  registry?: Registry;
  /** Extra chains and tokens (the chains config file); the registry is built on first use. */
  registryConfig?: RegistryConfig;
  /** 96+ random bits, URL-safe (decisions §1: ids of the unsigned GETs must be unguessable). */
  randomId?: (prefix: string) => string;
  /** A notifyUrl may name a loopback or private address (development: serve --allow-private-callbacks). */
  allowPrivateCallbacks?: boolean;
  /** What lifts that refusal, named in it: `CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1` for the CLI (default: serve's flag). */
  privateSwitch?: string;
  /** The CLI at the ledger file: the public test wallet's merchant may name inward URLs (src/store/inward-urls.ts); serve's service never. */
  localOperator?: boolean;
  /** How a chain's node is read (default: the watcher's JSON-RPC client on the chain's rpcUrl). */
  rpcFor?: (chain: ChainInfo) => RpcClient;
}

const heavy = () => import('./heavy.js');
let seenModule: typeof import('../chains/watch/seen.js') | undefined;

export { NONCE_IN_FLIGHT, NONCE_USED } from './signed-requests.js';

/**
 * The ledger behind the PaymentService seam, plus the administration only a local ledger offers.
 * A thin facade: each behaviour lives in the module of its aggregate (merchants.ts, orders.ts,
 * payments.ts, refunds.ts, withdrawals.ts, balances.ts, audit-log.ts, check.ts), each taking the
 * StoreCtx this class builds for its caller.
 */
export class LocalPaymentService implements PaymentService, OperatorExtensions {
  private registryBuilt?: Registry;
  private readonly randomId: (prefix: string) => string;
  private readonly s: StoreCtx;
  private readonly signed: SignedWriter;

  constructor(
    readonly ledger: Ledger,
    private readonly deps: LocalDeps,
  ) {
    this.registryBuilt = deps.registry;
    this.randomId = deps.randomId ?? defaultRandomId;
    this.signed = new SignedWriter(ledger, deps.caller.nonce, deps.now);
    this.s = {
      ledger,
      db: ledger.db,
      caller: deps.caller,
      now: deps.now,
      registry: () => this.registry(),
      rpc: (chain) => this.rpc(chain),
      randomId: this.randomId,
      stmts: () => statementsOf(ledger),
      write: (fn) => this.write(fn),
      allowPrivateCallbacks: deps.allowPrivateCallbacks ?? false,
      ...(deps.privateSwitch ? { privateSwitch: deps.privateSwitch } : {}),
      ...(deps.localOperator ? { localOperator: true } : {}),
    };
  }

  /**
   * The same ledger, with notifyUrls to loopback and private addresses allowed or not, as serve
   * answers (serve --allow-private-callbacks, which its refusals name).
   */
  withPrivateCallbacks(allow: boolean): LocalPaymentService {
    const { privateSwitch: _cli, localOperator: _local, ...deps } = this.deps;
    return new LocalPaymentService(this.ledger, { ...deps, registry: this.registryBuilt, randomId: this.randomId, allowPrivateCallbacks: allow });
  }

  /** The chains and tokens (built-in, the config file, the ledger's own), built and checked on first use. */
  async registry(): Promise<Registry> {
    this.registryBuilt ??= (await heavy()).createRegistry(this.deps.registryConfig, readLedgerRegistry(this.ledger.db));
    return this.registryBuilt;
  }

  /** The registry once built (registry()), else undefined: the payment page's read without a promise. */
  registryNow(): Registry | undefined {
    return this.registryBuilt;
  }

  /**
   * Puts chains and their tokens into the ledger's own registry layer (`serve --dev` and its
   * local chain), checked first as the registry will read them; this service's registry is then
   * built again, so a watcher started afterwards sees them.
   */
  async recordRegistryEntries(entries: { chains: ChainEntry[]; tokens: TokenEntry[] }): Promise<void> {
    const { createRegistry } = await heavy();
    createRegistry(this.deps.registryConfig, entries);
    await this.write((tx) => saveRegistryEntries(tx, entries, { now: this.deps.now(), actor: this.deps.caller.actor }));
    // Built again at once: the services made per request (as()) take this one rather than each
    // building their own.
    if (!this.deps.registry) this.registryBuilt = createRegistry(this.deps.registryConfig, readLedgerRegistry(this.ledger.db));
  }

  /**
   * Clears the deep reorg reported on a chain (`cryptopay chains --ack-reorg`), with the reason
   * in the audit log; the report shown to the operator, and only it. Returns what was cleared.
   */
  async acknowledgeDeepReorg(chainId: string, reason: string): Promise<string> {
    if (!reason.trim()) throw invalid('a reason is required');
    const chain = (await this.registry()).chain(chainId);
    const { readCursor, acknowledgeDeepReorg } = await import('./chain-state.js');
    const report = readCursor(this.ledger.db, chain.chainId)?.deepReorg;
    if (!report) throw invalid(`chain ${chain.chainId} has no deep reorg to acknowledge`);
    const done = await this.write((tx) => acknowledgeDeepReorg(tx, { chainId: chain.chainId, report, actor: this.deps.caller.actor, now: this.deps.now(), reason }));
    if (!done) throw conflict(`chain ${chain.chainId}: the deep reorg report changed meanwhile; look again with cryptopay chains`);
    return report;
  }

  private async rpc(chain: ChainInfo): Promise<RpcClient> {
    if (this.deps.rpcFor) return this.deps.rpcFor(chain);
    const { createRpcClient } = await import('../chains/watch/rpc.js');
    return createRpcClient({ url: chain.rpcUrl! });
  }

  /** The same ledger, acting for another caller (the server: one per verified request). */
  as(caller: Caller): LocalPaymentService {
    return new LocalPaymentService(this.ledger, { ...this.deps, registry: this.registryBuilt, randomId: this.randomId, caller });
  }

  /**
   * Undefined when everything this connection committed is on disk; else settles once it is
   * (serve fsyncs after COMMIT, off the event loop: src/store/group-commit.ts). The server awaits
   * it before answering a read, so no answer shows a change a power cut could take back.
   */
  durable(): Promise<void> | undefined {
    return groupCommit(this.ledger.sqlite).durable();
  }

  /** serve's GETs: the reads of this turn share SQLite's file locks (src/store/read-anchor.ts). */
  holdReads(): void {
    readAnchorOf(this.ledger.path)?.hold();
  }

  /** Every change, with the caller's nonce: src/store/signed-requests.ts. */
  private write<T>(fn: (tx: Q) => T): Promise<T> {
    return this.signed.write(fn);
  }

  /** A signed request refused before its operation (the rate limit): its nonce is used up all the same. */
  spendNonce(): Promise<void> {
    return this.signed.spendNonce();
  }

  private signedOp<T>(op: () => Promise<T>, opts: { replayCheckedByWrite?: boolean } = {}): Promise<T> {
    return this.signed.op(op, opts);
  }

  /**
   * A signed read (the extension endpoints, decisions §12; signed-requests.ts).
   *
   * `mchId`: the merchant whose rows it reads must exist, so that a mistyped --mch-id is refused
   * ("merchant M999 not found"), not answered with an empty list that reads as "no orders"
   * (outside review). Over HTTP it is the merchant that signed.
   */
  private signedRead<T>(read: () => T | Promise<T>, mchId?: string): Promise<T> {
    return this.signed.read(() => {
      if (mchId) merchants.findMerchant(this.s, this.s.db, mchId);
      return read();
    });
  }

  // ---------------------------------------------------------------- merchants

  /** The merchant's secret, for verifying a signed request; undefined when unknown. */
  merchantSecret(mchId: string): string | undefined {
    return merchants.merchantAuth(this.s, mchId)?.secret;
  }

  /**
   * Whether this merchant's callbacks may go to loopback and private addresses from this process:
   * the operator allowed it, or this is the CLI at the ledger and the merchant is the public test
   * wallet's (serve --dev's: src/store/inward-urls.ts).
   */
  inwardCallbacksAllowed(mchId?: string): boolean {
    return inwardUrlsAllowed(this.s, mchId);
  }

  /** Resolves a missing mchId the way every operation does (the only merchant of the ledger). */
  resolveMerchantId(mchId?: string): string {
    return merchants.findMerchant(this.s, this.s.db, mchId).id;
  }

  merchantAuth(mchId: string): { secret: string; rateLimit: number } | undefined {
    return merchants.merchantAuth(this.s, mchId);
  }

  /** Health: the ledger answers a query, and takes changes (not refused for good: a failed fsync, the file gone). */
  ping(): void {
    this.ledger.sqlite.prepare('select 1').get();
    const failure = groupCommit(this.ledger.sqlite).failure;
    if (failure) throw failure;
  }

  walletCursors(limit: number) {
    return merchants.walletCursors(this.s, limit);
  }

  countMerchants(): number {
    return merchants.countMerchants(this.s);
  }

  addMerchant(input: NewMerchant): Promise<{ merchant: MerchantView; secret: string; mnemonic?: string }> {
    return merchants.addMerchant(this.s, input);
  }

  async listMerchants(): Promise<MerchantView[]> {
    return merchants.listMerchants(this.s);
  }

  /** Who a signed request acts as: only what the merchant itself chose (no xpubs, no counters). */
  whoami(mchId?: string): Promise<MerchantIdentity> {
    return this.signedRead(() => {
      const m = merchants.findMerchant(this.s, this.s.db, mchId);
      return { mchId: m.id, name: m.name, asset: m.asset };
    });
  }

  /** The chains and tokens this service knows, as a merchant may see them (no rpcUrl). */
  knownChains(): Promise<KnownChain[]> {
    return this.signedRead(async () => {
      const registry = await this.registry();
      return registry.chains().map((c) => ({
        chainId: c.chainId, chainType: c.chainType, name: c.name, confirmations: c.confirmations, development: c.development === true,
        tokens: registry.tokens().filter((t) => t.chainId === c.chainId).map((t) => ({ address: t.address, symbol: t.symbol, asset: t.asset, decimals: t.decimals })),
      }));
    });
  }

  async showMerchant(mchId?: string): Promise<MerchantView> {
    return merchants.merchantView(merchants.findMerchant(this.s, this.s.db, mchId));
  }

  /** The merchant's payout wallets by chain type (`merchant show`, `merchant payout-wallet`). */
  async payoutWallets(mchId?: string): Promise<{ mchId: string; wallets: PayoutWallets }> {
    const m = merchants.findMerchant(this.s, this.s.db, mchId);
    return { mchId: m.id, wallets: listPayoutWallets(this.s.db, m.id) };
  }

  /** `merchant payout-wallet add|remove` (src/store/payout-wallets.ts). */
  changePayoutWallet(input: { mchId?: string; address: string }, change: 'add' | 'remove'): Promise<PayoutWalletChange> {
    return changePayoutWallet(this.s, input, change);
  }

  rotateSecret(mchId?: string): Promise<{ mchId: string; secret: string }> {
    return merchants.rotateSecret(this.s, mchId);
  }

  // ---------------------------------------------------------------- orders and payments

  createOrder(input: CreateOrderRequest): Promise<Order> {
    return this.signedOp(() => orders.createOrder(this.s, input), { replayCheckedByWrite: true });
  }

  async getAddresses(id: string): Promise<Addresses> {
    return orders.getAddresses(this.s, id);
  }

  async getOrderStatus(id: string): Promise<OrderStatus> {
    return orders.getOrderStatus(this.s, id);
  }

  /** What the payment page shows of an order, with its merchant's name, in one read. */
  payPageOrder(id: string): PayPageOrder {
    return orders.payPageOrder(this.s, id);
  }

  /** getOrderStatus without the promise: the server's status GET answers in the request's own turn. */
  orderStatusNow(id: string): OrderStatus {
    return orders.getOrderStatus(this.s, id);
  }

  async getOrder(id: string, mchId?: string): Promise<OrderDetail> {
    return orders.getOrder(this.s, id, mchId);
  }

  /** The payments the chain watcher has seen for an order, with "k of n" confirmations (order show, the payment page). */
  async paymentsOnChain(id: string): Promise<OnChainPayment[]> {
    // Loaded on first use and kept: a dynamic import per page, even of a loaded module, costs.
    const { onChainPayments } = (seenModule ??= await import('../chains/watch/seen.js'));
    return onChainPayments(this.s.db, await this.registry(), id);
  }

  /** By id or by the merchant's oid, as a refund names it. */
  async findOrderDetail(mchId: string, id?: string, oid?: string): Promise<OrderDetail> {
    return orders.orderDetail(this.s, orders.findOrder(this.s.db, mchId, id, oid));
  }

  async listOrders(filter: orders.OrderFilter & { cursor?: string; limit?: number }): Promise<OrderDetail[]> {
    return this.signedRead(() => (filter.cursor ? orders.pageOrders(this.s, filter).items : orders.listOrders(this.s, filter)), filter.mchId);
  }

  /**
   * `order show`: by id (of any merchant when none is named, for an operator at the ledger) or by
   * the merchant's oid, with the payments the chain watcher saw.
   */
  showOrder(input: { mchId?: string; id?: string; oid?: string }): Promise<OrderShow> {
    return this.signedRead(async () => {
      if (!input.id && !input.oid) throw invalid('id or oid is required');
      const order = input.oid || input.mchId ? await this.findOrderDetail(this.resolveMerchantId(input.mchId), input.id, input.oid) : await this.getOrder(input.id!);
      return { ...order, onChain: await this.paymentsOnChain(order.id) };
    });
  }

  /** `order list`: a page, filtered, with the count of all that match. */
  async pageOrders(filter: orders.OrderFilter & { limit?: number; cursor?: string }): Promise<Page<OrderDetail>> {
    return this.signedRead(() => orders.pageOrders(this.s, filter), filter.mchId);
  }

  /** The merchant that holds what an operator's command names (src/store/owners.ts). */
  ownerOf(what: Owned): Owner | undefined {
    return ownerOf(this.s, what);
  }

  /** The order an operator names by id or oid (`order show|status`, `log --order`). */
  async orderByRef(ref: string, mchId?: string): Promise<OrderDetail> {
    return orders.orderDetail(this.s, orders.resolveOrderRef(this.s, ref, mchId));
  }

  /** `order find`: by id, oid, uid, transaction hash (any spelling) or deposit address. */
  async findOrders(q: string, opts: { mchId?: string; limit?: number } = {}): Promise<FindResult> {
    return this.signedRead(() => orders.findOrders(this.s, q, opts), opts.mchId);
  }

  markPaid(input: MarkPaidInput): Promise<OrderDetail> {
    return markPaid(this.s, input);
  }

  /**
   * What a chain with an rpcUrl says a transaction paid into an order (`order mark-paid` asks
   * before its question); null on a chain without one. Refusals as markPaid's.
   */
  async paymentOnChain(input: { id: string; txHash: string; chainId: string; token?: string; amount?: string }): Promise<{ amount: string; confirmations: number } | null> {
    const registry = await this.registry();
    const chain = registry.chain(input.chainId);
    const token = input.token === undefined ? null : registry.token(chain.chainId, input.token).address;
    const said = await (await import('./payment-on-chain.js')).paidOnChain(this.s, registry, { orderId: input.id, chain, txHash: input.txHash, token, amount: input.amount });
    return said && { amount: formatAmount(said.amount, decimalsOf(said.asset)), confirmations: said.confirmations };
  }

  /** Payments found on chain more than 24 h after their order expired, waiting for an operator. */
  async heldPayments(filter: { mchId?: string; orderId?: string } = {}): Promise<HeldPaymentView[]> {
    return this.signedRead(() => held.listHeld(this.s, filter), filter.mchId);
  }

  /** The held or refused payment a reference names, for the operator's question (undefined: deciding says why). */
  decidablePayment(ref: HeldPaymentRef): held.DecidablePayment | undefined {
    return held.peekDecidable(this.s, ref);
  }

  creditHeldPayment(ref: HeldPaymentRef): Promise<OrderDetail & { recordedByHand?: held.MatchedByHand }> {
    return held.creditHeld(this.s, ref);
  }

  returnHeldPayment(ref: HeldPaymentRef & { returnTx?: string }): Promise<HeldPaymentView & { returnTx: string | null }> {
    return held.returnHeld(this.s, ref);
  }

  // ---------------------------------------------------------------- refunds

  async refund(input: RefundRequest): Promise<RefundResult> {
    const r = await this.refundWithId(input);
    return { id: r.id, oid: r.oid, amount: r.amount, status: r.status, remark: r.remark, refundTime: r.refundTime };
  }

  /** The refund with its own id and its order after it. */
  refundWithId(input: RefundRequest, notARepeat?: NotARepeat): Promise<RefundDone> {
    return this.signedOp(() => refund(this.s, input, notARepeat));
  }

  async listRefunds(filter: { orderId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<RefundView[]> {
    return this.signedRead(() => (filter.cursor ? pageRefunds(this.s, filter, false).items : listRefunds(this.s, filter)), filter.mchId);
  }

  async pageRefunds(filter: { orderId?: string; mchId?: string; limit?: number; cursor?: string }): Promise<Page<RefundView>> {
    return this.signedRead(() => pageRefunds(this.s, filter), filter.mchId);
  }

  // ---------------------------------------------------------------- withdrawals

  applyWithdrawal(input: WithdrawApplyRequest): Promise<Withdrawal> {
    return this.signedOp(() => withdrawals.applyWithdrawal(this.s, input));
  }

  confirmWithdrawal(input: WithdrawConfirmRequest): Promise<Withdrawal> {
    return this.signedOp(() => withdrawals.confirmWithdrawal(this.s, input));
  }

  /**
   * An operator at a local terminal confirming without asking the chain (decisions §6), with the
   * reason the audit log keeps. Not part of PaymentService: the API can never skip the check.
   */
  confirmWithdrawalUnverified(input: WithdrawConfirmRequest, reason: string): Promise<Withdrawal> {
    return this.signedOp(() => withdrawals.confirmWithdrawal(this.s, input, { unverifiedReason: reason }));
  }

  /**
   * What the chain says about a withdrawal's transaction (its own, or one about to confirm it);
   * changes nothing but the nonce of a signed request, which is used up like any other's.
   */
  verifyWithdrawal(input: WithdrawVerifyRequest): Promise<VerificationReport> {
    return this.signedOp(async () => {
      const report = await verification.verifyWithdrawal(this.s, input);
      if (this.deps.caller.nonce) await this.write(() => undefined);
      return report;
    });
  }

  rejectWithdrawal(input: WithdrawRejectRequest): Promise<Withdrawal> {
    return this.signedOp(() => withdrawals.rejectWithdrawal(this.s, input));
  }

  /**
   * An operator at a local terminal rejecting without asking the chain whether the withdrawal was
   * paid out, with the reason the audit log keeps. Not part of PaymentService, as confirm's.
   */
  rejectWithdrawalUnverified(input: WithdrawRejectRequest, reason: string): Promise<Withdrawal> {
    return this.signedOp(() => withdrawals.rejectWithdrawal(this.s, input, { unverifiedReason: reason }));
  }

  /** Transfers on chain that could be a withdrawal's payout (`dev pay-out` asks before it sends); null on a chain without an rpcUrl. */
  async payoutOnChain(id: string, mchId?: string): Promise<verification.PayoutLookup | null> {
    const w = withdrawals.findWithdrawal(this.s.db, mchId, id);
    return verification.lookForPayout(this.s, w, 'nothing was sent');
  }

  async getWithdrawal(id: string, mchId?: string): Promise<WithdrawalDetail> {
    return this.signedRead(() => withdrawals.getWithdrawal(this.s, id, mchId));
  }

  async listWithdrawals(filter: withdrawals.WithdrawalFilter & { cursor?: string; limit?: number }): Promise<ListedWithdrawal[]> {
    return this.signedRead(() => (filter.cursor ? withdrawals.pageWithdrawals(this.s, filter).items : withdrawals.listWithdrawals(this.s, filter)), filter.mchId);
  }

  async pageWithdrawals(filter: withdrawals.WithdrawalFilter & { limit?: number; cursor?: string }): Promise<Page<ListedWithdrawal>> {
    return this.signedRead(() => withdrawals.pageWithdrawals(this.s, filter), filter.mchId);
  }

  // ---------------------------------------------------------------- callbacks (the outbox)

  async listCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<CallbackView[]> {
    return this.signedRead(() => (filter.cursor ? outbox.pageCallbacks(this.s.db, filter).items : outbox.listCallbacks(this.s.db, filter)), filter.mchId);
  }

  async pageCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<Page<CallbackView>> {
    return this.signedRead(() => outbox.pageCallbacks(this.s.db, filter), filter.mchId);
  }

  async showCallback(id: string, mchId?: string): Promise<CallbackShow> {
    return this.signedRead(() => outbox.showCallback(this.s.db, id, mchId));
  }

  // ---------------------------------------------------------------- balances, audit, invariants

  /** With `known`, a uid without any activity is refused rather than shown as zeros (issue #15 item 2). */
  async balance(uid: string, opts: { asset?: string; mchId?: string; known?: boolean } = {}): Promise<BalanceView> {
    return this.signedRead(() => balance(this.s, uid, opts));
  }

  /** Whether the merchant (by id) ever saw this uid; when not, its uids like it (balance adjust's question). */
  userSeen(uid: string, mchId: string): { seen: boolean; like: string[] } {
    return userSeen(this.s, mchId, uid);
  }

  adjustBalance(input: { uid: string; amount: string; reason: string; asset?: string; mchId?: string }): Promise<BalanceView & { change: string }> {
    return adjustBalance(this.s, input);
  }

  async log(filter: LogFilter & { cursor?: string; limit?: number }): Promise<AuditView[]> {
    return this.signedRead(() => (filter.cursor ? pageLog(this.s, filter).items : readLog(this.s, filter)), filter.mchId);
  }

  async pageLog(filter: LogFilter & { limit?: number; cursor?: string }): Promise<Page<AuditView>> {
    return this.signedRead(() => pageLog(this.s, filter), filter.mchId);
  }

  /** `log --follow`: the entries after `after`, oldest first, or the newest `limit` without it. */
  async followLog(filter: LogFilter & { after?: number; limit?: number }): Promise<LogFollow> {
    return this.signedRead(() => followLog(this.s, filter), filter.mchId);
  }

  /** `cryptopay summary`: the ledger at a glance, of one merchant or of all. */
  async summary(opts: { mchId?: string } = {}): Promise<Summary> {
    const registry = await this.registry();
    const chainName = (id: string) => {
      try {
        return registry.chain(id).name;
      } catch {
        return null;
      }
    };
    return this.signedRead(() => summarize(this.s, { mchId: opts.mchId, chainName }), opts.mchId);
  }

  /** Every invariant of the ledger; an empty list means all hold. */
  async check(): Promise<string[]> {
    return checkLedger(this.s);
  }
}
