import { and, eq, inArray } from 'drizzle-orm';
import type { FoundPayout } from '../chains/payout-search.js';
import type { TokenInfo } from '../chains/registry.js';
import type { ChainCheck, ExpectedPayout } from '../chains/withdrawal-check.js';
import { AppError, conflict, invalid } from '../core/errors.js';
import { formatAmount, toTokenUnits } from '../core/money.js';
import type { WithdrawVerifyRequest } from '../core/schemas.js';
import type { ChainType, VerificationReport, Withdrawal, WithdrawalStatus } from '../core/types.js';
import { audit, type Q } from './ledger.js';
import { findMerchant } from './merchants.js';
import { withdrawals } from './schema.js';
import { decimalsOf, type StoreCtx } from './store-context.js';
import { claimTxKey, releaseTxKey, txKey, txKeyTaken } from './tx-keys.js';
import { listPayoutWallets } from './payout-wallets.js';
import { onPublicTestWallet } from './payments.js';
import { sameAddress } from '../core/words.js';
import { assertCanTake, checkCandidatePayout, findWithdrawal, payoutHash, settleConfirmed, type WithdrawalRow } from './withdrawals.js';

/**
 * Withdrawal confirmations checked on chain (decisions §6, issue #12): what the chain says about a
 * payout transaction, and the states a confirmation short of its depth goes through, which the
 * watcher's tick (src/chains/watch/watcher.ts) moves on. Settling itself is withdrawals.ts's.
 */

const heavy = () => import('./heavy.js');

/** What the chain says about a withdrawal's transaction; the node being unreachable is `unavailable` (503, exit 3). */
export async function checkPayout(s: StoreCtx, w: WithdrawalRow, txHash: string, blockNumber: number | null): Promise<ChainCheck> {
  const registry = await s.registry();
  const chain = registry.chain(w.chainId);
  if (!chain.rpcUrl) throw invalid(`chain ${chain.chainId} (${chain.name}) has no rpcUrl configured: its transactions cannot be checked`);
  const given = expectedPayout(w, registry.token(chain.chainId, w.token), chain.confirmations, txHash, blockNumber ?? 0, payoutWalletsOf(s.db, w));
  // Loaded here, not at start-up: only a confirmation that reads the chain needs it.
  const [{ judge, observeTransaction }, { RpcError, RpcTransportError }] = await Promise.all([import('../chains/withdrawal-check.js'), import('../chains/watch/rpc.js')]);
  let observed: Awaited<ReturnType<typeof observeTransaction>>;
  try {
    observed = await observeTransaction(await s.rpc(chain), given);
  } catch (e) {
    // Down, slow, garbage, or a node error for this call: the chain could not be read.
    if (!(e instanceof RpcTransportError || e instanceof RpcError)) throw e;
    throw new AppError('unavailable', `chain ${chain.chainId} (${chain.name}) cannot be read: ${(e as Error).message}; nothing was changed`, {
      cause: e, shown: `chain ${chain.chainId} (${chain.name}) cannot be read: its node did not answer as expected; nothing was changed`,
    });
  }
  // No block given: the one its receipt names, once there is one. Before that there is no block
  // to report or confirm with, which is said as the refusal it is.
  if (blockNumber === null && observed.blockNumber === null) {
    throw conflict(observed.known
      ? `transaction ${txHash} is not mined yet on chain ${chain.chainId}: it has no block to check it in; ask again once it is mined`
      : `chain ${chain.chainId} does not know transaction ${txHash}: check the hash and the chain (the withdrawal is on chain ${chain.chainId}, ${chain.name})`);
  }
  return judge({ ...given, blockNumber: blockNumber ?? observed.blockNumber! }, observed);
}

/** What a search for a withdrawal's payout found: transfers that could be it, and the blocks looked at. */
export interface PayoutLookup {
  chainId: string;
  chainName: string;
  tokenSymbol: string;
  tokenDecimals: number;
  /** The merchant's payout wallets on the chain type (a transfer from another is named as such). */
  payoutWallets: string[];
  found: FoundPayout[];
  fromBlock: number;
  toBlock: number;
}

/**
 * Transfers on chain that could be a withdrawal's payout (src/chains/payout-search.ts), less any
 * transaction the ledger already holds for this merchant (a payment, or another of its payouts:
 * it cannot pay this one). Null on a chain without an rpcUrl: there is nothing to ask. A node that
 * cannot say is `unavailable` (503, exit 3), with `what` saying what was not done.
 */
export async function lookForPayout(s: StoreCtx, w: WithdrawalRow, what: string): Promise<PayoutLookup | null> {
  // `what` may name the request's time ({since}) and the recipient ({to}).
  const registry = await s.registry();
  const chain = registry.chain(w.chainId);
  if (!chain.rpcUrl) return null;
  // A development chain's test token pays out nothing of a real merchant's (refuseTestPayout).
  if (chain.development && !onPublicTestWallet(s.db, w.merchantId, chain.chainType)) return null;
  const token = registry.token(chain.chainId, w.token);
  const [{ findPayouts, feeFloor }, { RpcError, RpcTransportError }] = await Promise.all([import('../chains/payout-search.js'), import('../chains/watch/rpc.js')]);
  const rawAmount = toTokenUnits(w.amount, decimalsOf(w.asset), token.decimals);
  let search: Awaited<ReturnType<typeof findPayouts>>;
  try {
    search = await findPayouts(await s.rpc(chain), {
      chainType: w.chainType as ChainType, chainId: w.chainId, token: token.address, to: w.to, requestedAt: w.createdAt, rawAmount,
    });
  } catch (e) {
    if (!(e instanceof RpcTransportError || e instanceof RpcError)) throw e;
    const why = `chain ${chain.chainId} (${chain.name}) cannot be read to see whether withdrawal ${w.id} was paid out${chain.development ? ' (it runs while cryptopay serve --dev runs on this ledger)' : ''}`;
    what = what.replace('{since}', new Date(w.createdAt).toISOString()).replace('{to}', w.to);
    throw new AppError('unavailable', `${why}: ${(e as Error).message}; ${what}`, { cause: e, shown: `${why}: its node did not answer as expected; ${what}` });
  }
  const same = (a: string, b: string) => sameAddress(w.chainType as ChainType, a, b);
  // A transaction the ledger holds is not this withdrawal's payout as far as the record holding it
  // accounts for what it moved to this address: a payment (tokens into the ledger) all of it;
  // another withdrawal of the merchant only its own amount, and only when it pays this address
  // with this token. A reviewer: a batch [A 1, B 1] confirmed the withdrawal to A, confirm of the
  // one to B was refused (a transaction confirms one withdrawal), and its reject then went
  // through though B was paid: the user paid twice.
  const found = search.found.flatMap((f) => {
    if (!txKeyTaken(s.db, f.txHash, { merchantId: w.merchantId })) return [f];
    const holder = withdrawalHolding(s.db, w.merchantId, f.txHash);
    if (!holder || holder.id === w.id) return [];
    const accounted = same(holder.to, w.to) && same(holder.token, w.token) && holder.chainId === w.chainId
      ? toTokenUnits(holder.amount, decimalsOf(holder.asset), token.decimals) : 0n;
    const rest = f.rawAmount - accounted;
    return rest >= feeFloor(rawAmount) ? [{ ...f, rawAmount: rest }] : [];
  });
  return {
    chainId: chain.chainId, chainName: chain.name, tokenSymbol: token.symbol, tokenDecimals: token.decimals, payoutWallets: payoutWalletsOf(s.db, w),
    found, fromBlock: search.fromBlock, toBlock: search.toBlock,
  };
}

/** The merchant's payout wallets on the withdrawal's chain type: a payout's tokens must come from one of them, when there are any. */
export function payoutWalletsOf(q: Q, w: WithdrawalRow): string[] {
  return listPayoutWallets(q, w.merchantId)[w.chainType as ChainType];
}

export function expectedPayout(w: WithdrawalRow, token: TokenInfo, confirmations: number, txHash: string, blockNumber: number, payoutWallets: string[]): ExpectedPayout {
  return {
    payoutWallets,
    chainType: w.chainType as ChainType, chainId: w.chainId, token: token.address, tokenSymbol: token.symbol, tokenDecimals: token.decimals,
    to: w.to, rawAmount: toTokenUnits(w.amount, decimalsOf(w.asset), token.decimals), txHash, blockNumber, confirmations, requestedAt: w.createdAt,
  };
}

/** `withdraw verify`, confirm's question, the verify extension: the chain's view of a withdrawal's transaction (its own, or the one given). */
export async function verifyWithdrawal(s: StoreCtx, input: WithdrawVerifyRequest): Promise<VerificationReport> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawVerifySchema, input);
  if (req.blockNumber !== undefined && req.txHash === undefined) throw invalid('blockNumber goes with txHash: give the transaction too, or neither for the recorded one');
  const w = findWithdrawal(s.db, findMerchant(s, s.db, req.mchId).id, req.id);
  const txHash = req.txHash !== undefined ? payoutHash(req.txHash, w.chainType as ChainType) : w.txHash;
  // A transaction given without its block is looked at in the block the chain names (what an
  // operator has at hand is the hash; `withdraw confirm` then confirms with that block).
  const blockNumber = req.txHash !== undefined ? req.blockNumber ?? null : w.blockNumber;
  if (txHash === null || (req.txHash === undefined && blockNumber === null)) {
    // A payout sent and not recorded yet is looked for (a new-user trial's `dev pay-out` was
    // found again only by a reject that refused): named with the confirm that records it.
    const seen = w.status === 'PENDING' ? await lookForPayout(s, w, 'nothing to verify') : null;
    const what = `withdrawal ${w.id} is ${w.status} with no transaction recorded: nothing to verify`;
    if (!seen) throw conflict(what);
    if (seen.found.length === 0) throw conflict(`${what}; chain ${seen.chainId} shows no transfer of it to ${w.to} since it was requested (blocks ${seen.fromBlock} to ${seen.toBlock})`);
    const f = seen.found[0]!;
    throw conflict(`${what}; chain ${seen.chainId} shows ${seen.found.map((x) => `transaction ${foundPayoutText(x, seen)}`).join(', ')} to ${w.to} since it was requested: if it is the payout, check it with cryptopay withdraw verify ${w.id} --tx-hash ${f.txHash}, and record it with cryptopay withdraw confirm ${w.id} --tx-hash ${f.txHash}`);
  }
  // A transaction offered for a pending withdrawal is refused here as confirm would refuse it
  // (taken by another withdrawal; an older twin's payout): `withdraw confirm`'s question shows
  // this report, and an operator trial was shown "matches", said y, and only then was refused.
  const candidate = req.txHash !== undefined && w.status === 'PENDING';
  if (candidate) assertCanTake(s.db, w, txHash);
  const c = candidate ? await checkCandidatePayout(s, w, txHash, blockNumber) : await checkPayout(s, w, txHash, blockNumber);
  const { sender: _sender, ...chain } = c.observed;
  return {
    id: w.id, status: w.status as WithdrawalStatus, verification: w.verification as VerificationReport['verification'], txHash, blockNumber: c.expected.blockNumber,
    matches: c.verdict.kind === 'match', deep: c.verdict.kind === 'match' && c.verdict.deep, verdict: c.verdict.kind, message: c.message,
    expected: {
      token: c.expected.token, tokenSymbol: c.expected.tokenSymbol, amount: formatAmount(c.expected.rawAmount, c.expected.tokenDecimals),
      rawAmount: c.expected.rawAmount.toString(), to: c.expected.to, blockNumber: c.expected.blockNumber, confirmations: c.expected.confirmations, requestedAt: c.expected.requestedAt,
      payoutWallets: c.expected.payoutWallets,
    },
    chain,
  };
}

/** Withdrawals accepted short of their confirmations on a chain, for the watcher's tick. */
export function confirmingWithdrawals(q: Q, chainId: string): WithdrawalRow[] {
  return q.select().from(withdrawals).where(and(eq(withdrawals.chainId, chainId), eq(withdrawals.verification, 'confirming'), eq(withdrawals.status, 'PENDING'))).all();
}

/** Still the confirming withdrawal the watcher read (not settled, not confirmed with another hash meanwhile). */
const stillConfirming = (w: WithdrawalRow) =>
  and(eq(withdrawals.id, w.id), eq(withdrawals.status, 'PENDING'), eq(withdrawals.verification, 'confirming'), eq(withdrawals.txHash, w.txHash!));

/**
 * A reorg took a confirming withdrawal's transaction out of the chain, and it can still be mined
 * (its nonce is free; TRON: it has not expired): the withdrawal keeps waiting for it and keeps
 * its key, so it cannot be rejected (the same signed transaction, mined again, would pay the
 * user a second time). Recorded once, with the time, for withdraw show and the audit log.
 */
export function markPayoutLost(tx: Q, w: WithdrawalRow, a: { why: string; actor: string; now: number }): boolean {
  const note = `${new Date(a.now).toISOString()}: a reorg took transaction ${w.txHash} out of block ${w.blockNumber}; it can still be mined (${a.why}): this withdrawal waits for it and cannot be rejected until it is mined again or can no longer be`;
  const changed = tx.update(withdrawals).set({ payoutLostAt: a.now, verificationNote: note, updatedAt: a.now }).where(stillConfirming(w)).run().changes;
  if (changed !== 1) return false;
  audit(tx, {
    at: a.now, actor: a.actor, action: 'withdrawal.confirmation_lost', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
    detail: { txHash: w.txHash, blockNumber: w.blockNumber, why: a.why },
  });
  return true;
}

/**
 * A reorg moved a confirming withdrawal's transaction into another block (or it was mined again
 * after being lost), where it still pays the withdrawal: the withdrawal follows it and counts its
 * confirmations from there.
 */
export function followPayout(tx: Q, w: WithdrawalRow, a: { blockNumber: number; blockHash: string | null; actor: string; now: number }): boolean {
  const note = `${new Date(a.now).toISOString()}: a reorg moved transaction ${w.txHash} from block ${w.blockNumber} to block ${a.blockNumber}, where it still pays this withdrawal: its confirmations count from there`;
  const changed = tx.update(withdrawals).set({ blockNumber: a.blockNumber, blockHash: a.blockHash, payoutLostAt: null, verificationNote: note, updatedAt: a.now })
    .where(stillConfirming(w)).run().changes;
  if (changed !== 1) return false;
  audit(tx, {
    at: a.now, actor: a.actor, action: 'withdrawal.confirmation_moved', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
    detail: { txHash: w.txHash, from: w.blockNumber, to: a.blockNumber },
  });
  return true;
}

/**
 * A lost payout's nonce was used by another transaction of the same sender that pays this
 * withdrawal exactly (a wallet's "speed up" or a resend at the same nonce): the withdrawal follows
 * it, as it follows its own transaction mined again, and counts its confirmations there; the lost
 * transaction's key is given up, the replacement's held within the merchant. False, and nothing
 * done, when the row changed meanwhile or the merchant already holds the replacement (another of
 * its payouts or payments names it): the caller then drops the confirmation as before.
 */
export function followReplacement(tx: Q, w: WithdrawalRow, a: { txHash: string; blockNumber: number; blockHash: string | null; actor: string; now: number }): boolean {
  if (txKeyTaken(tx, a.txHash, { merchantId: w.merchantId })) return false;
  const note = `${new Date(a.now).toISOString()}: a reorg took transaction ${w.txHash} out of block ${w.blockNumber}, and its sender's nonce ${w.payoutNonce} was used by transaction ${a.txHash} in block ${a.blockNumber}, which pays this withdrawal exactly: the withdrawal follows it and counts its confirmations there`;
  const changed = tx.update(withdrawals)
    .set({ txHash: a.txHash, blockNumber: a.blockNumber, blockHash: a.blockHash, payoutLostAt: null, verificationNote: note, updatedAt: a.now })
    .where(stillConfirming(w)).run().changes;
  if (changed !== 1) return false;
  releaseTxKey(tx, w.txHash!, w.merchantId);
  claimTxKey(tx, a.txHash, 'withdrawal', { shared: false, now: a.now, merchantId: w.merchantId });
  audit(tx, {
    at: a.now, actor: a.actor, action: 'withdrawal.confirmation_replaced', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
    detail: { txHash: w.txHash, blockNumber: w.blockNumber, replacedBy: a.txHash, inBlock: a.blockNumber, nonce: w.payoutNonce },
  });
  return true;
}

/** The lost transaction is back in its own block: the mark is taken off. */
export function payoutFound(tx: Q, w: WithdrawalRow, now: number): void {
  tx.update(withdrawals).set({ payoutLostAt: null, verificationNote: null, updatedAt: now }).where(stillConfirming(w)).run();
}

/**
 * The watcher found the transaction of a confirming withdrawal gone for good (a reorg took it and
 * it can never be mined again) or changed: back to plain PENDING, its key given up, the reason
 * kept for the operator (withdraw show, audit log). False when the row changed meanwhile
 * (settled, or confirmed again).
 */
export function dropConfirmation(tx: Q, w: WithdrawalRow, a: { reason: string; actor: string; now: number; chainUnchanged?: boolean }): boolean {
  // The transaction where it was when confirmed (same block hash, succeeded): the chain did not
  // change, the check's ground did (payout wallets named since, or a newer release's rule: a
  // reviewer found "no longer pays" told of a [1, 1] batch accepted before the sum was checked).
  const note = a.chainUnchanged
    ? `${new Date(a.now).toISOString()}: transaction ${w.txHash} in block ${w.blockNumber}, where it was when it was confirmed, does not pass the check now (${a.reason}): the check changed since (payout wallets named, or a newer release), not the chain; if it is this payout, record it at the ledger's terminal: cryptopay withdraw confirm ${w.id} --tx-hash ${w.txHash} --block-number ${w.blockNumber} --unverified --reason TEXT`
    : `${new Date(a.now).toISOString()}: transaction ${w.txHash} in block ${w.blockNumber} no longer pays this withdrawal (${a.reason}); confirm it again with the transaction that pays it`;
  const changed = tx.update(withdrawals)
    .set({ txHash: null, blockNumber: null, blockHash: null, verification: null, verificationNote: note, payoutFrom: null, payoutNonce: null, payoutLostAt: null, updatedAt: a.now })
    .where(stillConfirming(w)).run().changes;
  if (changed !== 1) return false;
  releaseTxKey(tx, w.txHash!, w.merchantId);
  audit(tx, {
    at: a.now, actor: a.actor, action: 'withdrawal.confirmation_dropped', merchantId: w.merchantId, subjectType: 'withdrawal', subjectId: w.id,
    detail: { txHash: w.txHash, blockNumber: w.blockNumber, reason: a.reason },
  });
  return true;
}

/** The watcher reached the depth: settles a confirming withdrawal once (false when it changed meanwhile). */
export function settleConfirming(tx: Q, id: string, a: { txHash: string; actor: string; now: number; confirmations: number; blockHash: string | null }): Withdrawal | undefined {
  const w = tx.select().from(withdrawals).where(eq(withdrawals.id, id)).get();
  if (!w || w.status !== 'PENDING' || w.verification !== 'confirming' || w.txHash !== a.txHash) return undefined;
  return settleConfirmed(tx, w, {
    txHash: a.txHash, blockNumber: w.blockNumber!, blockHash: a.blockHash, verified: true, note: null, actor: a.actor, now: a.now, confirmations: a.confirmations,
  });
}

/** The merchant's withdrawal whose recorded transaction is `hash`, in either form it is kept in (as `order find` reads it). */
function withdrawalHolding(q: Q, merchantId: string, hash: string): WithdrawalRow | undefined {
  const key = txKey(hash);
  return q.select().from(withdrawals).where(and(eq(withdrawals.merchantId, merchantId), inArray(withdrawals.txHash, [key, `0x${key}`]))).get();
}

/**
 * "HASH (block N: 2 USDT in all, in 2 transfers, from A)": a found payout as an operator reads
 * it; `sender` may say more of each sender.
 */
export function foundPayoutText(f: FoundPayout, l: Pick<PayoutLookup, 'tokenSymbol' | 'tokenDecimals'>, sender = (a: string) => a): string {
  return `${f.txHash} (block ${f.blockNumber}: ${formatAmount(f.rawAmount, l.tokenDecimals)} ${l.tokenSymbol}${f.parts > 1 ? ` in all, in ${f.parts} transfers,` : ''} from ${f.senders.map(sender).join(' and ')})`;
}
