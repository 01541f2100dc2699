import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { canonicalString, verify } from '../../signing/index.js';
import { printJson, printRecord } from '../output.js';
import { readBody, requireSecret } from './input.js';

export async function run(ctx: Context, opts: { body?: string; explain?: boolean }, fields: string[] = []): Promise<number> {
  const { secret } = await requireSecret(ctx);
  const body = await readBody(ctx, opts, fields);
  if (typeof body.sign !== 'string' || !body.sign) throw usage('the body carries no sign field to verify');
  let canonical: string;
  try {
    canonical = canonicalString(body);
  } catch (e) {
    throw usage((e as Error).message);
  }
  const valid = verify(body, secret);
  if (ctx.globals.json) printJson(ctx, { valid });
  else {
    if (opts.explain) await printRecord(ctx, [['canonical', `${canonical}<secret>`]]);
    if (valid) ctx.io.stdout.write('signature valid\n');
    else ctx.io.stderr.write('error: signature does not match this body and secret\n');
  }
  return valid ? 0 : 1;
}
