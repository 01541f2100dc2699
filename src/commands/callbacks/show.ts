import type { Context } from '../../context.js';
import { formatTime, printJson, printRecord, printTable } from '../output.js';
import { lastAnswer } from './list.js';

export async function run(ctx: Context, _opts: unknown, id: string): Promise<void> {
  const c = await (await ctx.service()).showCallback(id, ctx.globals.mchId);
  if (ctx.globals.json) return printJson(ctx, c);
  await printRecord(ctx, [
    ['id', c.id],
    ['event', c.event],
    ['merchant', c.mchId],
    ['subject', c.subject],
    ['url', c.url],
    ['status', c.status],
    ['attempts', c.attempts],
    ['last answer', lastAnswer(c)],
    ['next attempt', formatTime(c.nextAttemptAt)],
    ['delivered', formatTime(c.deliveredAt)],
    ['created', formatTime(c.createdAt)],
    // What the event tells the merchant (signed anew at each attempt, with its time), as --json has it.
    ...Object.entries(c.payload ?? {})
      .filter(([k]) => k !== 'event' && k !== 'eventId')
      .map(([k, v]): [string, string] => [`data ${k}`, v === null ? '-' : String(v)]),
  ]);
  ctx.io.stdout.write(ctx.io.isTTY ? '\nattempts:\n' : '');
  await printTable(
    ctx,
    ['time', 'status code', 'latency', 'error', 'sent by'],
    c.history.map((a) => [formatTime(a.at), a.statusCode, `${a.latencyMs}ms`, a.error, a.by]),
  );
}
