import type { Ledger } from '../../store/db.js';
import type { Q } from '../../store/ledger.js';
import { txKey as txKeyOf } from '../../store/tx-keys.js';
import { confirmingWithdrawals, dropConfirmation, expectedPayout, followPayout, followReplacement, markPayoutLost, payoutFound, payoutWalletsOf, settleConfirming } from '../../store/withdrawal-verification.js';
import type { WithdrawalRow } from '../../store/withdrawals.js';
import type { ChainInfo, TokenInfo } from '../registry.js';
import { RpcError, RpcTransportError, type RpcClient } from './rpc.js';

/** What the payouts' part of a watcher's tick needs of the watcher (src/chains/watch/watcher.ts). */
export interface PayoutDeps {
  chain: ChainInfo;
  rpc: RpcClient;
  ledger: Ledger;
  /** `chain:<chainId>`: who settles, in the audit log. */
  actor: string;
  now: () => number;
  log: (line: string) => void;
  /** The registry's token at a withdrawal's token address, if the chain watches it. */
  tokenOf: (token: string) => TokenInfo | undefined;
  write: <T>(fn: (q: Q) => T) => Promise<T>;
}

/**
 * Withdrawals whose transaction matched short of its confirmations (issue #12): each tick reads
 * their receipts again with the same check as confirm. At depth the withdrawal is settled once,
 * by `chain:<chainId>`. A reorg that moves the transaction to another block, where it still
 * pays, is followed. One that takes it out of the chain leaves the withdrawal waiting (marked
 * lost, its key kept, reject refused) for as long as the same signed transaction can be mined
 * again: until its sender's nonce is used at depth by another transaction (TRON, which has no
 * nonce: until it has expired, 24 h at most). Only then, or when it no longer pays at depth, the
 * withdrawal is plain PENDING again, with the reason for the operator.
 */
/** Withdrawals whose replacement search the node could not answer: told once, asked again each tick. */
const unsure = new Set<string>();
/** Withdrawals whose transaction the node could not read: told once, read again each tick. */
const unread = new Set<string>();

export async function settlePayouts(c: PayoutDeps): Promise<void> {
  const waiting = confirmingWithdrawals(c.ledger.db, c.chain.chainId);
  if (waiting.length === 0) return;
  const check = await import('../withdrawal-check.js');
  for (const w of waiting) {
    try {
      await settleOne(c, w, check);
      unread.delete(w.id);
    } catch (e) {
      // The node could not answer for this one transaction (an error for this call, a reorg
      // between two reads, an answer that is not one): nothing is decided for it, and the other
      // withdrawals and the rest of the tick go on; it is read again at the next tick. Anything
      // else (the ledger) stops the tick as before.
      if (!(e instanceof RpcError || e instanceof RpcTransportError)) throw e;
      if (!unread.has(w.id)) c.log(`chain ${c.chain.chainId}: withdrawal ${w.id}: its transaction ${w.txHash} could not be read (${(e as Error).message}); it keeps waiting and is read again at the next tick`);
      unread.add(w.id);
    }
  }
}

async function settleOne(c: PayoutDeps, w: WithdrawalRow, { judge, lostPayoutFate, nonceUsedAtDepth, observeTransaction, replacementOf }: typeof import('../withdrawal-check.js')): Promise<void> {
  const { chain, actor } = c;
  const token = c.tokenOf(w.token);
  if (!token) return;
  const expected = expectedPayout(w, token, chain.confirmations, w.txHash!, w.blockNumber!, payoutWalletsOf(c.ledger.db, w));
  const check = judge(expected, await observeTransaction(c.rpc, expected));
  const o = check.observed;
  const now = c.now();
  if (check.verdict.kind === 'match') {
    if (!check.verdict.deep) {
      if (w.payoutLostAt !== null) await c.write((q) => payoutFound(q, w, now));
      return;
    }
    const done = await c.write((q) => settleConfirming(q, w.id, { txHash: w.txHash!, actor, now, confirmations: o.confirmations, blockHash: o.blockHash }));
    if (done) c.log(`chain ${chain.chainId}: withdrawal ${w.id} confirmed: ${check.message}`);
    return;
  }
  if (check.verdict.kind === 'mismatch') {
    // Mined in another block, where it pays exactly as before: follow it there.
    if (o.blockNumber !== null && o.blockNumber !== w.blockNumber && judge({ ...expected, blockNumber: o.blockNumber }, o).verdict.kind === 'match') {
      const moved = await c.write((q) => followPayout(q, w, { blockNumber: o.blockNumber!, blockHash: o.blockHash, actor, now }));
      if (moved) c.log(`chain ${chain.chainId}: withdrawal ${w.id}: a reorg moved transaction ${w.txHash} from block ${w.blockNumber} to block ${o.blockNumber}; waiting for its confirmations there`);
    } else if (o.confirmations >= chain.confirmations) {
      // Mined but no longer paying (reverted in its new block): final only at depth. In the very
      // block it was confirmed in, succeeded: the chain is as it was, the check is not.
      await drop(c, w, check.message, now, o.succeeded === true && o.blockHash !== null && o.blockHash === w.blockHash);
    }
    return;
  }
  // Out of the chain ('unknown'), or back in a node's pool ('unmined'): can it still be mined?
  const sender = w.payoutNonce !== null && w.payoutFrom !== null ? { from: w.payoutFrom, nonce: w.payoutNonce } : o.sender;
  const nonce = chain.chainType === 'EVM' ? (sender?.nonce ?? null) : null;
  const fate = lostPayoutFate({
    chainType: chain.chainType, depth: chain.confirmations, known: o.known, lostAt: w.payoutLostAt, now, nonce,
    nonceUsedAtDepth: nonce !== null && (await nonceUsedAtDepth(c.rpc, { from: sender!.from, nonce }, o.head, chain.confirmations)),
  });
  if (fate.gone) {
    // Its nonce is used by another transaction of the sender: if that one pays this
    // withdrawal exactly (a wallet's replacement), follow it rather than let the withdrawal be
    // rejected while the user was paid (attacker review of 2026-11-24). Looked for from the
    // confirmations under the lost block on: a reorg no deeper than them forked above that.
    if (nonce !== null && sender) {
      const found = await replacementOf(c.rpc, expected, { from: sender.from, nonce }, { from: w.blockNumber! - chain.confirmations - 1, to: o.head });
      if (found === 'unknown') {
        // Nothing is decided on a node that could not say: the withdrawal keeps waiting.
        if (!unsure.has(w.id)) c.log(`chain ${chain.chainId}: withdrawal ${w.id}: its lost transaction ${w.txHash} can never be mined, and the node could not say which transaction used its nonce ${nonce}; it keeps waiting and is asked again at the next tick`);
        unsure.add(w.id);
        return;
      }
      unsure.delete(w.id);
      if (found !== 'none' && txKeyOf(found.hash) !== txKeyOf(w.txHash!) && judge({ ...expected, txHash: found.hash, blockNumber: found.observed.blockNumber ?? -1 }, found.observed).verdict.kind === 'match') {
        const { hash, observed } = found;
        const followed = await c.write((q) => followReplacement(q, w, { txHash: hash, blockNumber: observed.blockNumber!, blockHash: observed.blockHash, actor, now }));
        if (followed) {
          c.log(`chain ${chain.chainId}: withdrawal ${w.id}: its lost transaction ${w.txHash} was replaced by ${hash} in block ${observed.blockNumber} (same sender and nonce ${nonce}), which pays it exactly: waiting for its confirmations there`);
          return;
        }
      }
    }
    await drop(c, w, fate.why, now);
  } else if (w.payoutLostAt === null) {
    const lost = await c.write((q) => markPayoutLost(q, w, { why: fate.why, actor, now }));
    if (lost) c.log(`chain ${chain.chainId}: withdrawal ${w.id}: a reorg took transaction ${w.txHash} out of block ${w.blockNumber}; it can still be mined (${fate.why}): waiting for it, and it cannot be rejected meanwhile`);
  }
}

async function drop(c: PayoutDeps, w: WithdrawalRow, reason: string, now: number, chainUnchanged = false): Promise<void> {
  const dropped = await c.write((q) => dropConfirmation(q, w, { reason, actor: c.actor, now, chainUnchanged }));
  if (dropped) c.log(`chain ${c.chain.chainId}: withdrawal ${w.id} is PENDING again: transaction ${w.txHash}: ${reason}; ${chainUnchanged ? 'the chain is as when it was confirmed: the check changed since' : 'confirm it again'} (cryptopay withdraw show ${w.id})`);
}
