import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { readConfig, writeConfig } from '../../remote/profiles.js';
import { success, warn } from '../output.js';

export async function run(ctx: Context, opts: { none?: boolean }, name?: string): Promise<void> {
  const config = readConfig(ctx.env);
  if (opts.none) {
    if (name) throw usage('give a profile name or --none, not both');
    config.active = null;
    writeConfig(ctx.env, config);
    await success(ctx, 'no active profile: operations run on the local ledger');
    return;
  }
  if (!name) throw usage('name the profile to use, or pass --none for the local ledger');
  if (!config.profiles[name]) throw usage(`there is no profile named ${name}: see cryptopay profile list`);
  config.active = name;
  writeConfig(ctx.env, config);
  await success(ctx, `active profile: ${name} (${config.profiles[name]!.remote})`);
  await overriddenByShell(ctx);
}

/**
 * The environment decides before the active profile (src/remote/choose.ts): an operator who
 * makes a profile active in a shell that sets CRYPTOPAY_DB or CRYPTOPAY_REMOTE is told where
 * operations really go there.
 */
export async function overriddenByShell(ctx: Context): Promise<void> {
  const set = (['CRYPTOPAY_DB', 'CRYPTOPAY_REMOTE'] as const).filter((v) => ctx.env[v]);
  if (set.length === 0) return;
  await warn(ctx, `note: ${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set in this shell and ${set.length > 1 ? 'decide' : 'decides'} before the active profile: unset ${set.length > 1 ? 'them' : 'it'} (or pass --profile) for operations here to go to the profile`);
}
