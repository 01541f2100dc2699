import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { CALLBACK_STATUSES, type CallbackStatus } from '../../store/outbox.js';
import { pageNote, parseCursor, parseLimit } from '../common.js';
import { orderIdOf, withdrawalIdOf } from '../order/ref.js';
import { formatTime, merchantColumn, printJson, printTable, type Column } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = opts.status?.toLowerCase() as CallbackStatus | undefined;
  if (status !== undefined && !CALLBACK_STATUSES.includes(status)) throw usage(`--status must be one of ${CALLBACK_STATUSES.join(', ')}`);
  // --order takes an order's id or its oid, as log and refund list do; an order or withdrawal that
  // is not there is refused (an oid answered an empty list: a new-user trial).
  const orderId = await orderIdOf(ctx, opts.order);
  const withdrawalId = await withdrawalIdOf(ctx, opts.withdrawal);
  const page = await (await ctx.service()).pageCallbacks({
    status, orderId, withdrawalId, mchId: ctx.globals.mchId, cursor: parseCursor(opts.cursor), limit: parseLimit(opts.limit),
  });
  const list = page.items;
  if (ctx.globals.json) return printJson(ctx, list);
  const head: Array<string | Column> = ['id', 'event', 'subject', 'status', 'attempts', 'last answer', 'next attempt', 'created'];
  const rows = list.map((c) => [c.id, c.event, c.subject, c.status, c.attempts, lastAnswer(c), formatTime(c.nextAttemptAt), formatTime(c.createdAt)]);
  merchantColumn(list, head, rows);
  await printTable(ctx, head, rows);
  pageNote(ctx, page);
}

export function lastAnswer(c: { lastStatus: number | null; lastError: string | null; attempts: number }): string {
  if (c.attempts === 0) return '-';
  return c.lastStatus !== null ? String(c.lastStatus) : (c.lastError ?? 'error');
}
