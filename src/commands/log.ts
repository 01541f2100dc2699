import type { Context } from '../context.js';
import { FOLLOW_MAX, type AuditView } from '../core/types.js';
import type { OperatorService } from '../core/service.js';
import type { LogFilter } from '../store/audit-log.js';
import { pageNote, parseCursor, parseLimit, parseTimeRange } from './common.js';
import { usage } from '../core/errors.js';
import { formatTime, jsonLine, printJson, printTable, shownText } from './output.js';
import { orderIdOf, withdrawalIdOf } from './order/ref.js';

/** An entry's detail as key=value words; a nested value as its JSON (a new-user trial read `payoutSearched=[object Object]`). */
const detailText = (e: AuditView) => Object.entries(e.detail).filter(([, v]) => v !== null && v !== '').map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ');

/** How often `log --follow` looks for new entries. */
const FOLLOW_POLL_MS = 500;

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<void> {
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  const limit = parseLimit(text(opts.limit));
  const range = parseTimeRange({ since: text(opts.since), until: text(opts.until) }, ctx.now());
  const cursor = parseCursor(text(opts.cursor));
  const follow = opts.follow === true;
  if (follow && (cursor !== undefined || range.until !== undefined)) throw usage('--follow shows what comes next: it does not go with --cursor or --until');
  if (cursor !== undefined && !/^[1-9][0-9]{0,15}$/.test(cursor)) throw usage('--cursor of log is the entry number the previous page named');
  // --order takes an order's id or its oid, like order show; an order or withdrawal that is not
  // there is refused, not answered with an empty log.
  const filter: LogFilter = {
    orderId: await orderIdOf(ctx, text(opts.order)), withdrawalId: await withdrawalIdOf(ctx, text(opts.withdrawal)), mchId: ctx.globals.mchId, ...range,
  };
  const service = await ctx.service();
  if (follow) return followLog(ctx, service, filter, limit ?? 10);
  const page = await service.pageLog({ ...filter, limit, cursor });
  if (ctx.globals.json) return printJson(ctx, page.items);
  await printTable(
    ctx,
    ['time', { name: 'actor', text: true, minWidth: 8 }, { name: 'action', text: true, minWidth: 16 }, 'subject', { name: 'detail', text: true, below: true }],
    page.items.map((e) => [formatTime(e.at), e.actor, e.action, e.subject, detailText(e)]),
  );
  pageNote(ctx, page);
}

/**
 * `log --follow`: the last `last` entries, oldest first, then each new one as it is committed, one
 * line each (one JSON object per line under --json), until Ctrl-C or SIGTERM, which end it
 * quietly with exit 0.
 */
async function followLog(ctx: Context, service: OperatorService, filter: LogFilter, last: number): Promise<void> {
  let stopped = false;
  const stop = ctx.stopSignal().then(() => {
    stopped = true;
  });
  // Every field through shownText, as every other view of the log: a merchant's remark or memo
  // in an entry's detail may hold escapes or newlines (an attacker review erased a real line,
  // wrote a forged one and set the operator's clipboard with a refund remark here).
  const print = (e: AuditView) => {
    if (ctx.globals.json) return void ctx.io.stdout.write(jsonLine(e));
    const [actor, action, subject, detail] = [e.actor, e.action, e.subject, detailText(e)].map((f) => shownText(ctx, f));
    if (!ctx.io.isTTY) ctx.io.stdout.write(`${[formatTime(e.at), actor, action, subject, detail].join('\t')}\n`);
    else ctx.io.stdout.write(`${formatTime(e.at)}  ${actor!.padEnd(10)}  ${action!.padEnd(24)}  ${subject}  ${detail}\n`);
  };
  // The ledger (or the remote's) answers what was committed after a mark, and the next mark:
  // asking from each mark in turn misses nothing and shows nothing twice (store/audit-log.ts).
  const first = await service.followLog({ ...filter, limit: last });
  first.entries.forEach(print);
  let mark = first.mark;
  if (first.entries.length === 0 && !ctx.globals.json && ctx.io.isTTY) ctx.io.stderr.write('waiting for new entries (Ctrl-C to stop)\n');
  while (!stopped) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stop, new Promise<void>((resolve) => (timer = setTimeout(resolve, FOLLOW_POLL_MS)))]);
    clearTimeout(timer);
    // A full answer means more are waiting: ask again at once.
    for (let more = true; more && !stopped; ) {
      const next = await service.followLog({ ...filter, after: mark });
      next.entries.forEach(print);
      more = next.mark > mark && next.entries.length >= FOLLOW_MAX;
      mark = next.mark;
    }
  }
}
