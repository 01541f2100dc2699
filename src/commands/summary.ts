import type { Context } from '../context.js';
import { ASSETS } from '../core/assets.js';
import { REFUSED_ORDERS_LISTED, type Adjusted, type Tally, type Totals } from '../core/types.js';
import { formatTime, printJson, printRecord, type Cell } from './output.js';

/** Nothing of any asset reads as zero of each ledger asset: a bare 0 says nothing of what. */
const none = Object.keys(ASSETS).map((asset) => `0 ${asset}`).join(', ');
const totals = (t: Totals) => Object.entries(t).map(([asset, v]) => `${v} ${asset}`).join(', ') || none;
const tallied = (t: Tally) => (t.count === 0 ? 'none' : `${t.count}, ${totals(t.total)}`);
/** Only the side that moved: an adjustment that only credited says nothing of debits. */
const adjusted = (a: Adjusted | undefined, since: number) => {
  if (!a) return 'not told by this server (an earlier release)';
  if (a.count === 0) return 'none';
  const sides = [
    Object.keys(a.credited).length ? `${totals(a.credited)} credited to users` : '',
    Object.keys(a.debited).length ? `${totals(a.debited)} debited from users` : '',
  ].filter(Boolean);
  // The period starts at midnight UTC: the day is the whole of it.
  return `${a.count}, ${sides.join('; ')}: each in cryptopay log --since ${new Date(since).toISOString().slice(0, 10)}`;
};

/**
 * `cryptopay summary` (issue #15 item 10): what waits for an operator, what moved today and this
 * week (UTC, weeks from Monday), what users hold, how far behind each chain is read, and the
 * callbacks that gave up. Of one merchant with --mch-id, else of the whole ledger.
 */
export async function run(ctx: Context): Promise<void> {
  const s = await (await ctx.service()).summary({ mchId: ctx.globals.mchId });
  if (ctx.globals.json) return printJson(ctx, s);
  const p = s.pendingWithdrawals;
  const rows: [string, Cell][] = [
    ['ledger', `${s.mchId ? `merchant ${s.mchId}` : `every merchant${await whose(ctx)}`}, at ${formatTime(s.at)}`],
    ['pending withdrawals', p.count === 0 ? 'none' : `${p.count}, ${totals(p.total)}${p.confirming ? ` (${p.confirming} waiting for confirmations)` : ''}: cryptopay withdraw list --status PENDING`],
    ['today', `since ${formatTime(s.today.since)}`],
    ['  payments', tallied(s.today.payments)],
    ['  refunds', tallied(s.today.refunds)],
    ['  withdrawals', tallied(s.today.withdrawals)],
    ['  adjustments', adjusted(s.today.adjustments, s.today.since)],
    ['this week', `since ${formatTime(s.week.since)}`],
    ['  payments', tallied(s.week.payments)],
    ['  refunds', tallied(s.week.refunds)],
    ['  withdrawals', tallied(s.week.withdrawals)],
    ['  adjustments', adjusted(s.week.adjustments, s.week.since)],
    ['users hold', `available ${totals(s.balances.available)}; held for withdrawals ${totals(s.balances.held)}`],
    ['held payments', s.heldPayments.count === 0 ? 'none' : `${tallied(s.heldPayments)}: cryptopay order held`],
    [
      'refused payments',
      s.refusedPayments.count === 0
        ? 'none'
        : `${tallied(s.refusedPayments)} (order${s.refusedPayments.orders.length === 1 ? '' : 's'} ${s.refusedPayments.orders.join(', ')}${s.refusedPayments.orders.length === REFUSED_ORDERS_LISTED ? ', ...' : ''}): on chain, not in the ledger; order show names each; decide each with cryptopay order credit-held ORDER --tx-hash H (credits its user; never test money of a development chain) or return-held (sent back)`,
    ],
  ];
  if (s.chains.length === 0) rows.push(['chains', 'none watched on this ledger']);
  for (const c of s.chains) {
    const state = c.lag === null ? 'not scanned yet' : `${c.lag} block${c.lag === 1 ? '' : 's'} behind (block ${c.scannedTo} of ${c.head}, head seen ${formatTime(c.headAt)})`;
    const trouble = [c.lastError && `last error: ${c.lastError}`, c.deepReorg && `deep reorg: ${c.deepReorg}`].filter(Boolean).join('; ');
    rows.push([`chain ${c.chainId}`, `${c.name ?? 'not in the registry'}: ${state}${trouble ? `; ${trouble}` : ''}`]);
  }
  const r = s.retryingCallbacks;
  if (r) rows.push(['retrying callbacks', r.count === 0 ? 'none' : `${r.count} after a failed attempt (the oldest made ${formatTime(r.since!)}): cryptopay callbacks list --status pending; each is retried for about 2 days before it counts as failed`]);
  rows.push(['failed callbacks', s.failedCallbacks === 0 ? 'none' : `${s.failedCallbacks}: cryptopay callbacks list --status failed`]);
  await printRecord(ctx, rows);
}

/** Which merchants a whole-ledger summary adds together, when more than one: its totals are theirs. */
async function whose(ctx: Context): Promise<string> {
  if (ctx.isRemote()) return '';
  const ids = (await (await ctx.local('summary')).listMerchants()).map((m) => m.mchId);
  if (ids.length < 2) return '';
  const named = ids.length > MERCHANTS_NAMED ? `${ids.slice(0, MERCHANTS_NAMED).join(', ')}, ...` : ids.join(', ');
  return ` (${ids.length}: ${named}; one alone with --mch-id)`;
}
const MERCHANTS_NAMED = 5;
