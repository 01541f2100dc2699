import type { Context } from '../../context.js';
import { readConfig } from '../../remote/profiles.js';
import { printJson, printTable } from '../output.js';

export async function run(ctx: Context): Promise<void> {
  const config = readConfig(ctx.env);
  const rows = Object.entries(config.profiles).map(([name, p]) => ({
    name,
    active: config.active === name,
    remote: p.remote,
    mchId: p.mchId ?? null,
    secret: p.secret ? 'stored' : p.secretFile ? `file ${p.secretFile}` : 'none',
    timeout: p.timeout ?? null,
    ...(p.insecureHttp ? { insecureHttp: true } : {}),
  }));
  if (ctx.globals.json) return printJson(ctx, rows);
  await printTable(ctx, ['active', 'name', 'remote', 'mchId', 'secret', 'timeout'], rows.map((r) => [r.active ? '*' : '', r.name, r.insecureHttp ? `${r.remote} (insecure http allowed)` : r.remote, r.mchId, r.secret, r.timeout]));
}
