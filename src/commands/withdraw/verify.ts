import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { checked } from '../common.js';
import type { OperatorExtensions } from '../../core/service.js';
import { printJson, printRecord } from '../output.js';
import { actForOwner } from '../owner.js';
import { chainRows } from './chain-rows.js';

/**
 * Re-reads a withdrawal's transaction from the chain and reports (issue #12), locally or through
 * the remote's extension endpoint. Changes nothing; a transaction that does not (or no longer)
 * pay the withdrawal exits 1, so a script can alert.
 */
export async function run(ctx: Context, opts: { txHash?: string; blockNumber?: string }, id: string): Promise<void> {
  const txHash = checked(opts.txHash, 'tx-hash') || undefined;
  const blockNumber = checked(opts.blockNumber, 'block-number') || undefined;
  if (blockNumber !== undefined && txHash === undefined) throw usage('--block-number goes with --tx-hash: the transaction to look for in that block');
  await actForOwner(ctx, { withdrawal: id });
  const service = (await ctx.service()) as unknown as OperatorExtensions;
  // A transaction not recorded yet: what confirm would find, before confirming with it.
  const r = await service.verifyWithdrawal({ mchId: ctx.globals.mchId, id, ...(txHash ? { txHash } : {}), ...(blockNumber ? { blockNumber: Number(blockNumber) } : {}) });
  if (ctx.globals.json) printJson(ctx, r);
  else await printRecord(ctx, [['withdrawal', `${r.id} (${r.status})`], ...chainRows(r)]);
  if (!r.matches) throw new AppError('conflict', `withdrawal ${id}: ${r.message}`);
}
