import { and, eq, gt, lt, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { AppError } from '../core/errors.js';
import type { Page } from '../core/types.js';

export type { Page };

/**
 * Keyset paging over `(time desc, id desc)`: `after` is the condition for the rows after the
 * cursor row, `upTo` for the rows up to and including it (counted as `before`).
 */
export function keyset(time: SQLiteColumn, id: SQLiteColumn, at: { time: number; id: string }): { after: SQL; upTo: SQL } {
  return {
    after: or(lt(time, at.time), and(eq(time, at.time), lt(id, at.id)))!,
    upTo: or(gt(time, at.time), and(eq(time, at.time), sql`${id} >= ${at.id}`))!,
  };
}

/**
 * A cursor that names no row of the list's kind (or another merchant's row): well-formed, so
 * not a usage error found before the read, but one the read finds, like an unknown id; 400 over
 * HTTP and exit 1 on the CLI, locally and on a profile alike.
 */
export function unknownCursor(cursor: string, what: string): AppError {
  return new AppError('invalid', `cursor ${cursor} is not ${what} of this ledger: pass the id the previous page named`);
}

/**
 * Where a page starts: at the top without a cursor; else after the cursor's row, which `at`
 * looks up among the rows the caller may see (a merchant's own), with how many rows of the list
 * come up to and including it. A cursor `at` does not find is refused (unknownCursor).
 */
export function afterCursor(
  cursor: string | undefined,
  what: string,
  at: (cursor: string) => { time: number; id: string } | undefined,
  time: SQLiteColumn,
  id: SQLiteColumn,
  count: (extra?: SQL) => number,
): { after?: SQL; before: number } {
  if (!cursor) return { before: 0 };
  const row = at(cursor);
  if (!row) throw unknownCursor(cursor, what);
  const k = keyset(time, id, row);
  return { after: k.after, before: count(k.upTo) };
}

/** The page's bookkeeping from its rows (one more than the limit was read to tell whether more follow). */
export function pageOf<R, T>(rows: R[], limit: number, total: number, before: number, idOf: (r: R) => string, view: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  return { items: shown.map(view), total, before, next: more ? idOf(shown[shown.length - 1]!) : null };
}
