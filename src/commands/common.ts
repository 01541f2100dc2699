import { AppError, usage } from '../core/errors.js';
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
