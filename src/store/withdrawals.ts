import { and, desc, eq, gte, isNull, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { ChainCheck } from '../chains/withdrawal-check.js';
import { conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount, parseAmount, toTokenUnits } from '../core/money.js';
import { alreadyRecorded, claimTxKey, payoutsNaming, txKey, txKeyTaken } from './tx-keys.js';
import { refuseReorgedUser } from './reorg-holds.js';
import { inwardUrlsAllowed } from './inward-urls.js';
import type { WithdrawApplyRequest, WithdrawConfirmRequest, WithdrawRejectRequest } from '../core/schemas.js';
import { withdrawalAfter } from '../core/state.js';
import type { ChainType, ListedWithdrawal, Withdrawal, WithdrawalDetail, WithdrawalStatus } from '../core/types.js';
import { accountId, audit, holdTransfer, resolvePending, type Q } from './ledger.js';
import { findMerchant } from './merchants.js';
import { withdrawalEvent } from './outbox.js';
import { hashOnChain, onPublicTestWallet } from './payments.js';
import { afterCursor, pageOf, type Page } from './paging.js';
import { addressMatch } from './address-match.js';
import { orderAddresses, withdrawals } from './schema.js';
import { decimalsOf, type StoreCtx } from './store-context.js';
import { checkPayout, foundPayoutText, lookForPayout, type PayoutLookup } from './withdrawal-verification.js';
import { sameAddress } from '../core/words.js';

export type WithdrawalRow = typeof withdrawals.$inferSelect;

const heavy = () => import('./heavy.js');

export async function applyWithdrawal(s: StoreCtx, input: WithdrawApplyRequest): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawApplySchema, input);
  if (req.notifyUrl && !inwardUrlsAllowed(s, req.mchId)) {
    const guard = await import('../callbacks/guard.js');
    guard.checkNotifyUrl(req.notifyUrl, 'notifyUrl', guard.privateHint(s.privateSwitch));
  }
  const registry = await s.registry();
  const chain = registry.chain(req.chainId);
  if (chain.chainType !== req.chainType) {
    throw invalid(`chainType ${req.chainType} does not match chain ${chain.chainId} (${chain.name} is ${chain.chainType})`);
  }
  const token = registry.token(chain.chainId, req.token);
  const assetDecimals = decimalsOf(token.asset);
  parseAmount(req.amount, h.maxDecimals(token));
  const amount = parseAmount(req.amount, assetDecimals);
  const to = h.validateAddress(chain.chainType, req.to, 'to');
  if (isZeroAddress(chain.chainType, to)) throw invalid('to is the zero address: nobody can spend what is sent there');
  // A token contract holds no key: tokens transferred to it (this token's, or another's of the
  // chain this service knows) are as lost as at the zero address.
  const sink = registry.findToken(chain.chainId, to);
  if (sink === token) throw invalid(`to is the contract of the token ${token.address} itself: what is sent there is lost`);
  if (sink) throw invalid(`to is the contract of the token ${sink.symbol} ${sink.address} on this chain: what is sent there is lost`);
  const now = s.now();
  return s.write((tx) => {
    assertNotDepositAddress(tx, chain.chainType, to);
    const m = findMerchant(s, tx, req.mchId);
    refuseTestPayout(tx, m.id, chain);
    refuseReorgedUser(tx, m.id, req.uid);
    const id = s.randomId('wd');
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
      at: now, actor: s.caller.actor, action: 'withdrawal.applied', merchantId: m.id, subjectType: 'withdrawal', subjectId: id,
      detail: { uid: req.uid, amount: formatAmount(amount, assetDecimals), to, chainId: chain.chainId, token: token.address },
    });
    return withdrawalView(row);
  });
}

const ZERO_HASH20 = '0'.repeat(40);
/** The 20-byte zero key hash: 0x000…0 on EVM, its 0x41-prefixed base58check on TRON. */
function isZeroAddress(chainType: ChainType, to: string): boolean {
  if (chainType === 'EVM') return to.slice(2) === ZERO_HASH20;
  return to === TRON_ZERO;
}
const TRON_ZERO = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

/**
 * A payout may not go to an address the ledger gave out for an order, any merchant's: the chain
 * watcher counts a transfer there as that order's payment (its transaction then belongs to a
 * payment, so the withdrawal could never be confirmed, and rejecting it released the hold on top
 * of the payment: the user credited twice). Addresses are unique across merchants; the other
 * merchant's order is not named.
 */
function assertNotDepositAddress(tx: Q, chainType: ChainType, to: string): void {
  if (tx.select({ one: sql`1` }).from(orderAddresses).where(addressMatch(chainType, to)).get()) {
    throw invalid('to is a payment address this service gave out for an order: a transfer there is counted as a payment into the ledger, not as a payout');
  }
}

/**
 * Test money and real money never meet in a payout: the mirror of refuseTestMoney for payments.
 *
 * - A development chain's token is minted by anyone (serve --dev's anvil): a payout there is
 *   worth nothing, so it may settle only a withdrawal of the public test wallet's merchant, whose
 *   users were credited with that same test money. For a real merchant it would debit a user's
 *   real balance against a transfer anyone can make, "verified" on chain (an outside review).
 * - The other way round (outside review, session 20): the public test wallet's merchant pays out
 *   on development chains only. Its users' balances are one asset ("USDT") whichever chain
 *   credited them, and that chain was a development one: a payout on a real chain would send
 *   real tokens for minted ones. Either of its two xpubs being the public one is enough: a
 *   balance does not say which chain type filled it.
 */
function refuseTestPayout(tx: Q, merchantId: string, chain: { chainId: string; chainType: ChainType; development?: boolean }, tail = ''): void {
  if (chain.development) {
    if (onPublicTestWallet(tx, merchantId, chain.chainType)) return;
    throw conflict(
      `chain ${chain.chainId} is a development chain, whose test token anyone can mint: only the public test wallet's merchant (serve --dev) pays out there, not merchant ${merchantId}${tail}`,
    );
  }
  if (onPublicTestWallet(tx, merchantId, 'any')) {
    throw conflict(
      `merchant ${merchantId} has the public test wallet (serve --dev): its users' balances are test money, paid out on development chains only, not on chain ${chain.chainId}${tail}`,
    );
  }
}

/** How a confirmation came to be trusted; only an operator at a local terminal may skip the chain. */
export interface ConfirmOptions {
  /** `withdraw confirm --unverified --reason TEXT`: confirmed without asking the chain, for this reason. */
  unverifiedReason?: string;
}

/**
 * Confirm (decisions §6, issue #12): where the withdrawal's chain has an rpcUrl the transaction
 * is read from the chain first and must pay exactly this withdrawal, in the block given; short
 * of the chain's confirmations it is accepted and stays PENDING with its txHash, and the watcher
 * settles it at depth. The chain is read before the ledger transaction opens (a slow node must
 * not hold the ledger), and the state is checked again inside it.
 */
export async function confirmWithdrawal(s: StoreCtx, input: WithdrawConfirmRequest, opts: ConfirmOptions = {}): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawConfirmSchema, input);
  const before = findWithdrawal(s.db, findMerchant(s, s.db, req.mchId).id, req.logId);
  withdrawalAfter(before.status as WithdrawalStatus, 'confirm');
  const txHash = payoutHash(req.txHash, before.chainType as ChainType);
  assertCanTake(s.db, before, txHash);
  const registry = await s.registry();
  const chain = registry.chain(before.chainId);
  // Applied before apply refused it (or on a chain marked development since).
  refuseTestPayout(s.db, before.merchantId, chain, ' (reject it: nothing was paid out)');
  let check: ChainCheck | undefined;
  let note: string | null = null;
  if (opts.unverifiedReason !== undefined) {
    // Who is the audit entry's actor; the note, which the merchant reads (withdraw/show, its log),
    // does not name the operator (a code review found the login account there).
    note = `confirmed without verification by an operator: ${opts.unverifiedReason}`;
  } else if (!chain.rpcUrl) {
    note = `chain ${chain.chainId} (${chain.name}) has no rpcUrl configured: not verified on chain`;
  } else {
    check = await checkCandidatePayout(s, before, txHash, req.blockNumber);
    if (check.verdict.kind !== 'match') throw conflict(`${check.message}; nothing was changed`);
  }
  const now = s.now();
  return s.write((tx) => {
    const w = findWithdrawal(tx, before.merchantId, before.id);
    const status = withdrawalAfter(w.status as WithdrawalStatus, 'confirm');
    assertCanTake(tx, w, txHash);
    const verified = check !== undefined;
    // Waiting for its confirmations already: the key is this withdrawal's since then, held within
    // its merchant (src/store/tx-keys.ts).
    if (w.txHash === null) claimTxKey(tx, txHash, 'withdrawal', { shared: false, now, merchantId: w.merchantId });
    const blockHash = check?.observed.blockHash ?? null;
    if (check && check.verdict.kind === 'match' && !check.verdict.deep) {
      // Its sender and nonce: whether it can be mined again should a reorg take it away.
      const sender = check.observed.sender;
      const row = tx.update(withdrawals).set({
        txHash, blockNumber: req.blockNumber, blockHash, verification: 'confirming', verificationNote: null,
        payoutFrom: sender?.from ?? null, payoutNonce: sender?.nonce ?? null, payoutLostAt: null, updatedAt: now,
      }).where(eq(withdrawals.id, w.id)).returning().get();
      audit(tx, {
        at: now, actor: s.caller.actor, action: 'withdrawal.confirmation_pending', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
        detail: { txHash, blockNumber: req.blockNumber, confirmations: check.observed.confirmations, needed: check.expected.confirmations, chain: check.message },
      });
      return withdrawalView(row);
    }
    return settleConfirmed(tx, w, {
      status, txHash, blockNumber: req.blockNumber, blockHash, verified, note, actor: s.caller.actor, now,
      confirmations: check?.observed.confirmations,
    });
  });
}

/** Block times are whole seconds. */
const BLOCK_TIME_STEP_MS = 1000;

/**
 * A payout mined before the withdrawal was requested matches it only by the clocks' allowance
 * (PAYOUT_CLOCK_SKEW_MS). Where an older withdrawal of the merchant, of the same amount to the
 * same address, token and chain, requested before that block and still PENDING without a
 * transaction, is there, the payout is that one's: refused, naming it. An operator trial: a
 * twin asked for 29 s after the first took the first's payout, mined 8 s before it, and the
 * first, reading unpaid, was paid out again. Where the ledger's clock runs ahead of the chain's,
 * a payout of this one can read as mined before it was requested: the refusal then names the
 * twin, which the payout pays just as well (same merchant, amount, address, token and chain);
 * confirming the twin with it is always safe, where skipping the chain (--unverified) would skip
 * every check and, if wrong, pay the twin twice (a review), so the refusal offers no such way.
 * The twin may be another user's: the refusal then says whose each is.
 */
function refusePayoutOfOlderTwin(q: Q, w: WithdrawalRow, txHash: string, blockTime: number | null): void {
  // A block's time is in whole seconds: the transaction was mined within the second after it.
  if (blockTime === null || blockTime + BLOCK_TIME_STEP_MS > w.createdAt) return;
  const same = (a: string, b: string) => sameAddress(w.chainType as ChainType, a, b);
  const twin = q.select().from(withdrawals).where(and(
    eq(withdrawals.merchantId, w.merchantId), eq(withdrawals.status, 'PENDING'), eq(withdrawals.chainId, w.chainId),
    eq(withdrawals.asset, w.asset), eq(withdrawals.amount, w.amount), lt(withdrawals.createdAt, w.createdAt),
    lte(withdrawals.createdAt, blockTime + BLOCK_TIME_STEP_MS), isNull(withdrawals.txHash),
  )).orderBy(desc(withdrawals.createdAt)).all().find((x) => x.id !== w.id && same(x.to, w.to) && same(x.token, w.token));
  if (!twin) return;
  throw conflict(
    `transaction ${txHash} was mined at ${new Date(blockTime).toISOString()}, ${Math.round((w.createdAt - blockTime) / 1000)} s before withdrawal ${w.id} was requested, `
    + `and withdrawal ${twin.id} of the same ${formatAmount(w.amount, decimalsOf(w.asset))} ${w.asset} to ${w.to}, requested before it was mined, is still PENDING: `
    + `it is that one's payout; confirm ${twin.id} with it${twin.uid === w.uid ? '' : ` (it is user ${twin.uid}'s, this one user ${w.uid}'s)`} (nothing was changed)`,
  );
}

/**
 * The chain's check of a transaction offered for a pending withdrawal, as confirm and verify
 * make it: a match that is an older twin's payout is refused (verify's answer is the question
 * confirm asks, and an operator trial was shown "matches" for a payout confirm then refused).
 */
export async function checkCandidatePayout(s: StoreCtx, w: WithdrawalRow, txHash: string, blockNumber: number | null): Promise<ChainCheck> {
  const check = await checkPayout(s, w, txHash, blockNumber);
  if (check.verdict.kind === 'match') refusePayoutOfOlderTwin(s.db, w, txHash, check.observed.blockTime);
  return check;
}

/** Decisions §6: a TRON hash is 64 hex digits, `0x` accepted and dropped (TRON's own spelling is kept). */
export function payoutHash(value: unknown, chainType: ChainType): string {
  return hashOnChain(value, chainType, 'txHash');
}

/** A withdrawal waiting for the confirmations of one transaction takes no other. */
export function assertCanTake(q: Q, w: WithdrawalRow, txHash: string): void {
  if (w.verification === 'confirming' && w.txHash !== null && txKey(w.txHash) !== txKey(txHash)) {
    throw conflict(`withdrawal ${w.id} already waits for the confirmations of transaction ${w.txHash}; it is settled when they are reached (cryptopay withdraw show ${w.id})`);
  }
  // Before the chain is asked: a hash already in the ledger is refused without a node round trip.
  if (w.txHash === null && txKeyTaken(q, txHash, { merchantId: w.merchantId })) {
    // Its merchant's own withdrawal is named (a batch payout's second payee, the usual case:
    // decisions §6 lets a transaction confirm one withdrawal); anyone else's use is not.
    const own = payoutsNaming(q, w.merchantId, txKey(txHash)).find((id) => id !== w.id);
    if (!own) throw alreadyRecorded(txHash);
    throw conflict(`${alreadyRecorded(txHash).message}: it confirms withdrawal ${own}, and a transaction confirms at most one withdrawal (pay each withdrawal with a transaction of its own)`);
  }
}

/**
 * PENDING to CONFIRMED: the hold is posted out of the ledger, with its audit entry, in the
 * caller's transaction. The one place a withdrawal settles, whoever settles it (an operator, the
 * API, the watcher reaching the depth).
 */
export function settleConfirmed(
  tx: Q,
  w: WithdrawalRow,
  a: { status?: WithdrawalStatus; txHash: string; blockNumber: number; blockHash: string | null; verified: boolean; note: string | null; actor: string; now: number; confirmations?: number },
): Withdrawal {
  const status = a.status ?? withdrawalAfter(w.status as WithdrawalStatus, 'confirm');
  resolvePending(tx, w.transferId, 'posted', a.now);
  const row = tx.update(withdrawals).set({
    status, txHash: a.txHash, blockNumber: a.blockNumber, blockHash: a.blockHash, verification: a.verified ? 'verified' : 'unverified',
    verificationNote: a.note, updatedAt: a.now,
  }).where(eq(withdrawals.id, w.id)).returning().get();
  // In the transaction that settles it, whoever settles it (confirm, or the watcher at depth).
  withdrawalEvent(tx, 'withdraw.confirmed', row, { ...withdrawalView(row) }, a.now);
  audit(tx, {
    at: a.now, actor: a.actor, action: 'withdrawal.confirmed', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
    detail: {
      txHash: a.txHash, blockNumber: a.blockNumber, amount: formatAmount(w.amount, decimalsOf(w.asset)), verified: a.verified,
      ...(a.confirmations !== undefined ? { confirmations: a.confirmations } : {}), ...(a.note ? { note: a.note } : {}),
    },
  });
  return withdrawalView(row);
}

/**
 * PENDING to REJECTED: the hold returns to the user. On a chain with an rpcUrl the chain is asked
 * first whether the withdrawal was paid out already (a transfer of its amount to its address since
 * it was requested): then it is refused, nothing changed, and the answer names the transaction to
 * confirm it with (a new-user trial paid one out by hand and rejected it: the user was paid
 * twice). Only an operator at a local terminal skips that, with a reason the audit log keeps.
 */
export async function rejectWithdrawal(s: StoreCtx, input: WithdrawRejectRequest, opts: { unverifiedReason?: string } = {}): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawRejectSchema, input);
  const pending = findWithdrawal(s.db, findMerchant(s, s.db, req.mchId).id, req.id);
  // Another state is refused below, in the operation's words, without asking the chain.
  const searched = pending.status === 'PENDING' && pending.verification !== 'confirming' && opts.unverifiedReason === undefined
    ? await lookForPayout(s, pending, 'nothing was changed; try again once it can be read. Rejecting without the chain returns the hold even if it was paid out: only after checking on an explorer that nothing was sent to {to} since {since}, an operator at the ledger\'s terminal can: --unverified --reason TEXT')
    : null;
  if (searched && searched.found.length > 0) throw conflict(looksPaidOut(pending, searched));
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const w = findWithdrawal(tx, m.id, req.id);
    const status = withdrawalAfter(w.status as WithdrawalStatus, 'reject');
    if (w.verification === 'confirming') {
      // The payout matched on chain: returning the hold would pay the user twice.
      throw conflict(
        w.payoutLostAt !== null
          ? `withdrawal ${w.id} waits for transaction ${w.txHash}, which a reorg took out of the chain but which can still be mined and pay it: it cannot be rejected (it returns to plain PENDING once that transaction can no longer be mined)`
          : `withdrawal ${w.id} waits for the confirmations of transaction ${w.txHash}, which pays it on chain: it cannot be rejected (it returns to plain PENDING only if a reorg takes the transaction away for good)`,
      );
    }
    resolvePending(tx, w.transferId, 'voided', now);
    // Said on the record too (withdraw show), not only in the audit log: a new-user trial could not tell a blind reject from a checked one.
    const note = opts.unverifiedReason !== undefined ? `rejected without asking the chain whether it was paid out, by an operator: ${opts.unverifiedReason}` : w.verificationNote;
    const row = tx.update(withdrawals).set({ status, remark: req.remark ?? null, verificationNote: note, updatedAt: now }).where(eq(withdrawals.id, w.id)).returning().get();
    withdrawalEvent(tx, 'withdraw.rejected', row, { ...withdrawalView(row) }, now);
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'withdrawal.rejected', merchantId: m.id, subjectType: 'withdrawal', subjectId: w.id,
      detail: {
        remark: req.remark ?? null, amount: formatAmount(w.amount, decimalsOf(w.asset)),
        ...(searched ? { payoutSearched: { chainId: searched.chainId, fromBlock: searched.fromBlock, toBlock: searched.toBlock, found: 0 } } : {}),
        ...(opts.unverifiedReason !== undefined ? { unverified: opts.unverifiedReason } : {}),
      },
    });
    return withdrawalView(row);
  });
}

/** The refusal of a reject whose payout the chain shows, naming the transaction(s) and how to record the payout. */
export function looksPaidOut(w: WithdrawalRow, l: PayoutLookup): string {
  const amount = `${formatAmount(w.amount, decimalsOf(w.asset))} ${l.tokenSymbol}`;
  const exact = toTokenUnits(w.amount, decimalsOf(w.asset), l.tokenDecimals);
  const fromWallet = (a: string) => l.payoutWallets.length === 0 || l.payoutWallets.some((p) => sameAddress(w.chainType as ChainType, p, a));
  const [first, ...more] = l.found;
  const txs = l.found.map((f) => foundPayoutText(f, l, (a) => `${a}${fromWallet(a) ? '' : ', not a payout wallet of this merchant'}`)).join(', ');
  // The advice to confirm is given only where confirm accepts (withdrawal-check.ts's judge): the
  // exact amount in all, every part from a named wallet; else how to record it by hand.
  const stranger = first!.senders.find((a) => !fromWallet(a));
  const why = first!.rawAmount === exact ? '' : first!.rawAmount < exact ? 'a fee taken off; ' : 'more than its amount in all; ';
  const record = first!.rawAmount === exact && !stranger
    ? `Confirm it with that transaction instead (cryptopay withdraw confirm ${w.id} --tx-hash ${first!.txHash})`
    : `If it is this payout (${why}${stranger ? 'a wallet not named yet: cryptopay merchant payout-wallet add ' + stranger + '; ' : ''}confirm checks the exact amount from a named wallet), record it at the ledger's terminal: cryptopay withdraw confirm ${w.id} --tx-hash ${first!.txHash} --block-number ${first!.blockNumber} --unverified --reason TEXT`;
  return `withdrawal ${w.id} looks paid out already: on chain ${l.chainId} (${l.chainName}), ${more.length ? 'transactions' : 'transaction'} ${txs} moved to ${w.to} after it was requested (it pays ${amount}). `
    + `Rejecting it would return the ${amount} to user ${w.uid} as well: paid twice. ${record}; `
    + `if it paid something else, an operator at the ledger's terminal can reject it with --unverified --reason TEXT. Nothing was changed`;
}

export function findWithdrawal(q: Q, merchantId: string | undefined, id: string): WithdrawalRow {
  const w = q.select().from(withdrawals).where(merchantId ? and(eq(withdrawals.id, id), eq(withdrawals.merchantId, merchantId)) : eq(withdrawals.id, id)).get();
  if (!w) throw notFound('withdrawal not found');
  return w;
}

export type { WithdrawalDetail };

function withdrawalDetail(w: WithdrawalRow): WithdrawalDetail {
  return { ...listedWithdrawal(w), mchId: w.merchantId, verification: w.verification as WithdrawalDetail['verification'], verificationNote: w.verificationNote };
}

export function getWithdrawal(s: StoreCtx, id: string, mchId?: string): WithdrawalDetail {
  return withdrawalDetail(findWithdrawal(s.db, mchId, id));
}

/** What `withdraw list` filters on; `since` inclusive and `until` exclusive, on the creation time. */
export interface WithdrawalFilter {
  mchId?: string;
  status?: WithdrawalStatus;
  uid?: string;
  since?: number;
  until?: number;
}

function withdrawalWhere(filter: WithdrawalFilter): SQL[] {
  const where: SQL[] = [];
  if (filter.mchId) where.push(eq(withdrawals.merchantId, filter.mchId));
  if (filter.status) where.push(eq(withdrawals.status, filter.status));
  if (filter.uid) where.push(eq(withdrawals.uid, filter.uid));
  if (filter.since !== undefined) where.push(gte(withdrawals.createdAt, filter.since));
  if (filter.until !== undefined) where.push(lt(withdrawals.createdAt, filter.until));
  return where;
}

export function listWithdrawals(s: StoreCtx, filter: WithdrawalFilter & { limit?: number }): ListedWithdrawal[] {
  return s.db.select().from(withdrawals).where(and(...withdrawalWhere(filter))).orderBy(desc(withdrawals.createdAt), desc(withdrawals.id)).limit(filter.limit ?? 50).all().map(listedWithdrawal);
}

/** A page of `withdraw list`, with the count of all that match (src/store/paging.ts). */
export function pageWithdrawals(s: StoreCtx, filter: WithdrawalFilter & { limit?: number; cursor?: string }): Page<ListedWithdrawal> {
  const where = withdrawalWhere(filter);
  const limit = filter.limit ?? 50;
  const count = (extra?: SQL) => Number(s.db.select({ n: sql<bigint>`count(*)` }).from(withdrawals).where(and(...where, extra)).get()?.n ?? 0);
  // Only the merchant's own rows: another merchant's id answers as one that does not exist.
  const { after, before } = afterCursor(filter.cursor, 'a withdrawal', (cursor) => s.db.select({ time: withdrawals.createdAt, id: withdrawals.id }).from(withdrawals)
      .where(and(eq(withdrawals.id, cursor), filter.mchId ? eq(withdrawals.merchantId, filter.mchId) : undefined)).get(), withdrawals.createdAt, withdrawals.id, count);
  const rows = s.db.select().from(withdrawals).where(and(...where, after)).orderBy(desc(withdrawals.createdAt), desc(withdrawals.id)).limit(limit + 1).all();
  return pageOf(rows, limit, count(), before, (w) => w.id, listedWithdrawal);
}

/** The extension reads' withdrawal: the record with its asset and merchant (src/core/types.ts ListedWithdrawal). */
export function listedWithdrawal(w: WithdrawalRow): ListedWithdrawal {
  return { ...withdrawalView(w), asset: w.asset, mchId: w.merchantId };
}

export function withdrawalView(w: WithdrawalRow): Withdrawal {
  return {
    id: w.id, uid: w.uid, amount: formatAmount(w.amount, decimalsOf(w.asset)), to: w.to, chainId: w.chainId,
    chainType: w.chainType as ChainType, token: w.token, status: w.status as WithdrawalStatus, txHash: w.txHash,
    blockNumber: w.blockNumber, remark: w.remark, createdAt: w.createdAt, updatedAt: w.updatedAt,
  };
}
