import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import { duplicateKey, duplicateRefusal } from '../../core/json-keys.js';
import { NONCE_PATTERN } from '../../core/nonce.js';
import { readSecretFile } from '../../remote/secret-file.js';

/** The body to sign: --body JSON, else key=value fields, else JSON on stdin. */
export async function readBody(ctx: Context, opts: { body?: string }, fields: string[]): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  let source = opts.body;
  if (source === undefined && fields.length === 0) {
    if (ctx.io.interactive) throw usage('give the body with --body JSON, key=value fields, or on stdin');
    source = await readStdin(ctx);
  }
  if (source !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(source);
    } catch (e) {
      throw usage(`the body is not valid JSON: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw usage('the body must be a JSON object');
    const twice = duplicateKey(source, parsed);
    if (twice !== undefined) throw usage(`${duplicateRefusal(twice)}, so none is signed`);
    body = parsed as Record<string, unknown>;
  }
  const given = new Map<string, string>();
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw usage(`field ${JSON.stringify(f)} is not key=value`);
    const key = f.slice(0, eq);
    const first = given.get(key);
    if (first !== undefined) throw usage(`field ${key} is given twice (${first}, ${f}): say which one to sign`);
    given.set(key, f);
    // An own property: `body[key] = …` would set the prototype for __proto__ and drop the field.
    Object.defineProperty(body, key, { value: f.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  // What the server would refuse is refused here, not signed (decisions §1).
  if (Object.hasOwn(body, '__proto__')) throw usage('__proto__ is not a field of any request: the server refuses it');
  if (Object.hasOwn(body, 'nonce') && !NONCE_PATTERN.test(String(body.nonce))) {
    throw usage('nonce must be 1 to 64 characters of A-Z a-z 0-9 _ . : - (no & or =: they would let a signed body be re-split); the server refuses any other');
  }
  return body;
}

async function readStdin(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The merchant secret and merchant: --secret-file or CRYPTOPAY_SECRET (never a plain flag), else
 * those of the profile in force (--profile, CRYPTOPAY_PROFILE or `profile use`): a developer who
 * set one up has the secret there and should not have to export it again (an integrator review).
 */
export async function readSecret(ctx: Context): Promise<{ secret: string; mchId?: string; from?: string } | undefined> {
  const given = readSecretFile(ctx.globals.secretFile) ?? (ctx.env.CRYPTOPAY_SECRET || undefined);
  if (given) return { secret: given };
  const remote = await ctx.remoteTarget();
  if (!remote?.secret) return undefined;
  return { secret: remote.secret, from: remote.secretSource ?? remote.source, ...(remote.mchId ? { mchId: remote.mchId } : {}) };
}

export async function requireSecret(ctx: Context): Promise<{ secret: string; mchId?: string; from?: string }> {
  const s = await readSecret(ctx);
  if (!s) throw new AppError('usage', 'no merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, or use a profile that has one (cryptopay profile --help)');
  return s;
}
