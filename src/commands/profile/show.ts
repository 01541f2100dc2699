import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { readConfig } from '../../remote/profiles.js';
import { printJson, printRecord } from '../output.js';

/** One profile: where it sends operations, as whom, and where its secret comes from (never the secret). */
export async function run(ctx: Context, _opts: unknown, name: string): Promise<void> {
  const config = readConfig(ctx.env);
  const p = config.profiles[name];
  if (!p) throw usage(`there is no profile named ${name}: see cryptopay profile list`);
  const view = {
    name,
    active: config.active === name,
    remote: p.remote,
    mchId: p.mchId ?? null,
    secret: p.secret ? 'stored' : p.secretFile ? `file ${p.secretFile}` : 'none',
    timeout: p.timeout ?? null,
    insecureHttp: p.insecureHttp === true,
  };
  if (ctx.globals.json) return printJson(ctx, view);
  await printRecord(ctx, [
    ['name', view.name],
    ['active', view.active ? 'yes' : 'no'],
    ['remote', view.remote],
    ['mchId', view.mchId],
    ['secret', view.secret === 'stored' ? 'stored in the config file (not shown)' : view.secret],
    ['timeout', view.timeout ?? '10s (default)'],
    ['plain http', view.insecureHttp ? 'allowed to another host (--insecure-http)' : 'only to this machine'],
  ]);
}
