import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { isTxHash } from '../chains/tx-hash.js';
import { conflict, invalid, notFound } from '../core/errors.js';
import { MAX_LEDGER_AMOUNT, formatAmount, parseAmount, tooLarge } from '../core/money.js';
import { readStatus, statusFor, type StoredOrderStatus } from '../core/state.js';
import type { Registry } from '../chains/registry.js';
import type { ChainType, OrderDetail } from '../core/types.js';
import { accountId, audit, postTransfer, sessionOf, type Q } from './ledger.js';
import { getOrder } from './orders.js';
import { orderPaidEvent } from './outbox.js';
import { chainPayments, merchants, orders, payments } from './schema.js';
import { PUBLIC_TEST_XPUBS } from '../chains/sandbox/public-wallet.js';
import { alreadyRecorded, claimTxKey, shareTxKey, txKey as txKeyOf } from './tx-keys.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

export interface MarkPaidInput {
  id: string;
  txHash: string;
  amount?: string;
  /**
   * What the operator was shown as paid so far (`order mark-paid`'s question, whose default amount
   * is what was then due): refused when a payment came in meanwhile, which would credit the user
   * for the same due twice (code review).
   */
  paidBefore?: string;
  chainType?: string;
  chainId?: string;
  token?: string;
  /**
   * Why the chain is not asked (kept in the audit entry): a payment on a chain with an rpcUrl is
   * otherwise read there first and refused unless it paid this order (src/store/payment-on-chain.ts).
   */
  unverified?: string;
}

/** A payment into an order, whoever found it: an operator (`order mark-paid`) or the chain watcher. */
export interface PaymentRecord {
  orderId: string;
  /** As given; validated and canonicalised by the caller for its chain type. */
  txHash: string;
  /** The Transfer log's index in its transaction; null for a payment recorded by hand. */
  logIndex: number | null;
  /** Credited, in the order's asset base units (already rounded down to the asset). */
  amount: bigint;
  /** The on-chain amount in the token's base units; null when recorded by hand. */
  rawAmount: string | null;
  chainType: ChainType | null;
  chainId: string | null;
  token: string | null;
  blockNumber: number | null;
  blockHash: string | null;
  /**
   * When the payment arrived on chain (its block's timestamp, ms): late is judged by it. Null or
   * absent when it is not known (a payment recorded by hand): then by the time it is recorded.
   */
  blockTime?: number | null;
  source: 'manual' | 'chain';
  /**
   * Made on a development chain (the sandbox of `serve --dev`), whose token anyone can mint: it
   * pays only orders of a merchant on the public test wallet (src/chains/sandbox/public-wallet.ts).
   */
  testMoney?: boolean;
  /** Added to the audit entry's detail: how a payment recorded by hand was checked (`order mark-paid`). */
  checked?: { verifiedOnChain: true } | { unverified: string };
}

export interface RecordedPayment {
  orderId: string;
  status: string;
  late: boolean;
  /**
   * A payment found on chain that an operator had already recorded by hand for this order (same
   * transaction): what was recorded then, and (at the first of the transaction's logs to this
   * order) what all of them moved. Nothing was credited now.
   */
  recordedByHand?: { amount: bigint; onChain?: bigint };
}

/** recordPayment's statements, prepared once per connection (the watcher counts thousands in a row). */
function preparePaymentStatements(tx: Q) {
  const p = sql.placeholder;
  return {
    order: tx.select().from(orders).where(eq(orders.id, p('id'))).prepare(),
    wallet: tx.select({ evm: merchants.evmXpub, tron: merchants.tronXpub }).from(merchants).where(eq(merchants.id, p('id'))).prepare(),
    byHand: tx.select({ id: payments.id, amount: payments.amount, chainId: payments.chainId, logIndex: payments.logIndex }).from(payments)
      .where(and(eq(payments.orderId, p('orderId')), eq(payments.txKey, p('txKey')), eq(payments.source, 'manual'))).prepare(),
    // Every log of one transaction to one order, as the watcher stored them (all in one block).
    logsToOrder: tx.select({
      logIndex: chainPayments.logIndex, amount: chainPayments.amount, rawAmount: chainPayments.rawAmount, token: chainPayments.token,
      blockNumber: chainPayments.blockNumber, blockHash: chainPayments.blockHash,
    }).from(chainPayments)
      .where(and(eq(chainPayments.chainId, p('chainId')), eq(chainPayments.txHash, p('txHash')), eq(chainPayments.orderId, p('orderId'))))
      .orderBy(asc(chainPayments.logIndex)).prepare(),
    // Records by hand of this transaction, for other orders, not yet matched to a log.
    othersByHand: tx.select({ id: payments.id, amount: payments.amount, orderId: payments.orderId, merchantId: orders.merchantId, asset: orders.asset }).from(payments)
      .innerJoin(orders, eq(orders.id, payments.orderId))
      .where(and(eq(payments.txKey, p('txKey')), eq(payments.source, 'manual'), sql`${payments.logIndex} is null`, sql`(${payments.chainId} is null or ${payments.chainId} = ${p('chainId')})`, sql`${payments.orderId} <> ${p('orderId')}`)).prepare(),
    linkByHand: tx.update(payments).set({
      logIndex: sql`${p('logIndex')}`, rawAmount: sql`${p('rawAmount')}`, chainType: sql`${p('chainType')}`, chainId: sql`${p('chainId')}`,
      token: sql`${p('token')}`, blockNumber: sql`${p('blockNumber')}`, blockHash: sql`${p('blockHash')}`,
    }).where(eq(payments.id, p('id'))).prepare(),
    seen: tx.select({ id: payments.id }).from(payments)
      .where(and(eq(payments.chainId, p('chainId')), eq(payments.txKey, p('txKey')), eq(payments.logIndex, p('logIndex')))).prepare(),
    insert: tx.insert(payments).values({
      orderId: p('orderId'), merchantId: p('merchantId'), txHash: p('txHash'), txKey: p('txKey'), logIndex: p('logIndex'), amount: p('amount'), rawAmount: p('rawAmount'),
      chainType: p('chainType'), chainId: p('chainId'), token: p('token'), blockNumber: p('blockNumber'), blockHash: p('blockHash'),
      blockTime: p('blockTime'), late: p('late'), source: p('source'), transferId: p('transferId'), createdAt: p('createdAt'),
    }).prepare(),
    // A set of placeholders has no column encoder: late goes as 0 or 1.
    update: tx.update(orders).set({ paidAmount: sql`${p('paidAmount')}`, status: sql`${p('status')}`, late: sql`${p('late')}`, paidAt: sql`${p('paidAt')}` })
      .where(eq(orders.id, p('id'))).prepare(),
  };
}
const paymentStatements = new WeakMap<object, ReturnType<typeof preparePaymentStatements>>();
function paymentStmts(tx: Q) {
  let st = paymentStatements.get(sessionOf(tx));
  if (!st) paymentStatements.set(sessionOf(tx), (st = preparePaymentStatements(tx)));
  return st;
}

/**
 * The one function that records a payment (decisions §3, §6b): credits the order's user and
 * moves the order's paid total and status, with its audit entry, in the caller's transaction.
 */
export function recordPayment(tx: Q, p: PaymentRecord, ctx: { now: number; actor: string }): RecordedPayment {
  const { now } = ctx;
  const st = paymentStmts(tx);
  const o = st.order.get({ id: p.orderId });
  if (!o) throw notFound('Order not found');
  if (p.testMoney) refuseTestMoney(tx, o.merchantId, p.chainType, p.chainId);
  const d = decimalsOf(o.asset);
  if (p.source === 'chain' && p.logIndex !== null) {
    const byHand = matchRecordedByHand(tx, o, p, ctx);
    if (byHand) return byHand;
  }
  const txKey = claimTxKey(tx, p.txHash, 'payment', { shared: p.source === 'chain' && p.logIndex !== null, now, merchantId: o.merchantId });
  if (p.logIndex !== null) {
    const seen = st.seen.get({ chainId: p.chainId ?? '', txKey, logIndex: p.logIndex });
    if (seen) throw alreadyRecorded(p.txHash);
  }
  if (p.amount <= 0n) throw invalid('a payment must be positive');
  if (p.amount > MAX_LEDGER_AMOUNT) throw conflict(tooLarge('the payment', p.amount, d));
  const paid = o.paidAmount + p.amount;
  if (paid > MAX_LEDGER_AMOUNT) throw conflict(tooLarge(`order ${o.id}'s paid total`, paid, d));
  // Decisions §6b: late means it arrived after expiredAt. The block's time says when it arrived;
  // without one (by hand, nothing seen on chain) the moment it is recorded stands in for it.
  const arrivedAt = p.blockTime ?? now;
  const late = arrivedAt > o.expiredAt;
  const transferId = postTransfer(tx, {
    merchantId: o.merchantId, asset: o.asset, amount: p.amount, kind: 'payment', ref: o.id, now, decimals: d,
    debit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'payments' }),
    credit: accountId(tx, { merchantId: o.merchantId, asset: o.asset, kind: 'user', uid: o.uid }),
  });
  st.insert.run({
    orderId: o.id, merchantId: o.merchantId, txHash: p.txHash, txKey, logIndex: p.logIndex, amount: p.amount, rawAmount: p.rawAmount, chainType: p.chainType, chainId: p.chainId,
    token: p.token, blockNumber: p.blockNumber, blockHash: p.blockHash, blockTime: p.blockTime ?? null, late, source: p.source, transferId, createdAt: now,
  });
  const status = statusFor(o.amount, paid, o.refundedAmount, o.status as StoredOrderStatus);
  // From unpaid, and from REFUNDED too: a payment after a full refund that covers the amount
  // again makes the order PAID again (statusFor), and the merchant, last told order.refunded,
  // must hear it.
  const becamePaid = status === 'PAID' && o.status !== 'PAID';
  const paidAt = becamePaid ? now : o.paidAt;
  st.update.run({ paidAmount: paid, status, late: o.late || (becamePaid && late) ? 1 : 0, paidAt, id: o.id });
  // The merchant hears of the order becoming PAID in this same transaction (decisions §9): a
  // payment that completes an underpaid order too, one after expiry, marked late, and one into
  // a refunded order.
  if (becamePaid) {
    orderPaidEvent(tx, o, { status, late: o.late || late, paidAmount: paid, paidAt: now, txHash: p.txHash, chainType: p.chainType, chainId: p.chainId, token: p.token }, now);
  }
  audit(tx, {
    at: now, actor: ctx.actor, action: 'order.payment_recorded', merchantId: o.merchantId, subjectType: 'order', subjectId: o.id,
    detail: {
      txHash: p.txHash, amount: formatAmount(p.amount, d), paidTotal: formatAmount(paid, d), statusBefore: readStatus(o.status, o.expiredAt, now),
      statusAfter: status, late, ...(p.blockTime != null ? { blockTime: p.blockTime } : {}), chainType: p.chainType, chainId: p.chainId, token: p.token,
      ...p.checked,
    },
  });
  return { orderId: o.id, status, late };
}

/**
 * A transfer found on chain whose transaction an operator already recorded by hand for this same
 * order (`order mark-paid`, on this chain or on none named) is that payment, seen on chain: the
 * payment recorded by hand takes the chain's facts (log, raw amount, chain, token, block) and
 * nothing is credited again. It used to be refused (the hash was taken), and an operator who then
 * credited the refused payment paid the user twice for one transfer (an outside review).
 *
 * - The transaction's other logs to this order are covered by the same record (counted, nothing
 *   credited); what the record is compared with is what all of them moved. When that differs
 *   from what was typed, the difference is the operator's to settle (`balance adjust`): the
 *   audit entry and serve's log say both amounts; the ledger takes nothing back on its own.
 * - Its logs to other orders are theirs: once the record is matched, the transaction's key is
 *   shared as a payment found on chain is, and they are counted as usual (a code review found
 *   them refused, and then not creditable by hand either).
 */
function matchRecordedByHand(tx: Q, o: { id: string; merchantId: string; asset: string; status: string }, p: PaymentRecord, ctx: { now: number; actor: string }): RecordedPayment | undefined {
  const st = paymentStmts(tx);
  const key = txKeyOf(p.txHash);
  // Another order's record of this transaction first, whatever the order of the logs: once it
  // is matched, the key is shared and this log counts as usual (a second review found it
  // refused when its log came before the recorded order's).
  for (const other of st.othersByHand.all({ txKey: key, chainId: p.chainId ?? '', orderId: o.id })) {
    linkHandRecord(tx, other, { id: other.orderId, merchantId: other.merchantId, asset: other.asset }, p, ctx);
  }
  const found = st.byHand.get({ orderId: o.id, txKey: key });
  if (!found || (found.chainId !== null && found.chainId !== p.chainId)) return undefined;
  const covered = { orderId: o.id, status: o.status, late: false };
  if (found.logIndex !== null) return { ...covered, recordedByHand: { amount: found.amount } };
  const onChain = linkHandRecord(tx, found, o, p, ctx) ?? p.amount;
  return { ...covered, recordedByHand: { amount: found.amount, onChain } };
}

/**
 * Matches a record by hand of `order` to the transaction's logs to that order on this chain (the
 * first log's facts go to the record), shares the key, and audits both amounts. Undefined, and
 * nothing done, when the transaction has no log to that order (recorded against the wrong order).
 */
function linkHandRecord(tx: Q, found: { id: number; amount: bigint }, order: { id: string; merchantId: string; asset: string }, p: PaymentRecord, ctx: { now: number; actor: string }): bigint | undefined {
  const st = paymentStmts(tx);
  const logs = st.logsToOrder.all({ chainId: p.chainId ?? '', txHash: p.txHash, orderId: order.id });
  const first = logs[0];
  if (!first) return undefined;
  st.linkByHand.run({
    id: found.id, logIndex: first.logIndex, rawAmount: first.rawAmount, chainType: p.chainType, chainId: p.chainId, token: first.token, blockNumber: first.blockNumber, blockHash: first.blockHash,
  });
  shareTxKey(tx, p.txHash);
  const onChain = logs.reduce((sum, l) => sum + l.amount, 0n);
  const d = decimalsOf(order.asset);
  audit(tx, {
    at: ctx.now, actor: ctx.actor, action: 'order.payment_seen_on_chain', merchantId: order.merchantId, subjectType: 'order', subjectId: order.id,
    detail: {
      txHash: p.txHash, chainId: p.chainId, logs: logs.map((l) => l.logIndex), recordedByHand: formatAmount(found.amount, d), onChain: formatAmount(onChain, d),
      ...(found.amount !== onChain ? { difference: formatAmount(onChain - found.amount, d) } : {}),
    },
  });
  return onChain;
}

/** The merchant's wallet on that chain type is the public test wallet's (serve --dev's merchant). */
export function onPublicTestWallet(tx: Q, merchantId: string, chainType: ChainType | 'any' | null): boolean {
  const w = paymentStmts(tx).wallet.get({ id: merchantId });
  const evm = w?.evm === PUBLIC_TEST_XPUBS.EVM;
  const tron = w?.tron === PUBLIC_TEST_XPUBS.TRON;
  // 'any': either of its xpubs is the public one (a balance does not say which chain filled it).
  return chainType === 'any' ? evm || tron : chainType === 'TRON' ? tron : evm;
}

/**
 * A payment in a development chain's token (anyone can mint it) credits only a merchant whose
 * wallet on that chain type is the public test wallet's: a user credited with worthless tokens
 * could withdraw the merchant's real ones. The xpub of the payment's own chain type, not either
 * (a merchant with a real EVM wallet and the public TRON one is real on EVM). Also for a held
 * or refused payment an operator credits by hand (src/store/held-payments.ts).
 */
export function refuseTestMoney(tx: Q, merchantId: string, chainType: ChainType | null, chainId: string | null): void {
  if (!onPublicTestWallet(tx, merchantId, chainType)) {
    throw conflict(`chain ${chainId} is a development chain, whose test token anyone can mint: it pays only orders of the public test wallet's merchant (serve --dev), not merchant ${merchantId}'s`);
  }
}

/**
 * Where a payment recorded by hand was made, as the registry knows it: the chain (its type from
 * the chain when only the id is given) and the token. Refuses a chain or token the registry does
 * not know, a type that is not the chain's, a token without its chain. `order mark-paid` asks
 * it before its question, and markPaid again.
 */
export function paymentChain(registry: Registry | undefined, input: Pick<MarkPaidInput, 'chainType' | 'chainId' | 'token'>): { chainType: ChainType | null; chainId: string | null; token: string | null } {
  let chainType: ChainType | null = (input.chainType as ChainType | undefined) ?? null;
  if (chainType && chainType !== 'EVM' && chainType !== 'TRON') throw invalid('chain-type must be EVM or TRON');
  if (input.chainId === undefined) {
    if (input.token !== undefined) throw invalid('token needs chain-id');
    return { chainType, chainId: null, token: null };
  }
  if (!registry) throw new Error('a payment on a named chain needs the registry');
  const chain = registry.chain(input.chainId);
  if (chainType && chain.chainType !== chainType) throw invalid(`chain ${chain.chainId} is a${chain.chainType === 'EVM' ? 'n' : ''} ${chain.chainType} chain, not ${chainType}`);
  chainType = chain.chainType;
  const token = input.token === undefined ? null : registry.token(chain.chainId, input.token).address;
  return { chainType, chainId: chain.chainId, token };
}

/**
 * Why a payment recorded by hand needs its amount: without one it records what is still due, and
 * on an order paid in full (or refunded) nothing is. A new-user trial double-credited a user with
 * the old default, the whole order amount again.
 */
export function nothingDue(orderId: string, status: string, field: string): string {
  return `${field} is required: order ${orderId} is ${status} and nothing is due (give the amount of this payment to record it anyway, say an overpayment); nothing was changed`;
}

/**
 * A transaction hash in the form of its chain type: a TRON hash may come with one 0x (as explorers
 * and EVM tools write it) and is kept without; then normalizeTxHash's rules.
 */
export function hashOnChain(value: unknown, chainType: ChainType | undefined, field: string): string {
  const v = chainType === 'TRON' && typeof value === 'string' && /^0[xX][0-9a-fA-F]{64}$/.test(value) ? value.slice(2) : value;
  return normalizeTxHash(v, chainType, field);
}

/** Records a payment by hand (decisions §3, §6b): credits the user; PAID once paid in full. */
export async function markPaid(s: StoreCtx, input: MarkPaidInput): Promise<OrderDetail> {
  const now = s.now();
  const registry = input.chainId === undefined ? undefined : await s.registry();
  const { chainType, chainId, token } = paymentChain(registry, input);
  const testMoney = chainId !== null && registry?.chain(chainId).development === true;
  // After the chain is known, so a chain id alone also fixes the hash form (TRON has no 0x).
  const txHash = hashOnChain(input.txHash, chainType ?? undefined, 'tx-hash');
  if (input.unverified !== undefined && !input.unverified.trim()) throw invalid('unverified needs a reason: why the chain is not asked (kept in the audit log)');
  // Read here even when the CLI read it before its question: that question may have waited for
  // minutes, and what is recorded is what the chain says now.
  const onChain = chainId !== null && input.unverified === undefined
    ? await (await import('./payment-on-chain.js')).paidOnChain(s, registry!, { orderId: input.id, chain: registry!.chain(chainId), txHash, token, amount: input.amount })
    : null;
  const id = await s.write((tx) => {
    const o = tx.select({ asset: orders.asset, amount: orders.amount, paid: orders.paidAmount, status: orders.status, expiredAt: orders.expiredAt })
      .from(orders).where(eq(orders.id, input.id)).get();
    if (!o) throw notFound('Order not found');
    refuseReturned(tx, input.id, txHash);
    const paidNow = formatAmount(o.paid, decimalsOf(o.asset));
    if (input.paidBefore !== undefined && paidNow !== input.paidBefore) {
      throw conflict(`order ${input.id} was paid meanwhile (${paidNow} ${o.asset} so far, ${input.paidBefore} when asked): nothing was changed; look again (cryptopay order show ${input.id})`);
    }
    let amount: bigint;
    // What the chain says (paidOnChain refused any other amount given), else the operator's.
    if (onChain) amount = onChain.amount;
    else if (input.amount !== undefined) amount = parseAmount(input.amount, decimalsOf(o.asset));
    else {
      // What is still due, as the operator saw it in the question; nothing due is not a default.
      amount = o.amount - o.paid;
      if (amount <= 0n) throw invalid(nothingDue(input.id, readStatus(o.status as StoredOrderStatus, o.expiredAt, now), 'amount'));
    }
    return recordPayment(tx, {
      orderId: input.id, txHash, logIndex: null, amount, rawAmount: null, chainType, chainId, token, blockNumber: null, blockHash: null,
      blockTime: seenBlockTime(tx, input.id, txHash, chainId) ?? onChain?.blockTime ?? null, source: 'manual', testMoney,
      ...(onChain ? { checked: { verifiedOnChain: true as const } } : input.unverified !== undefined ? { checked: { unverified: input.unverified.trim() } } : {}),
    }, { now, actor: s.caller.actor }).orderId;
  });
  return getOrder(s, id);
}

/**
 * A transfer to this order that the watcher saw and an operator recorded as sent back to its
 * payer (`order return-held`) is not credited by hand afterwards (a second outside review did,
 * and the user kept the money of a transfer returned). Looked up by the order (indexed).
 */
function refuseReturned(tx: Q, orderId: string, txHash: string): void {
  const key = txKeyOf(txHash);
  const returned = tx.select({ orderId: chainPayments.orderId }).from(chainPayments)
    .where(and(eq(chainPayments.orderId, orderId), inArray(chainPayments.txHash, [key, `0x${key}`]), eq(chainPayments.status, 'returned'))).get();
  if (returned) throw conflict(`transaction ${txHash} was seen on chain and recorded as sent back to its payer (cryptopay log --order ${orderId}): it is not credited by hand`);
}

/**
 * The block time of this transaction, if the watcher saw it paying this order: an operator who
 * records such a payment by hand gets it judged late by when it arrived, as the watcher would.
 */
function seenBlockTime(tx: Q, orderId: string, txHash: string, chainId: string | null): number | null {
  const key = txKeyOf(txHash);
  const rows = tx.select({ t: chainPayments.blockTime, chainId: chainPayments.chainId }).from(chainPayments)
    .where(and(eq(chainPayments.orderId, orderId), inArray(chainPayments.txHash, [key, `0x${key}`]))).all()
    .filter((r) => r.t !== null && (chainId === null || r.chainId === chainId));
  return rows.length ? Math.min(...rows.map((r) => r.t!)) : null;
}

export function normalizeTxHash(value: unknown, chainType: ChainType | undefined, field: string): string {
  if (typeof value !== 'string' || !value) throw invalid(`${field} is required`);
  const ok = chainType ? isTxHash(chainType, value) : isTxHash('EVM', value) || isTxHash('TRON', value);
  if (!ok) {
    const form = chainType === 'TRON' ? '64 hex digits' : chainType === 'EVM' ? '0x and 64 hex digits' : '0x and 64 hex digits (EVM) or 64 hex digits (TRON)';
    throw invalid(`${field} must be a transaction hash: ${form}`);
  }
  // A placeholder, not a hash: 2^-256 of a chance that a transaction has it.
  if (/^(0x)?0{64}$/i.test(value)) throw invalid(`${field} is all zeros: no transaction has that hash`);
  return value.toLowerCase();
}
