import type { Context } from '../context.js';
import { printJson, printTable } from './output.js';

export async function run(ctx: Context): Promise<void> {
  const registry = await (await ctx.local('chains')).registry();
  const data = registry.chains().map((c) => ({ ...c, tokens: registry.tokens().filter((t) => t.chainId === c.chainId) }));
  if (ctx.globals.json) return printJson(ctx, data);
  await printTable(
    ctx,
    ['chainId', 'type', 'name', 'confirmations', 'rpc', 'tokens'],
    data.map((c) => [c.chainId, c.chainType, c.development ? `${c.name} [development: test money only]` : c.name, c.confirmations, c.rpcUrl ? 'yes' : 'no', c.tokens.map((t) => `${t.symbol} ${t.address}`).join(', ')]),
  );
}
