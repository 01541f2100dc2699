import type Database from 'better-sqlite3';

/**
 * Runs `work` and returns how SQLite plans each statement it prepared that `reads` (its SQL text),
 * inserts aside: the lines of EXPLAIN QUERY PLAN that `names` (the table, or its alias).
 */
export async function plansOf(sqlite: Database.Database, reads: RegExp, names: RegExp, work: () => Promise<unknown> | unknown): Promise<string[][]> {
  const seen: string[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    if (reads.test(source) && !/^\s*insert/i.test(source)) seen.push(source);
    return prepare(source);
  }) as typeof sqlite.prepare;
  try {
    await work();
  } finally {
    sqlite.prepare = prepare;
  }
  return seen.map((source) => {
    const params = (source.match(/\?/g) ?? []).map(() => null);
    return (prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[]).map((r) => r.detail).filter((d) => names.test(d));
  });
}
