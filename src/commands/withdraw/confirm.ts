import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { confirmChange, need } from '../common.js';
import { printRecord, success } from '../output.js';
import { chainRows } from './chain-rows.js';
import { printWithdrawal } from '../views.js';

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>, logId: string): Promise<void> {
  const unverified = opts.unverified === true;
  const reason = typeof opts.reason === 'string' ? opts.reason.trim() : undefined;
  if (unverified && !reason) throw usage('--unverified needs --reason TEXT: why the chain is not asked (kept in the audit log)');
  if (!unverified && opts.reason !== undefined) throw usage('--reason goes with --unverified');
  const txHash = await need(ctx, opts.txHash as string | undefined, 'tx-hash', 'Payout transaction hash');
  const blockNumber = await need(ctx, opts.blockNumber as string | undefined, 'block-number', 'Block number');
  // Skipping the chain is for an operator at a local ledger only: the API can never do it.
  const local = unverified || !ctx.isRemote() ? await ctx.local(unverified ? 'withdraw confirm --unverified' : 'withdraw confirm') : undefined;
  const service = local ?? (await ctx.service());
  const summary: [string, string][] = [['withdrawal', logId]];
  let settlesNow = true;
  if (local) {
    const w = await local.getWithdrawal(logId, ctx.globals.mchId).catch(() => undefined);
    if (w) {
      const b = await local.balance(w.uid, { mchId: w.mchId });
      summary.push(
        ['pays out', `${w.amount} to ${w.to} (${w.chainType} ${w.chainId}, token ${w.token})`],
        ['user', `${w.uid}: ${w.amount} of the ${b.held} held is paid out; available stays ${b.available}`],
      );
      // Only worth a node round trip when someone is about to read it and answer.
      const asking = !ctx.globals.yes && ctx.io.interactive;
      const chain = (await local.registry()).chain(w.chainId);
      if (unverified) {
        summary.push(['chain', `NOT verified on chain: ${reason}`]);
      } else if (!chain.rpcUrl) {
        summary.push(['chain', `chain ${chain.chainId} (${chain.name}) has no rpcUrl: recorded as not verified on chain`]);
      } else if (asking && /^[1-9][0-9]{0,15}$/.test(blockNumber)) {
        const check = await local.verifyWithdrawal(logId, ctx.globals.mchId, { txHash, blockNumber: Number(blockNumber) });
        summary.push(...chainRows(check));
        if (check.verdict.kind !== 'match') {
          ctx.io.stdout.write('Confirm withdrawal:\n');
          await printRecord(ctx, summary);
          throw new AppError('conflict', `${check.message}; nothing was changed`);
        }
        settlesNow = check.verdict.deep;
      }
      summary.push(['status', settlesNow ? `${w.status} -> CONFIRMED` : `${w.status}, with this transaction, until its confirmations; then CONFIRMED by the watcher`]);
    }
  }
  summary.push(['transaction', `${txHash} in block ${blockNumber}`]);
  await confirmChange(ctx, 'Confirm withdrawal', summary);
  const input = { mchId: ctx.globals.mchId, logId, txHash, blockNumber };
  const w = unverified ? await local!.confirmWithdrawalUnverified(input, reason!) : await service.confirmWithdrawal(input);
  await printWithdrawal(ctx, w);
  if (w.status === 'PENDING') {
    await success(ctx, `accepted: transaction ${w.txHash} matches but is short of its confirmations; the watcher (cryptopay serve or cryptopay watch) confirms the withdrawal when they are reached`);
  }
}
