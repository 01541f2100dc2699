import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { isPlainAmount } from '../../core/money.js';
import { canonicalString, sign } from '../../signing/index.js';
import { printJson, printRecord } from '../output.js';
import { readBody, requireSecret } from './input.js';

export async function run(ctx: Context, opts: { body?: string; fill?: boolean; explain?: boolean }, fields: string[] = []): Promise<void> {
  const { secret, mchId, from } = await requireSecret(ctx);
  // Which secret signs is said when it is not one given for this command (a production profile's).
  if (from) ctx.io.stderr.write(`note: signed with the secret of ${from}\n`);
  const body = await readBody(ctx, opts, fields);
  if (opts.fill) {
    body.timestamp ??= ctx.now();
    body.nonce ??= randomBytes(12).toString('hex');
    const merchant = ctx.globals.mchId ?? mchId;
    // --mch-id and a field mchId= naming two merchants: which one signs is not guessed (a field
    // given twice is refused the same way).
    if (ctx.globals.mchId !== undefined && body.mchId !== undefined && body.mchId !== ctx.globals.mchId) {
      throw usage(`--mch-id ${ctx.globals.mchId} and the body's merchant ${String(body.mchId)} are two merchants: give one`);
    }
    if (merchant) body.mchId ??= merchant;
    // Signed as given, but said: create order refuses a body without one (a new-user trial).
    else if (body.mchId === undefined) {
      ctx.io.stderr.write('note: this body has no mchId (give --mch-id, CRYPTOPAY_MCH_ID or mchId=): create order needs it, and so does every request to a service with more than one merchant (signed as given)\n');
    }
  }
  let canonical: string;
  try {
    canonical = canonicalString(body);
  } catch (e) {
    throw usage((e as Error).message);
  }
  // Signed as given (a developer may want a refusal to test), but not silently: the service
  // refuses an amount that is not a plain decimal string, whatever its signature.
  if ('amount' in body && !isPlainAmount(body.amount) && !ctx.globals.json) {
    const shown = typeof body.amount === 'string' ? JSON.stringify(body.amount) : String(body.amount);
    ctx.io.stderr.write(`warning: amount ${shown} is not a plain decimal string such as "10.5": the service refuses it (signed as given)\n`);
  }
  // Signed as given, but a merchant given and left out is said (a new-user trial sent
  // `sign --mch-id M… oid=… --json` to the API: --mch-id had gone nowhere, and the fields every
  // request needs were missing).
  if (!opts.fill && ctx.globals.mchId !== undefined && body.mchId === undefined) {
    const missing = ['mchId', 'timestamp', 'nonce'].filter((k) => body[k] === undefined);
    ctx.io.stderr.write(`note: merchant ${ctx.globals.mchId} (--mch-id or CRYPTOPAY_MCH_ID) goes into the body only with --fill: this body has no ${missing.join(', ')}, and the service refuses a request without them (signed as given)\n`);
  }
  const signature = sign(body, secret);
  if (ctx.globals.json) return printJson(ctx, { ...body, sign: signature });
  // With --fill the timestamp and nonce were made here: the signature alone would be useless, so
  // the body it signed is printed, one line, ready for `curl -d`.
  if (opts.fill && !opts.explain) {
    ctx.io.stdout.write(`${JSON.stringify({ ...body, sign: signature })}\n`);
    return;
  }
  if (opts.explain) {
    await printRecord(ctx, [
      ['canonical', `${canonical}<secret>`],
      ['sign', signature],
    ]);
    return;
  }
  ctx.io.stdout.write(`${signature}\n`);
}
