import type { Context } from '../../context.js';
import { WITHDRAWAL_STATUSES } from '../../core/types.js';
import { oneOf, pageNote, parseCursor, parseLimit, parseTimeRange } from '../common.js';
import { formatTime, merchantColumn, printJson, printTable, tableFormat, type Column } from '../output.js';
import { amountIn, commandRegistry } from './asset.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, WITHDRAWAL_STATUSES, 'status');
  const limit = parseLimit(opts.limit);
  const filter = { mchId: ctx.globals.mchId, status, uid: opts.uid, ...parseTimeRange(opts, ctx.now()), cursor: parseCursor(opts.cursor), limit };
  const page = await (await ctx.service()).pageWithdrawals(filter);
  if (ctx.globals.json) return printJson(ctx, page.items);
  const registry = await commandRegistry(ctx, 'withdraw list');
  // At 80 columns the id, who, how much, where to and the state stay; the rest goes first.
  const head: Array<string | Column> = ['id', { name: 'uid', text: true, minWidth: 8, priority: 8 }, { name: 'amount', priority: 9 }, { name: 'to', priority: 7 }, { name: 'chain', priority: 6 }, { name: 'status', text: true, minWidth: 10, priority: 9 }, { name: 'tx hash', priority: 3 }, { name: 'created', priority: 2 }];
  const rows = page.items.map((w) => [w.id, w.uid, amountIn(registry, w), w.to, `${w.chainType} ${w.chainId}`, w.status === 'PENDING' && w.txHash ? 'PENDING (confirmations)' : w.status, w.txHash, formatTime(w.createdAt)]);
  // A spreadsheet gets the amount as a number and its asset in a column of its own, as order
  // list's amounts are (a new-user trial: "12.5 USDT" in a cell is text to a spreadsheet).
  if (tableFormat(ctx) === 'csv') {
    head.splice(3, 0, 'asset');
    page.items.forEach((w, i) => rows[i]!.splice(2, 1, w.amount, w.asset ?? registry.findToken(w.chainId, w.token)?.asset ?? null));
  }
  merchantColumn(page.items, head, rows);
  await printTable(ctx, head, rows);
  pageNote(ctx, page);
}
