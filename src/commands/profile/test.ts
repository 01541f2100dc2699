import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { readConfig } from '../../remote/profiles.js';
import { resolveRemote } from '../../remote/target.js';
import { printJson, printRecord } from '../output.js';
import { checkCredentials } from './check.js';

/**
 * `profile test [NAME]`: one signed read with the profile, as an operation would send it (the
 * secret from --secret-file, CRYPTOPAY_SECRET or the profile). Exit 0 when the remote accepts the
 * credentials, 1 when it refuses them, 3 when it cannot be reached.
 */
export async function run(ctx: Context, _opts: unknown, name?: string): Promise<void> {
  const profile = name ?? readConfig(ctx.env).active ?? undefined;
  if (!profile) throw usage('no active profile: name the profile to test (cryptopay profile list shows them)');
  // The profile itself, not a --remote, CRYPTOPAY_REMOTE or --db of this shell.
  const target = resolveRemote({ ...ctx.globals, remote: undefined, db: undefined, profile }, { ...ctx.env, CRYPTOPAY_REMOTE: undefined })!;
  const { identity, ms } = await checkCredentials(target, ctx.now);
  if (ctx.globals.json) return printJson(ctx, { profile, remote: target.url, ok: true, ...identity, ms });
  await printRecord(ctx, [
    ['profile', profile],
    ['remote', target.url],
    ['merchant', `${identity.mchId} (${identity.name})`],
    ['asset', identity.asset],
    ['answer', `credentials accepted, in ${ms} ms`],
  ]);
}
