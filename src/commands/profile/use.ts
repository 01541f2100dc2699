import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { readConfig, writeConfig } from '../../remote/profiles.js';
import { success } from '../output.js';

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
}
