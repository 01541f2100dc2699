import { ASSETS } from '../core/assets.js';
import { AppError, usage } from '../core/errors.js';
import { missingDay } from '../core/duration.js';
import { formatAmount, parseLedgerAmount } from '../core/money.js';
import type { Context } from '../context.js';
import { printRecord, type Cell } from './output.js';
import { fieldOf, type Field } from './fields.js';

/**
 * A required option: taken from the line, asked for on a terminal, a usage error elsewhere
 * (decisions §10). Either way its value meets the field's rule before anything runs: a flag
 * that breaks it is a usage error naming the flag; an answer that breaks it is refused as it
 * is typed, and asked again (issue #15 items 6 and 7).
 */
export async function need(ctx: Context, value: string | undefined, flag: string | Field, question: string): Promise<string> {
  const field = typeof flag === 'string' ? fieldOf(flag) : flag;
  if (value !== undefined && value !== '') return checked(value, field)!;
  if (!ctx.io.interactive) throw usage(`missing required option --${field.flag}`);
  const check = field.check;
  return ctx.prompter.input(question, check && { validate: (v) => (v === '' ? 'an answer is needed' : check(v)?.replace(`--${field.flag} `, `${field.flag} `) ?? true) });
}

/** An option's value, checked by its field's rule: a usage error naming the flag. */
export function checked(value: string | undefined, flag: string | Field): string | undefined {
  // "" is absent, as need() and the interface take it (decisions §1).
  if (value === undefined || value === '') return value;
  const field = typeof flag === 'string' ? fieldOf(flag) : flag;
  const problem = field.check?.(value);
  if (problem) throw usage(problem);
  return value;
}

/** A refusal saying the thing named is not there (an id mistyped): refused before any question. */
export const isNotFound = (e: unknown): boolean => e instanceof AppError && e.kind === 'not_found';

/**
 * Money changes ask first on a terminal, showing what will happen; --yes skips the question;
 * with no terminal and no --yes nothing is changed (decisions §10).
 */
export async function confirmChange(ctx: Context, title: string, summary: [string, Cell][], stakes = 'changes money'): Promise<void> {
  if (ctx.globals.yes) return;
  if (!ctx.io.interactive) {
    throw usage(`${title}: this ${stakes}, so it needs confirmation; pass --yes to confirm without a terminal (nothing was changed)`);
  }
  ctx.io.stdout.write(`${title}:\n`);
  await printRecord(ctx, await withTarget(ctx, summary));
  const ok = await ctx.prompter.confirm('Go ahead?');
  if (!ok) throw new AppError('conflict', 'cancelled: nothing was changed');
}

/**
 * A summary of a change, led in remote mode by where it goes: the operator sees which service
 * (and which profile) their "yes" changes money on.
 */
export async function withTarget(ctx: Context, summary: [string, Cell][]): Promise<[string, Cell][]> {
  const target = await ctx.remoteTarget();
  return target ? [['remote', `${target.url} (${target.source})`], ...summary] : summary;
}

/** Only worth reading the state for a summary when someone is about to read it and answer. */
export function asking(ctx: Context): boolean {
  return !ctx.globals.yes && ctx.io.interactive;
}

export function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 1000) throw usage('--limit must be a whole number from 1 to 1000');
  return Number(value);
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined) return undefined;
  const upper = value.toUpperCase() as T;
  if (!allowed.includes(upper)) throw usage(`--${flag} must be one of ${allowed.join(', ')}`);
  return upper;
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/**
 * A time bound of a list (`--since`, `--until`): an ISO date or time (UTC unless it says
 * otherwise, as every time the CLI prints), milliseconds since the epoch, or a duration back from
 * now (`90s`, `30m`, `2h`, `7d`, `2w`).
 */
export function parseTimeBound(value: string | undefined, flag: string, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  const d = /^(\d{1,7})(s|m|h|d|w)$/.exec(v);
  if (d) return now - Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS];
  if (/^\d{10,15}$/.test(v)) return Number(v);
  const iso = /^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,3})?)?(Z|[+-]\d\d:?\d\d)?)?$/i.exec(v);
  if (iso) {
    const missing = missingDay(v);
    if (missing) throw usage(`--${flag} names a day that does not exist: ${missing}`);
    const text = v.length === 10 ? `${v}T00:00:00Z` : iso[1] ? v.replace(' ', 'T') : `${v.replace(' ', 'T')}Z`;
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return ms;
  }
  throw usage(`--${flag} must be a time such as 2024-05-01 or 2024-05-01T14:30Z (UTC unless an offset is given), or a duration back from now such as 30m, 2h, 7d; got "${value}"`);
}

/** `--since` and `--until` together; the one must come before the other. */
export function parseTimeRange(opts: { since?: string; until?: string }, now: number): { since?: number; until?: number } {
  const since = parseTimeBound(opts.since, 'since', now);
  const until = parseTimeBound(opts.until, 'until', now);
  if (since !== undefined && until !== undefined && since >= until) throw usage('--since must come before --until');
  return { since, until };
}

/**
 * Where a page of a list lies in the whole (issue #15 item 2), on stderr so that piped rows stay
 * rows: "showing 50 of 56; next page: --cursor ID". Nothing when the page is the whole list, and
 * nothing under --json (a script pages with the id of the last item as the cursor).
 */
export function pageNote(ctx: Context, page: { items: unknown[]; total: number; before: number; next: string | null }): void {
  if (ctx.globals.json) return;
  if (page.before === 0 && page.next === null) return;
  const shown = page.items.length;
  const range = page.before === 0 ? `${shown}` : shown === 0 ? 'none' : `${page.before + 1}-${page.before + shown}`;
  const next = page.next === null ? '' : `; next page: --cursor ${page.next}`;
  ctx.io.stderr.write(`showing ${range} of ${page.total}${next}\n`);
}

/** `--cursor`: the id of the last row of the previous page. */
export function parseCursor(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(value)) throw usage('--cursor must be the id the previous page named');
  return value;
}

/**
 * A balance before and after a change, for the question before it (issue #15 item 3):
 * `12.5 -> 10 USDT`. `delta` is added (negative takes away); amounts are canonical decimals.
 */
export function beforeAfter(before: string, delta: string, sign: 1 | -1, asset: string): string {
  const d = ASSETS[asset]?.decimals ?? 6;
  const b = parseLedgerAmount(before, d);
  return `${before} -> ${formatAmount(b + BigInt(sign) * parseLedgerAmount(delta, d), d)} ${asset}`;
}

/** `beforeAfter` for a credit whose amount may still be malformed (the operation refuses it with its own message). */
export function credited(before: string, amount: string, asset: string): string {
  try {
    return beforeAfter(before, amount, 1, asset);
  } catch {
    return `${before} ${asset}, credited ${amount}`;
  }
}

