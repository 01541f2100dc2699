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

/**
 * What the chain says next to what the withdrawal expects, added to the question; a mismatch is
 * shown and refused before anything is asked. Returns whether the confirmation settles at once.
 */
async function preview(ctx: Context, ext: OperatorExtensions, summary: [string, string][], id: string, txHash: string, blockNumber: string, remote = false): Promise<VerificationReport | undefined> {
  // A malformed block number is refused by the operation itself, with its usual message.
  if (!/^[1-9][0-9]{0,15}$/.test(blockNumber)) return undefined;
  let r: VerificationReport;
  try {
    r = await ext.verifyWithdrawal({ mchId: ctx.globals.mchId, id, txHash, blockNumber: Number(blockNumber) });
  } catch (e) {
    // The remote's chain has no rpcUrl (invalid): its confirmation is not checked there either.
    if (remote && e instanceof AppError && e.kind === 'invalid' && /has no rpcUrl/.test(e.message)) {
      summary.push(['chain', e.message.replace(/: its transactions cannot be checked$/, ': recorded as not verified on chain')]);
      return undefined;
    }
    throw e;
  }
  summary.push(...chainRows(r));
  if (!r.matches) {
    ctx.io.stdout.write('Confirm withdrawal:\n');
    await printRecord(ctx, summary);
    throw new AppError('conflict', `${r.message}; nothing was changed`);
  }
  return r;
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
  const blockNumber = await need(ctx, opts.blockNumber as string | undefined, 'block-number', 'Block number');
  // Skipping the chain is for an operator at a local ledger only: the API can never do it.
  const local = unverified ? await ctx.local('withdraw confirm --unverified') : undefined;
  const service = local ?? (await ctx.service());
  const remote = ctx.isRemote() && !local;
  const summary: [string, string][] = [['withdrawal', logId]];
  let from: string | undefined;
  let report: VerificationReport | undefined;
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
      else if (remote) {
        // The service's extension endpoint reads the chain it confirms against.
        report = await preview(ctx, service, summary, logId, txHash, blockNumber, true);
      } else {
        const chain = (await (service as LocalPaymentService).registry()).chain(w.chainId);
        if (!chain.rpcUrl) summary.push(['chain', `chain ${chain.chainId} (${chain.name}) has no rpcUrl: recorded as not verified on chain`]);
        else report = await preview(ctx, service, summary, logId, txHash, blockNumber);
      }
    }
  }
  if (from) {
    const waits = report !== undefined && !report.deep;
    summary.push(['status', waits ? `${from}, with this transaction, until its confirmations; then CONFIRMED by the watcher` : `${from} -> CONFIRMED`]);
  }
  summary.push(['transaction', `${txHash} in block ${blockNumber}`]);
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
