import type { Context } from '../context.js';
import { parseLimit } from './common.js';
import { formatTime, printJson, printTable } from './output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const entries = await (await ctx.service()).log({ orderId: opts.order, withdrawalId: opts.withdrawal, mchId: ctx.globals.mchId, limit: parseLimit(opts.limit) });
  if (ctx.globals.json) return printJson(ctx, entries);
  await printTable(
    ctx,
    ['time', { name: 'actor', text: true, minWidth: 8 }, { name: 'action', text: true, minWidth: 16 }, 'subject', { name: 'detail', text: true, below: true }],
    entries.map((e) => [formatTime(e.at), e.actor, e.action, e.subject, Object.entries(e.detail).filter(([, v]) => v !== null && v !== '').map(([k, v]) => `${k}=${v}`).join(' ')]),
  );
}
