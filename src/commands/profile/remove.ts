import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { readConfig, writeConfig } from '../../remote/profiles.js';
import { success } from '../output.js';

export async function run(ctx: Context, _opts: unknown, name: string): Promise<void> {
  const config = readConfig(ctx.env);
  if (!config.profiles[name]) throw usage(`there is no profile named ${name}: see cryptopay profile list`);
  delete config.profiles[name];
  if (config.active === name) config.active = null;
  writeConfig(ctx.env, config);
  await success(ctx, `profile ${name} removed`);
}
