import { and, asc, eq, inArray, isNull, or } from 'drizzle-orm';
import { conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount } from '../core/money.js';
import type { HeldPaymentView, OrderDetail } from '../core/types.js';
import { accountId, audit, postTransfer, type Q } from './ledger.js';
import { getOrder } from './orders.js';
import { normalizeTxHash, recordPayment, refuseTestMoney } from './payments.js';
import { chainPayments, orders, payments } from './schema.js';
import { holdReturnedTxKey, txKey } from './tx-keys.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

/**
 * Payments found on chain more than 24 hours after their order expired (decisions §6b): the
 * watcher keeps them as `held`, uncredited. An operator lists them, then either credits one
 * (through the ledger's one recordPayment, as the watcher would have) or records that it was
 * sent back; both with a reason in the audit log. A decided payment is never decided again.
 *
 * A payment the ledger *refused* (its transaction already confirms a withdrawal, decisions §6)
 * is decided the same two ways: sent back, or credited to the order's user. It cannot be recorded
 * as the order's payment (one transaction, one use), so crediting it is a credit of the user by
 * hand, tied to the payment in the same transaction: the order's status does not change, and
 * the payment becomes `credited` so that it is not decided, or counted by `summary`, again.
 */

export type { HeldPaymentView };

export interface HeldPaymentRef {
  orderId: string;
  txHash: string;
  /** Needed only when the transaction paid the order more than once. */
  logIndex?: number;
  mchId?: string;
  reason: string;
}

const columns = {
  orderId: chainPayments.orderId, oid: orders.oid, uid: orders.uid, mchId: orders.merchantId, chainId: chainPayments.chainId,
  txHash: chainPayments.txHash, logIndex: chainPayments.logIndex, blockNumber: chainPayments.blockNumber, token: chainPayments.token,
  amount: chainPayments.amount, asset: orders.asset, rawAmount: chainPayments.rawAmount, expiredAt: orders.expiredAt, heldAt: chainPayments.countedAt,
};

function view(r: Omit<HeldPaymentView, 'amount'> & { amount: bigint }): HeldPaymentView {
  return { ...r, amount: formatAmount(r.amount, decimalsOf(r.asset)) };
}

export function listHeld(s: StoreCtx, filter: { mchId?: string; orderId?: string }): HeldPaymentView[] {
  const where = [eq(chainPayments.status, 'held')];
  if (filter.mchId) where.push(eq(orders.merchantId, filter.mchId));
  if (filter.orderId) where.push(eq(chainPayments.orderId, filter.orderId));
  return s.db
    .select(columns)
    .from(chainPayments)
    .innerJoin(orders, eq(orders.id, chainPayments.orderId))
    .where(and(...where))
    .orderBy(asc(chainPayments.countedAt), asc(chainPayments.blockNumber), asc(chainPayments.logIndex))
    .all()
    .map(view);
}

/** A held or refused payment, and which. */
export type DecidablePayment = HeldPaymentView & { refused: boolean };
type Found = DecidablePayment;

/** The one held (or refused) payment a reference names, inside the deciding transaction. */
function findHeld(tx: Q, ref: HeldPaymentRef): Found {
  const order = tx.select({ id: orders.id }).from(orders).where(ref.mchId ? and(eq(orders.id, ref.orderId), eq(orders.merchantId, ref.mchId)) : eq(orders.id, ref.orderId)).get();
  if (!order) throw notFound('Order not found');
  // Stored as the chain's users write it (0x on EVM, bare on TRON); the operator may write either.
  const key = ref.txHash.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{64}$/.test(key)) throw invalid('tx-hash must be a transaction hash: 64 hex digits, 0x accepted');
  const hash = ref.txHash.toLowerCase();
  const rows = tx
    .select({ ...columns, status: chainPayments.status })
    .from(chainPayments)
    .innerJoin(orders, eq(orders.id, chainPayments.orderId))
    .where(and(eq(chainPayments.orderId, ref.orderId), inArray(chainPayments.txHash, [key, `0x${key}`]), ...(ref.logIndex === undefined ? [] : [eq(chainPayments.logIndex, ref.logIndex)])))
    .orderBy(asc(chainPayments.logIndex))
    .all();
  const held = rows.filter((r) => r.status === 'held' || r.status === 'refused');
  const where = `tx ${hash}${ref.logIndex === undefined ? '' : ` log ${ref.logIndex}`} to order ${ref.orderId}`;
  if (held.length === 0) {
    if (rows.length > 0) throw conflict(`the payment in ${where} is ${rows[0]!.status}, not held: nothing was changed`);
    throw notFound(`no payment in ${where} was seen on chain (cryptopay order held lists the held ones)`);
  }
  if (held.length > 1) throw invalid(`${where} holds ${held.length} held payments (logs ${held.map((r) => r.logIndex).join(', ')}): give --log-index`);
  const { status, ...row } = held[0]!;
  return { ...view(row), refused: status === 'refused' };
}


function decide(tx: Q, p: Found, status: 'counted' | 'returned' | 'credited'): void {
  const changed = tx
    .update(chainPayments)
    .set({ status })
    .where(and(eq(chainPayments.chainId, p.chainId), eq(chainPayments.txHash, p.txHash), eq(chainPayments.logIndex, p.logIndex), eq(chainPayments.status, p.refused ? 'refused' : 'held')))
    .run().changes;
  if (changed !== 1) throw conflict(`the payment in tx ${p.txHash} log ${p.logIndex} is no longer held: nothing was changed`);
}

/** A held payment that an operator had recorded by hand: what was recorded, and what the chain moved. */
export interface MatchedByHand {
  amount: string;
  onChain: string;
}

/**
 * Credits a held payment to the order's user, as a late payment (decisions §6b). One recorded by
 * hand before is matched to that record instead, and the answer says so (`recordedByHand`).
 */
export async function creditHeld(s: StoreCtx, ref: HeldPaymentRef): Promise<OrderDetail & { recordedByHand?: MatchedByHand }> {
  if (!ref.reason.trim()) throw invalid('a reason is required');
  const now = s.now();
  let byHand: MatchedByHand | undefined;
  const registry = await s.registry();
  await s.write((tx) => {
    const p = findHeld(tx, ref);
    const chain = registry.chain(p.chainId);
    // Held or refused, a development chain's payment pays only the public test wallet's orders:
    // recordPayment checks a held one (testMoney below); a refused one is credited without it.
    if (p.refused) {
      if (chain.development) refuseTestMoney(tx, p.mchId, chain.chainType, p.chainId);
      return creditRefused(tx, p, ref.reason, now, s.caller.actor);
    }
    decide(tx, p, 'counted');
    const row = tx.select().from(chainPayments).where(and(eq(chainPayments.chainId, p.chainId), eq(chainPayments.txHash, p.txHash), eq(chainPayments.logIndex, p.logIndex))).get()!;
    const recorded = recordPayment(tx, {
      orderId: p.orderId, txHash: p.txHash, logIndex: p.logIndex, amount: row.amount, rawAmount: p.rawAmount,
      chainType: chain.chainType, chainId: p.chainId, token: p.token, blockNumber: p.blockNumber, blockHash: row.blockHash, blockTime: row.blockTime, source: 'chain',
      testMoney: chain.development === true,
    }, { now, actor: s.caller.actor });
    // Recorded by hand already: matched to that record, nothing credited now (a code review found
    // it audited as credited). The answer says so.
    if (recorded.recordedByHand) {
      const d = decimalsOf(p.asset);
      byHand = { amount: formatAmount(recorded.recordedByHand.amount, d), onChain: formatAmount(recorded.recordedByHand.onChain ?? row.amount, d) };
      return;
    }
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'order.held_payment_credited', merchantId: p.mchId, subjectType: 'order', subjectId: p.orderId,
      detail: { chainId: p.chainId, txHash: p.txHash, logIndex: p.logIndex, amount: p.amount, reason: ref.reason },
    });
  });
  const order = await getOrder(s, ref.orderId);
  return byHand ? { ...order, recordedByHand: byHand } : order;
}

/**
 * A refused payment credited to its order's user by hand: an adjustment, tied to the payment.
 * Not when the ledger already credited this transfer: this very log, or the transaction recorded
 * by hand with no log found for it yet (against another order, say): that would count one
 * transfer twice (an outside review did, for 10 USDT sent once). Other logs of the transaction,
 * credited to other orders, do not stand in the way (a code review). Its transaction confirming
 * a withdrawal is the case this is for.
 */
function creditRefused(tx: Q, p: Found, reason: string, now: number, actor: string): void {
  const key = txKey(p.txHash);
  const credited = tx.select({ id: payments.id }).from(payments)
    .where(and(eq(payments.txKey, key), or(isNull(payments.logIndex), and(eq(payments.chainId, p.chainId), eq(payments.logIndex, p.logIndex))))).get();
  if (credited) {
    throw conflict(`transaction ${p.txHash} is already credited as a payment in this ledger: crediting it again would count one transfer twice (cryptopay order find ${p.txHash} shows where; correct that payment's user with cryptopay balance adjust if it was the wrong order, then send this one back or leave it)`);
  }
  decide(tx, p, 'credited');
  const d = decimalsOf(p.asset);
  const row = tx.select({ amount: chainPayments.amount }).from(chainPayments).where(and(eq(chainPayments.chainId, p.chainId), eq(chainPayments.txHash, p.txHash), eq(chainPayments.logIndex, p.logIndex))).get()!;
  const merchantId = p.mchId;
  postTransfer(tx, {
    merchantId, asset: p.asset, amount: row.amount, kind: 'adjustment', ref: `refused:${p.chainId}:${p.txHash}:${p.logIndex}`, now, decimals: d,
    debit: accountId(tx, { merchantId, asset: p.asset, kind: 'adjustments' }),
    credit: accountId(tx, { merchantId, asset: p.asset, kind: 'user', uid: p.uid }),
  });
  audit(tx, {
    at: now, actor, action: 'order.refused_payment_credited', merchantId, subjectType: 'order', subjectId: p.orderId,
    detail: { chainId: p.chainId, txHash: p.txHash, logIndex: p.logIndex, amount: p.amount, uid: p.uid, reason },
  });
}

/**
 * Records that a held payment was sent back to its payer. The ledger never credited it, so no
 * balance moves; the return transaction, when given, is kept in the audit log.
 */
export async function returnHeld(s: StoreCtx, ref: HeldPaymentRef & { returnTx?: string }): Promise<HeldPaymentView & { returnTx: string | null }> {
  if (!ref.reason.trim()) throw invalid('a reason is required');
  const returnTx = ref.returnTx === undefined ? null : normalizeTxHash(ref.returnTx, undefined, 'return-tx');
  const now = s.now();
  return s.write((tx) => {
    const p = findHeld(tx, ref);
    // Credited by hand already (order mark-paid): its user has the money, so it was not sent back
    // (a second outside review recorded both, and the user kept 10 for a transfer returned).
    if (tx.select({ id: payments.id }).from(payments).where(and(eq(payments.orderId, p.orderId), eq(payments.txKey, txKey(p.txHash)))).get()) {
      throw conflict(`transaction ${p.txHash} was recorded by hand for order ${p.orderId} (order mark-paid): its user is credited, so it cannot be recorded as sent back; decide it with cryptopay order credit-held, which matches it to that record and credits nothing again`);
    }
    decide(tx, p, 'returned');
    holdReturnedTxKey(tx, p.txHash, now);
    audit(tx, {
      at: now, actor: s.caller.actor, action: p.refused ? 'order.refused_payment_returned' : 'order.held_payment_returned', merchantId: p.mchId, subjectType: 'order', subjectId: p.orderId,
      detail: { chainId: p.chainId, txHash: p.txHash, logIndex: p.logIndex, amount: p.amount, reason: ref.reason, returnTx },
    });
    const { refused: _r, ...shown } = p;
    return { ...shown, returnTx };
  });
}

/** The held or refused payment a reference names, for a question before deciding it; undefined when it names none (deciding then says why). */
export function peekDecidable(s: StoreCtx, ref: HeldPaymentRef): DecidablePayment | undefined {
  try {
    return findHeld(s.db, ref);
  } catch {
    return undefined;
  }
}
