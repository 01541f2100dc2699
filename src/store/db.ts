import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../core/errors.js';
import { schemaVersion } from '../core/version.js';
import { dataDir } from '../paths.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export interface Ledger {
  path: string;
  db: Db;
  sqlite: Database.Database;
  close(): void;
}

/** Migrations sit beside the schema in src/store; dist/store resolves to the same folder. */
const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations', import.meta.url));

/** --db, else CRYPTOPAY_DB, else $XDG_DATA_HOME/cryptopay/ledger.db. */
export function resolveLedgerPath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag) return flag;
  if (env.CRYPTOPAY_DB) return env.CRYPTOPAY_DB;
  return join(dataDir(env), 'ledger.db');
}

/**
 * An existing ledger that group or others may read is refused, as the remote secret file is: it
 * holds every merchant's secret. The -wal file holds recent pages of it, so it is checked too.
 * Nothing is changed for the user: they decide whether to chmod or to find out who read it.
 */
function refuseReadableByOthers(path: string): void {
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    const st = statSync(file);
    if (!st.isFile()) continue; // not a ledger at all: SQLite says so, naming the path
    const mode = st.mode & 0o777;
    if (mode & 0o077) {
      throw new AppError('unavailable', `the ledger ${file} can be read by others (mode ${mode.toString(8)}); it holds merchant secrets, so it is not opened: run chmod 600 ${file}`);
    }
  }
}

/**
 * better-sqlite3's native addon, named directly. The package's JavaScript is bundled with the CLI
 * (scripts/bundle.mjs): loading it as a dozen CommonJS files, and its `bindings` lookup that
 * walks the directory tree for the addon, was ~6 ms of every command's start-up.
 */
let addonPath: string | undefined;
export function sqliteAddon(): string {
  return (addonPath ??= createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node'));
}

/** How long a writer waits for another process's transaction before giving up. */
const BUSY_TIMEOUT_MS = 15_000;

export function openLedger(path: string): Ledger {
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
      }
    }
    sqlite = new Database(path, { timeout: BUSY_TIMEOUT_MS, nativeBinding: sqliteAddon() });
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    // Savepoint journals in memory: group commit runs every change in a savepoint, and with the
    // default (a temporary file once a transaction's journal passes 64 KiB) each page a change
    // touched was written to that file first, 2 system calls a page, ~60% of the bytes serve wrote.
    sqlite.pragma('temp_store = MEMORY');
    // A 4 MiB page cache. better-sqlite3 builds SQLite with a 16 MiB default, which a busy serve
    // filled within seconds (~20 MB of the process's peak); the pages a create order needs are
    // the interior pages and the right edges of the indexes, and the rest comes from the OS
    // cache. Measured under the create-order load: peak RSS 157-159 -> 142-144 MB, throughput
    // unchanged (bench/RESULTS.md).
    sqlite.pragma('cache_size = -4000');
    sqlite.defaultSafeIntegers(true);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError('unavailable', `cannot open the ledger at ${path}: ${(e as Error).message}`, { cause: e });
  }
  const db = drizzle(sqlite, { schema }) as Db;
  try {
    applyMigrations(sqlite, db);
  } catch (e) {
    sqlite.close();
    if (e instanceof AppError) throw e;
    throw new AppError('unavailable', `cannot prepare the ledger at ${path}: ${(e as Error).message}`, { cause: e });
  }
  return { path, db, sqlite, close: () => sqlite.close() };
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
  for (let attempt = 0; ; attempt++) {
    try {
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
      return;
    } catch (e) {
      // drizzle wraps the SQLite error. The loser of the race sees SQLITE_BUSY or, having read the
      // migrations table before the winner committed, "table ... already exists".
      let root = e as { code?: string; message?: string; cause?: unknown };
      while (root.cause) root = root.cause as typeof root;
      const raced = (root.code ?? '').startsWith('SQLITE_BUSY') || /already exists/.test(root.message ?? '');
      if (!raced || attempt >= 50) throw e;
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30);
    }
  }
}
