import type Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../core/errors.js';
import { schemaVersion } from '../core/version.js';
import { cannotOpen, connectLedger, refuseReadableByOthers, retryWhileHeld } from './ledger-file.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export interface Ledger {
  path: string;
  db: Db;
  sqlite: Database.Database;
  close(): void;
}

export { resolveLedgerPath, sqliteAddon } from './ledger-file.js';

/** Migrations sit beside the schema in src/store; dist/store resolves to the same folder. */
const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations', import.meta.url));

/**
 * Opens (and brings up to date) the ledger at `path`. `create: false` (a command that only reads
 * or changes an existing ledger, spec decisions §10): a file with nothing of a ledger in it (empty,
 * or a backup that never finished) is refused, exit 3, and nothing is written to it.
 */
export function openLedger(path: string, opts: { create?: boolean } = {}): Ledger {
  let sqlite: Database.Database;
  try {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Create the file ourselves so it is born 0600: it holds merchant secrets. SQLite gives
      // the -wal and -shm files the same mode.
      try {
        closeSync(openSync(path, 'wx', 0o600));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        refuseReadableByOthers(path);
        // An empty file is refused before SQLite writes its header into it.
        if (opts.create === false && statSync(path).size === 0) throw notALedger(path, 'the file is empty');
      }
    }
    sqlite = connectLedger(path);
  } catch (e) {
    throw cannotOpen(path, e);
  }
  const db = drizzle(sqlite, { schema }) as Db;
  try {
    if (opts.create === false && path !== ':memory:') refuseNotALedger(sqlite, path);
    applyMigrations(sqlite, db);
  } catch (e) {
    sqlite.close();
    if (e instanceof AppError) throw e;
    // drizzle wraps SQLite's error in one that quotes the whole migration: the cause says what failed.
    throw new AppError('unavailable', `cannot prepare the ledger at ${path}: ${rootOf(e).message ?? String(e)}`, { cause: e });
  }
  return { path, db, sqlite, close: () => sqlite.close() };
}

/**
 * A file with no table at all is not a ledger. Asked under the write lock when it looks new, so
 * that a file another process is turning into a ledger right now is waited for, not refused.
 */
function refuseNotALedger(sqlite: Database.Database, path: string): void {
  if (Number(sqlite.pragma('user_version', { simple: true })) > 0) return;
  sqlite.exec('BEGIN IMMEDIATE');
  let tables: number;
  try {
    tables = Number((sqlite.prepare(`select count(*) as n from sqlite_master where type = 'table'`).get() as { n: number | bigint }).n);
  } finally {
    sqlite.exec('ROLLBACK');
  }
  if (tables === 0) throw notALedger(path, 'the file holds no table of one');
}

function notALedger(path: string, why: string): AppError {
  return new AppError('unavailable', `${path} is not a ledger: ${why} (a copy that never finished, or the wrong file); it was not made into one. Check --db or CRYPTOPAY_DB; cryptopay merchant add starts a new ledger`);
}

/** The innermost cause of an error (drizzle wraps SQLite's). */
function rootOf(e: unknown): { code?: string; message?: string } {
  let root = e as { code?: string; message?: string; cause?: unknown };
  while (root?.cause) root = root.cause as typeof root;
  return root ?? {};
}

/** How many migrations the file records as applied, read afresh (after a failed try's transaction). */
function migrationsRecorded(sqlite: Database.Database): number {
  try {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    return Number(sqlite.prepare('select count(*) from __drizzle_migrations').pluck().get());
  } catch {
    return 0;
  }
}

/**
 * user_version records how many migrations the file has, so an up-to-date ledger opens without
 * reading the migration files. Two processes may migrate a new file at once: drizzle's migrator
 * uses a deferred transaction, so the loser gets SQLITE_BUSY and simply tries again, then finds
 * the work done.
 */
function applyMigrations(sqlite: Database.Database, db: Db): void {
  const want = schemaVersion();
  const have = Number(sqlite.pragma('user_version', { simple: true }));
  if (have === want) return;
  if (have > want) {
    throw new AppError('unavailable', `the ledger was written by a newer cryptopay (schema ${have}, this one knows ${want})`);
  }
  // Bounded by time, as the busy timeout is, not by a count of tries: on a loaded machine the
  // process that won may hold the file for longer than a fixed number of short waits.
  retryWhileHeld(
    () => {
      // A try that lost the race left its transaction open.
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      // A migration that rebuilds a table (SQLite's procedure: create, copy, drop, rename) runs
      // with foreign keys off, which only works outside a transaction; the references are then
      // checked as a whole before the ledger is used.
      sqlite.pragma('foreign_keys = OFF');
      try {
        migrate(db, { migrationsFolder: MIGRATIONS });
      } finally {
        sqlite.pragma('foreign_keys = ON');
      }
      const broken = sqlite.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0) throw new AppError('unavailable', `the ledger's references are broken after its migration (${broken.length} rows): restore a backup`);
      sqlite.pragma(`user_version = ${want}`);
    },
    // drizzle wraps the SQLite error. The loser of the race sees SQLITE_BUSY or, having read the
    // migrations table before the winner committed, fails on a step the winner took ("table ...
    // already exists", "no such index", "duplicate column name"): the next try finds the work
    // done. Any other failure, with the migrations not all recorded, is final; so is a refusal
    // of ours (references broken after the migration): trying again would find it again.
    (e) => {
      if (e instanceof AppError) return false;
      const root = rootOf(e);
      return (root.code ?? '').startsWith('SQLITE_BUSY') || /already exists/.test(root.message ?? '') || migrationsRecorded(sqlite) >= want;
    },
    20,
  );
}
