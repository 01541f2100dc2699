import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import type { OperatorExtensions } from '../../core/service.js';
import type { VerificationReport } from '../../core/types.js';
import type { LocalPaymentService } from '../../store/local-service.js';
import { withdrawalAfter } from '../../core/state.js';
import { asking, beforeAfter, isNotFound, checked, confirmChange, need } from '../common.js';
import { printRecord, success } from '../output.js';
import { actForOwner } from '../owner.js';
import { chainRows } from './chain-rows.js';
import { printWithdrawal } from '../views.js';

/** The remote's or the local chain has no rpcUrl: its transactions are not checked there. */
const noRpcUrl = (e: unknown) => e instanceof AppError && e.kind === 'invalid' && /has no rpcUrl/.test(e.message);

/**
 * What the chain says about the transaction (in `blockNumber`, or in the block the chain names
 * when none is given); else why the block cannot be read there: `noChain` (the chain has no
 * rpcUrl: nothing is checked) or `older` (a remote from before the block was read for the
 * operator, which refuses a hash on its own: the block is asked for, and checked as before).
 */
type ChainSays = { report: VerificationReport } | { noChain: string } | { older: string };

async function ask(ctx: Context, ext: OperatorExtensions, id: string, txHash: string, blockNumber: string | undefined): Promise<ChainSays> {
  try {
    return { report: await ext.verifyWithdrawal({ mchId: ctx.globals.mchId, id, txHash, ...(blockNumber !== undefined ? { blockNumber: Number(blockNumber) } : {}) }) };
  } catch (e) {
    if (noRpcUrl(e)) return { noChain: (e as AppError).message.replace(/: its transactions cannot be checked$/, '') };
    if (blockNumber === undefined && e instanceof AppError && e.kind === 'invalid' && /go together/.test(e.message)) {
      return { older: 'this remote does not read the block of a transaction by itself (an older server)' };
    }
    throw e;
  }
}

/**
 * What the chain says next to what the withdrawal expects, added to the question; a mismatch is
 * shown and refused before anything is asked.
 */
async function preview(ctx: Context, summary: [string, string][], r: VerificationReport): Promise<void> {
  summary.push(...chainRows(r));
  if (!r.matches) {
    ctx.io.stdout.write('Confirm withdrawal:\n');
    await printRecord(ctx, summary);
    throw new AppError('conflict', `${r.message}; nothing was changed`);
  }
}

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>, logId: string): Promise<void> {
  const unverified = opts.unverified === true;
  const reason = typeof opts.reason === 'string' ? opts.reason.trim() : undefined;
  if (unverified && !reason) throw usage('--unverified needs --reason TEXT: why the chain is not asked (kept in the audit log)');
  if (!unverified && opts.reason !== undefined) throw usage('--reason goes with --unverified');
  checked(reason, 'reason');
  checked(opts.txHash as string | undefined, 'tx-hash');
  checked(opts.blockNumber as string | undefined, 'block-number');
  await actForOwner(ctx, { withdrawal: logId });
  const txHash = await need(ctx, opts.txHash as string | undefined, 'tx-hash', 'Payout transaction hash');
  // Skipping the chain is for an operator at a local ledger only: the API can never do it.
  const local = unverified ? await ctx.local('withdraw confirm --unverified') : undefined;
  const service = local ?? (await ctx.service());
  let blockNumber = (opts.blockNumber as string | undefined) || undefined;
  // What the chain says, read once: for the block when it is not given, and for the question.
  // The operator has the hash at hand; the block is the one its receipt names (a transaction not
  // mined yet, or unknown to the chain, is refused: there is nothing to confirm yet).
  let says = blockNumber === undefined && !unverified ? await ask(ctx, service, logId, txHash, undefined) : undefined;
  const blockFrom = says && 'report' in says ? ' (read from the chain)' : '';
  if (says && 'report' in says) blockNumber = String(says.report.blockNumber);
  if (blockNumber === undefined) {
    const why = says && 'noChain' in says ? `${says.noChain}, so the block of the transaction cannot be read from it` : says && 'older' in says ? says.older : undefined;
    if (why && !ctx.io.interactive) throw usage(`missing required option --block-number: ${why}`);
    blockNumber = await need(ctx, undefined, 'block-number', 'Block number');
  }
  // Read already (for the block) and not paying it: said first, whatever else is missing (a
  // new-user trial was asked for --yes before it learnt the transaction paid something else).
  if (says && 'report' in says && !says.report.matches && !asking(ctx)) throw new AppError('conflict', `${says.report.message}; nothing was changed`);
  const summary: [string, string][] = [['withdrawal', logId]];
  let from: string | undefined;
  if (asking(ctx)) {
    // The same rows locally and remotely: the record and the balance come through the service.
    // Not there, or no longer pending: refused before the question, in the operation's words
    // (which checks again on the state it finds). Another failure to read leaves it to the operation.
    const w = await service.getWithdrawal(logId, ctx.globals.mchId).catch((e) => (isNotFound(e) ? Promise.reject(e) : undefined));
    if (w) {
      withdrawalAfter(w.status, 'confirm');
      from = w.status;
      const b = await service.balance(w.uid, { mchId: w.mchId });
      summary.push(
        ['pays out', `${w.amount} ${b.asset} to ${w.to} (${w.chainType} ${w.chainId}, token ${w.token})`],
        ['user', `${w.uid}: the hold of ${w.amount} ${b.asset} is paid out; available stays ${b.available} ${b.asset}`],
        ['held', beforeAfter(b.held, w.amount, -1, b.asset)],
      );
      if (unverified) summary.push(['chain', `NOT verified on chain: ${reason}`]);
      else {
        // Not read yet (a block given, or asked for): read in it now. A malformed block number is
        // refused by the operation itself, with its usual message.
        if ((!says || 'older' in says) && /^[1-9][0-9]{0,15}$/.test(blockNumber)) says = await ask(ctx, service, logId, txHash, blockNumber);
        if (says && 'report' in says) await preview(ctx, summary, says.report);
        else if (says && 'noChain' in says) summary.push(['chain', `${says.noChain}: recorded as not verified on chain`]);
      }
    }
  }
  if (from) {
    const waits = says !== undefined && 'report' in says && !says.report.deep;
    summary.push(['status', waits ? `${from}, with this transaction, until its confirmations; then CONFIRMED by the watcher` : `${from} -> CONFIRMED`]);
  }
  summary.push(['transaction', `${txHash} in block ${blockNumber}${blockFrom}`]);
  await confirmChange(ctx, 'Confirm withdrawal', summary);
  const input = { mchId: ctx.globals.mchId, logId, txHash, blockNumber };
  const w = local ? await local.confirmWithdrawalUnverified(input, reason!) : await service.confirmWithdrawal(input);
  if (ctx.globals.json) return printWithdrawal(ctx, w);
  // The record read back with how the confirmation was trusted: a confirmation the chain was
  // not asked about (no rpcUrl, or --unverified) says so, not only in withdraw show.
  const shown = await service.getWithdrawal(w.id, ctx.globals.mchId).catch(() => w);
  await printWithdrawal(ctx, shown);
  if ('verification' in shown && shown.verification === 'unverified') {
    ctx.io.stderr.write(`warning: confirmed without checking the transaction on chain (${shown.verificationNote ?? 'no reason recorded'}): make sure it pays this withdrawal\n`);
  }
  if (w.status === 'PENDING' && w.txHash !== null) {
    await success(ctx, `accepted: transaction ${w.txHash} matches but is short of its confirmations; the watcher (cryptopay serve or cryptopay watch) confirms the withdrawal when they are reached`);
  }
}
