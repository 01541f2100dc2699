import type { Context } from '../context.js';
import type { AuditView } from '../core/types.js';
import type { LogFilter, LocalPaymentService } from '../store/local-service.js';
import { pageNote, pageOfList, parseCursor, parseLimit, parseTimeRange } from './common.js';
import { usage } from '../core/errors.js';
import { formatTime, printJson, printTable } from './output.js';
import { orderIdOf } from './order/ref.js';

const detailText = (e: AuditView) => Object.entries(e.detail).filter(([, v]) => v !== null && v !== '').map(([k, v]) => `${k}=${v}`).join(' ');

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
  // Following reads the ledger's own entry numbers as they are committed: a local ledger only.
  const local = follow ? await ctx.local('log --follow') : undefined;
  // --order takes an order's id or its oid, like order show.
  const filter: LogFilter = { orderId: await orderIdOf(ctx, text(opts.order)), withdrawalId: text(opts.withdrawal), mchId: ctx.globals.mchId, ...range };
  if (local) return followLog(ctx, local, filter, limit ?? 10);
  const page = await pageOfList(
    ctx,
    limit,
    ctx.isRemote() ? undefined : async () => (await ctx.local('log')).pageLog({ ...filter, limit, cursor }),
    async () => (await ctx.service()).log({ ...filter, limit, cursor }),
  );
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
async function followLog(ctx: Context, service: LocalPaymentService, filter: LogFilter, last: number): Promise<void> {
  let stopped = false;
  const stop = ctx.stopSignal().then(() => {
    stopped = true;
  });
  const print = (e: AuditView) => {
    if (ctx.globals.json) ctx.io.stdout.write(`${JSON.stringify(e)}\n`);
    else if (!ctx.io.isTTY) ctx.io.stdout.write(`${[formatTime(e.at), e.actor, e.action, e.subject, detailText(e)].join('\t')}\n`);
    else ctx.io.stdout.write(`${formatTime(e.at)}  ${e.actor.padEnd(10)}  ${e.action.padEnd(24)}  ${e.subject}  ${detailText(e)}\n`);
  };
  // Entries are numbered in commit order (one writer at a time): a mark taken first, then
  // everything up to it, then everything after it, misses nothing and shows nothing twice.
  let mark = service.lastLogId();
  const recent = mark === 0 ? [] : (await service.pageLog({ ...filter, limit: last, cursor: String(mark + 1) })).items.reverse();
  recent.forEach(print);
  if (recent.length === 0 && !ctx.globals.json && ctx.io.isTTY) ctx.io.stderr.write('waiting for new entries (Ctrl-C to stop)\n');
  while (!stopped) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stop, new Promise<void>((resolve) => (timer = setTimeout(resolve, FOLLOW_POLL_MS)))]);
    clearTimeout(timer);
    if (stopped) break;
    const upTo = service.lastLogId();
    if (upTo === mark) continue;
    for (const e of await service.logAfter({ ...filter, afterId: mark, upTo })) print(e);
    mark = upTo;
  }
}
