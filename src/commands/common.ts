import { AppError, usage } from '../core/errors.js';
import type { Context } from '../context.js';
import { printRecord, type Cell } from './output.js';

/**
 * A required option: taken from the line, asked for on a terminal, a usage error elsewhere
 * (decisions §10).
 */
export async function need(ctx: Context, value: string | undefined, flag: string, question: string): Promise<string> {
  if (value !== undefined && value !== '') return value;
  if (!ctx.io.interactive) throw usage(`missing required option --${flag}`);
  return ctx.prompter.input(question);
}

/**
 * Money changes ask first on a terminal, showing what will happen; --yes skips the question;
 * with no terminal and no --yes nothing is changed (decisions §10).
 */
export async function confirmChange(ctx: Context, title: string, summary: [string, Cell][]): Promise<void> {
  if (ctx.globals.yes) return;
  if (!ctx.io.interactive) {
    throw usage(`${title} changes money and needs confirmation: pass --yes to confirm without a terminal (nothing was changed)`);
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
