import type { Context } from '../context.js';
import { HIDDEN } from '../core/text-rules.js';
import { csv, escapeForPipe, terminalTable, tsv, wrap, type Cell, type Column } from './table.js';

export type { Cell, Column };

/**
 * Four audiences: a person at a terminal (tables fitted to its width, colour), a pipe (plain
 * tab-separated text with a header row), a spreadsheet (--format csv), a script (--json).
 * Commands hand over data; only this file (and table.ts) decides how it looks.
 */

/**
 * What JSON.stringify leaves raw but a terminal or a reader acts on: DEL, the C1 controls (U+009B
 * is a one-byte CSI to some terminals) and the hidden characters of src/core/text-rules.ts
 * (bidi overrides, zero-width, line separators). They can only stand inside strings, so each is
 * written as its \u escape: the JSON value read back is the same.
 */
const TERMINAL_ACTIVE = new RegExp(`[\\u007f-\\u009f]|${HIDDEN.source}`, 'gu');

/** Each match as the JSON escapes of its UTF-16 units (a tag character is two). */
const escapeActive = (text: string) =>
  text.replace(TERMINAL_ACTIVE, (c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));

export function printJson(ctx: Context, data: unknown): void {
  ctx.io.stdout.write(`${escapeActive(JSON.stringify(data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2))}\n`);
}

/** One JSON value on one line (log --follow --json, listen --json), escaped as printJson escapes. */
export function jsonLine(data: unknown): string {
  return `${escapeActive(JSON.stringify(data))}\n`;
}

const show = (v: Cell): string => (v === null || v === undefined || v === '' ? '-' : String(v));

export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** How a list is written: --format, else a table on a terminal and tab-separated text in a pipe. */
export function tableFormat(ctx: Context): 'table' | 'tsv' | 'csv' {
  return ctx.globals.format ?? (ctx.io.isTTY ? 'table' : 'tsv');
}

/**
 * The terminal's width: $COLUMNS when set (a user or a test that asks for a width gets it),
 * else what the terminal says, else 80.
 */
export function terminalWidth(ctx: Context): number {
  const env = Number(ctx.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  return ctx.io.columns && ctx.io.columns > 0 ? ctx.io.columns : 80;
}

/**
 * A list whose rows are of more than one merchant (a ledger with several, and no --mch-id): a
 * `merchant` column after the first (or at `at`), else two rows that differ only in whose they are (the same
 * oid at two shops) cannot be told apart. A list of one merchant's rows is unchanged.
 */
export function merchantColumn(items: ReadonlyArray<{ mchId?: string }>, head: Array<string | Column>, rows: Cell[][], at = 1): void {
  if (new Set(items.map((i) => i.mchId)).size < 2) return;
  head.splice(at, 0, { name: 'merchant', priority: 8 });
  rows.forEach((r, k) => r.splice(at, 0, items[k]!.mchId ?? '?'));
}

/** A list of rows; a column is its header, or a Column saying how it gives way on a narrow terminal. */
export async function printTable(ctx: Context, head: Array<string | Column>, rows: Cell[][]): Promise<void> {
  const columns = head.map((h) => (typeof h === 'string' ? { name: h } : h));
  const format = tableFormat(ctx);
  if (format === 'tsv') return void ctx.io.stdout.write(tsv(columns, rows));
  if (format === 'csv') return void ctx.io.stdout.write(csv(columns, rows));
  if (rows.length === 0) {
    ctx.io.stdout.write('(none)\n');
    return;
  }
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  const width = terminalWidth(ctx);
  const t = terminalTable(columns, rows, { width, now: ctx.now(), ascii: ctx.env.TERM === 'dumb', bold: chalk && ((s) => chalk.bold(s)) });
  ctx.io.stdout.write(`${t.lines.join('\n')}\n`);
  if (t.hidden.length) {
    const note = wrap(`(left out to fit ${width} columns: ${t.hidden.join(', ')}; see them with a wider terminal, --format csv or --json)`, width).join('\n');
    ctx.io.stderr.write(`${chalk ? chalk.dim(note) : note}\n`);
  }
}

/**
 * Stored text as one field of a line: a terminal could act on a control character in it (an ESC
 * or OSC 52 clipboard write in a remark): shown as a mark on one; in a pipe, escaped
 * (escapeForPipe), so each field stays one line there and a newline cannot forge another.
 */
export function shownText(ctx: Context, text: string): string {
  return ctx.io.isTTY ? text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, ctx.env.TERM === 'dumb' ? '?' : '\ufffd') : escapeForPipe(text);
}

/** One record, as aligned "label  value" lines; with --format csv, rows of field,value. */
export async function printRecord(ctx: Context, pairs: [string, Cell][]): Promise<void> {
  if (ctx.globals.format === 'csv') return void ctx.io.stdout.write(csv([{ name: 'field' }, { name: 'value' }], pairs));
  const width = Math.max(...pairs.map(([k]) => k.length));
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  // For a person (a terminal, or --format table): values wrap at word boundaries under their
  // own column, to the terminal's width; a word is never broken, so a hash, an address or a URL
  // stays whole to copy. In a pipe each field stays on one line, for grep and cut.
  const room = tableFormat(ctx) === 'table' ? terminalWidth(ctx) - width - 2 : Infinity;
  const indent = ' '.repeat(width + 2);
  for (const [k, v] of pairs) {
    const label = k.padEnd(width);
    const value = shownText(ctx, show(v));
    const lines = room >= 20 ? wrap(value, room, true) : [value];
    ctx.io.stdout.write(`${chalk ? chalk.dim(label) : label}  ${lines.join(`\n${indent}`)}\n`);
  }
}

export async function warn(ctx: Context, message: string): Promise<void> {
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  ctx.io.stderr.write(`${chalk ? chalk.yellow(message) : message}\n`);
}

export async function success(ctx: Context, message: string): Promise<void> {
  if (ctx.globals.json) return;
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  ctx.io.stderr.write(`${chalk ? chalk.green(message) : message}\n`);
}
