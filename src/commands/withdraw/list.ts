import type { Context } from '../../context.js';
import { WITHDRAWAL_STATUSES } from '../../core/types.js';
import { oneOf, pageNote, parseCursor, parseLimit, parseTimeRange } from '../common.js';
import { formatTime, merchantColumn, printJson, printTable, tableFormat, type Column } from '../output.js';
import { amountIn, assetOf, commandRegistry } from './asset.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const status = oneOf(opts.status, WITHDRAWAL_STATUSES, 'status');
  const limit = parseLimit(opts.limit);
  const filter = { mchId: ctx.globals.mchId, status, uid: opts.uid, ...parseTimeRange(opts, ctx.now()), cursor: parseCursor(opts.cursor), limit };
  const page = await (await ctx.service()).pageWithdrawals(filter);
  if (ctx.globals.json) return printJson(ctx, page.items);
  const registry = await commandRegistry(ctx, 'withdraw list');
  // At 80 columns the id, who, how much, where to and the state stay; the rest goes first.
  // A spreadsheet gets the amount as a number and its asset in a column of its own, as order
  // list's amounts are (a new-user trial: "12.5 USDT" in a cell is text to a spreadsheet).
  const sheet = tableFormat(ctx) === 'csv';
  const amount: Array<string | Column> = sheet ? ['amount', 'asset'] : [{ name: 'amount', priority: 9 }];
  const head: Array<string | Column> = ['id', { name: 'uid', text: true, minWidth: 8, priority: 8 }, ...amount, { name: 'to', priority: 7 }, { name: 'chain', priority: 6 }, { name: 'status', text: true, minWidth: 10, priority: 9 }, { name: 'tx hash', priority: 3 }, { name: 'created', priority: 2 }];
  const rows = page.items.map((w) => [
    w.id, w.uid, ...(sheet ? [w.amount, assetOf(registry, w) ?? null] : [amountIn(registry, w)]),
    w.to, `${w.chainType} ${w.chainId}`, w.status === 'PENDING' && w.txHash ? 'PENDING (confirmations)' : w.status, w.txHash, formatTime(w.createdAt),
  ]);
  merchantColumn(page.items, head, rows);
  await printTable(ctx, head, rows);
  pageNote(ctx, page);
}
