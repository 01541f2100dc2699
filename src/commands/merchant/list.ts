import type { Context } from '../../context.js';
import { printJson, printTable } from '../output.js';

export async function run(ctx: Context): Promise<void> {
  const list = await (await ctx.local('merchant list')).listMerchants();
  if (ctx.globals.json) return printJson(ctx, list);
  await printTable(
    ctx,
    ['mchId', { name: 'name', text: true }, 'wallets', 'lifetime', 'rate limit', 'addresses'],
    list.map((m) => [
      m.mchId,
      m.name,
      [m.evmXpub ? 'EVM' : '', m.tronXpub ? 'TRON' : ''].filter(Boolean).join('+'),
      m.orderLifetime,
      m.rateLimit === 0 ? 'none' : `${m.rateLimit}/min`,
      m.addressesIssued.EVM + m.addressesIssued.TRON,
    ]),
  );
}
