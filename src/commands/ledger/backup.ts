import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { backupLedger } from '../../store/backup.js';
import { printJson, printRecord } from '../output.js';

export async function run(ctx: Context, _opts: unknown, target: string): Promise<number> {
  const service = await ctx.local('ledger backup');
  const report = await backupLedger(service.ledger, resolve(target));
  if (ctx.globals.json) printJson(ctx, { ok: report.violations.length === 0, ...report });
  else {
    await printRecord(ctx, [
      ['backup', report.path],
      ['size', `${report.bytes} bytes (${report.pages} pages), mode 600`],
      ['integrity', report.integrity],
      ['invariants', report.violations.length === 0 ? 'every invariant holds' : `${report.violations.length} violated (the copy is kept)`],
    ]);
    for (const v of report.violations) ctx.io.stderr.write(`violation: ${v}\n`);
  }
  return report.violations.length === 0 ? 0 : 1;
}
