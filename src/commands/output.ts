import type { Context } from '../context.js';

/**
 * Three audiences: a person at a terminal (tables, colour), a pipe (plain tab-separated text,
 * no header), a script (--json). Commands hand over data; only this file decides how it looks.
 */
export type Cell = string | number | boolean | null | undefined;

export function printJson(ctx: Context, data: unknown): void {
  ctx.io.stdout.write(`${JSON.stringify(data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
}

const show = (v: Cell): string => (v === null || v === undefined || v === '' ? '-' : String(v));

export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** A list of rows. */
export async function printTable(ctx: Context, head: string[], rows: Cell[][]): Promise<void> {
  if (!ctx.io.isTTY) {
    for (const r of rows) ctx.io.stdout.write(`${r.map(show).join('\t')}\n`);
    return;
  }
  if (rows.length === 0) {
    ctx.io.stdout.write('(none)\n');
    return;
  }
  const { default: Table } = await import('cli-table3');
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  const table = new Table({
    head: chalk ? head.map((h) => chalk.bold(h)) : head,
    style: { head: [], border: [] },
  });
  for (const r of rows) table.push(r.map(show));
  ctx.io.stdout.write(`${table.toString()}\n`);
}

/** One record, as aligned "label  value" lines. */
export async function printRecord(ctx: Context, pairs: [string, Cell][]): Promise<void> {
  const width = Math.max(...pairs.map(([k]) => k.length));
  const chalk = ctx.color ? (await import('chalk')).default : undefined;
  for (const [k, v] of pairs) {
    const label = k.padEnd(width);
    ctx.io.stdout.write(`${chalk ? chalk.dim(label) : label}  ${show(v)}\n`);
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
