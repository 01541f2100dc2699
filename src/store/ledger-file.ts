import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { AppError } from '../core/errors.js';
import { dataDir } from '../paths.js';

/**
 * The ledger as a SQLite file: where it is, who may read it, and the settings of every
 * connection to it. No drizzle and no migrations (src/store/db.ts adds them), so that a read
 * needing SQLite alone (`order status`: src/store/order-status-read.ts) starts without them.
 */

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
export function refuseReadableByOthers(path: string): void {
  for (const file of [path, `${path}-wal`]) {
    // One call, not exists-then-stat: the last process to close the ledger deletes its -wal file,
    // and a stat between the two would fail a command that has nothing wrong with it.
    const st = statSync(file, { throwIfNoEntry: false });
    if (!st?.isFile()) continue; // missing, or not a ledger at all: SQLite says so, naming the path
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

/** A connection with the ledger's settings; SQLite's own errors are thrown as they are. */
export function connectLedger(path: string): Database.Database {
  const sqlite = connectLedgerForRead(path);
  try {
    toWal(sqlite);
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
  } catch (e) {
    sqlite.close();
    throw e;
  }
  return sqlite;
}

/**
 * What every connection to the ledger has: the busy timeout, and integers read as bigint. Enough
 * for one read (`order status`): the settings connectLedger adds are for writing (synchronous,
 * foreign keys, the savepoint journal, the page cache; WAL is the file's own once any command
 * has opened it), and making them was ~1 ms of that command's start-up (issue #16).
 */
export function connectLedgerForRead(path: string): Database.Database {
  const sqlite = new Database(path, { timeout: BUSY_TIMEOUT_MS, nativeBinding: sqliteAddon() });
  sqlite.defaultSafeIntegers(true);
  return sqlite;
}

/**
 * Switches the file to WAL; on a ledger that already is, this changes nothing and takes no lock.
 * On a new file it needs the write lock while holding a read lock, and when another process holds
 * the write lock (it is switching the same new file) SQLite returns SQLITE_BUSY at once instead of
 * calling the busy handler, since two such waiters could deadlock. So this waits here, as the busy
 * timeout would, and tries again: the other process soon finishes, and the file is then WAL.
 */
function toWal(sqlite: Database.Database): void {
  retryWhileHeld(() => sqlite.pragma('journal_mode = WAL'), isBusy, 10);
}

/** SQLite said the file is held by another connection (SQLITE_BUSY and its extended codes). */
export const isBusy = (e: unknown): boolean => String((e as { code?: unknown } | null)?.code).startsWith('SQLITE_BUSY');

/**
 * Runs `step` until it succeeds; while it fails with what `held(e)` says is another process's
 * hold on the file, tries again after a short random pause (`minPauseMs` up to twice that), for
 * up to the busy timeout, then throws the last failure. Synchronous: opening the ledger is
 * synchronous for every caller. For the steps SQLite's busy handler does not cover.
 */
export function retryWhileHeld<T>(step: () => T, held: (e: unknown) => boolean, minPauseMs: number): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      return step();
    } catch (e) {
      if (!held(e) || Date.now() > deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, minPauseMs * (1 + Math.random()));
    }
  }
}

/** A failure to open the file, in the words every command uses. */
export function cannotOpen(path: string, e: unknown): AppError {
  return e instanceof AppError ? e : new AppError('unavailable', `cannot open the ledger at ${path}: ${(e as Error).message}`, { cause: e });
}
