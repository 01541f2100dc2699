import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { canonicalString, verify } from '../../signing/index.js';
import { printJson, printRecord } from '../output.js';
import { readBody, readSecret } from './input.js';

export async function run(ctx: Context, opts: { body?: string; explain?: boolean }, fields: string[] = []): Promise<number> {
  const given = await readSecret(ctx);
  const body = await readBody(ctx, opts, fields);
  if (typeof body.sign !== 'string' || !body.sign) throw usage('the body carries no sign field to verify');
  // No secret given: as listen does, the local ledger's secret of the body's mchId (a callback
  // body names its merchant; a new-user trial had listen accept what sign verify could not check).
  const secret = given?.secret ?? (await ledgerSecret(ctx, body.mchId));
  if (!secret) {
    throw usage('no merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, use a profile that has one, or verify a body of a merchant of the local ledger (--db)');
  }
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

/** The secret of a merchant of the local ledger, when there is a ledger and it holds that merchant. */
async function ledgerSecret(ctx: Context, mchId: unknown): Promise<string | undefined> {
  if (typeof mchId !== 'string' || !mchId || ctx.isRemote()) return undefined;
  try {
    return (await ctx.local('sign verify')).merchantSecret(mchId);
  } catch {
    // No ledger here: the usage error says what else gives a secret.
    return undefined;
  }
}
