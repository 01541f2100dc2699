import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import { printJson, printRecord } from '../output.js';
import { chainRows } from './chain-rows.js';

/**
 * Re-reads a withdrawal's transaction from the chain and reports (issue #12). Changes nothing;
 * a transaction that does not (or no longer) pays the withdrawal exits 1, so a script can alert.
 */
export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const local = await ctx.local('withdraw verify');
  const c = await local.verifyWithdrawal(id, ctx.globals.mchId);
  const matches = c.verdict.kind === 'match';
  if (ctx.globals.json) {
    printJson(ctx, {
      id: c.withdrawal.id, status: c.withdrawal.status, verification: c.withdrawal.verification, txHash: c.expected.txHash, blockNumber: c.expected.blockNumber,
      matches, confirmed: matches && c.verdict.kind === 'match' && c.verdict.deep, message: c.message,
      expected: { ...c.expected, rawAmount: c.expected.rawAmount.toString() }, chain: c.observed,
    });
  } else {
    await printRecord(ctx, [['withdrawal', `${c.withdrawal.id} (${c.withdrawal.status})`], ...chainRows(c)]);
  }
  if (!matches) throw new AppError('conflict', `withdrawal ${id}: ${c.message}`);
}
