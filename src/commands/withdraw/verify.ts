import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import type { OperatorExtensions } from '../../core/service.js';
import { printJson, printRecord } from '../output.js';
import { actForOwner } from '../owner.js';
import { chainRows } from './chain-rows.js';

/**
 * Re-reads a withdrawal's transaction from the chain and reports (issue #12), locally or through
 * the remote's extension endpoint. Changes nothing; a transaction that does not (or no longer)
 * pay the withdrawal exits 1, so a script can alert.
 */
export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  await actForOwner(ctx, { withdrawal: id });
  const service = (await ctx.service()) as unknown as OperatorExtensions;
  const r = await service.verifyWithdrawal({ mchId: ctx.globals.mchId, id });
  if (ctx.globals.json) printJson(ctx, r);
  else await printRecord(ctx, [['withdrawal', `${r.id} (${r.status})`], ...chainRows(r)]);
  if (!r.matches) throw new AppError('conflict', `withdrawal ${id}: ${r.message}`);
}
