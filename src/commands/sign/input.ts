import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
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
    body = parsed as Record<string, unknown>;
  }
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw usage(`field ${JSON.stringify(f)} is not key=value`);
    body[f.slice(0, eq)] = f.slice(eq + 1);
  }
  return body;
}

async function readStdin(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

/** The merchant secret: --secret-file or CRYPTOPAY_SECRET, never a plain flag. */
export function readSecret(ctx: Context): string | undefined {
  return readSecretFile(ctx.globals.secretFile) ?? (ctx.env.CRYPTOPAY_SECRET || undefined);
}

export function requireSecret(ctx: Context): string {
  const s = readSecret(ctx);
  if (!s) throw new AppError('usage', 'no merchant secret: set CRYPTOPAY_SECRET or pass --secret-file FILE');
  return s;
}
