import type { Context } from '../../context.js';
import { printJson } from '../output.js';

export async function run(ctx: Context): Promise<number> {
  const violations = await (await ctx.local('ledger check')).check();
  if (ctx.globals.json) printJson(ctx, { ok: violations.length === 0, violations });
  else if (violations.length === 0) ctx.io.stdout.write('ledger ok: every invariant holds\n');
  else for (const v of violations) ctx.io.stderr.write(`violation: ${v}\n`);
  return violations.length === 0 ? 0 : 1;
}
