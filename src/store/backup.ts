import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, openSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { AppError } from '../core/errors.js';
import { openLedger, type Ledger } from './db.js';
import { LocalPaymentService } from './local-service.js';

export interface BackupReport {
  path: string;
  bytes: number;
  pages: number;
  integrity: 'ok';
  violations: string[];
}

/**
 * An online, consistent copy of the ledger (issue #10 item 9) through SQLite's backup API, in one
 * step: other processes keep writing while it runs, and the copy is one moment of the ledger. The copy holds
 * every merchant's secret, so it is born 0600 and never overwrites a file; then it is opened as a
 * ledger and checked (integrity_check, then every invariant of `ledger check`). A copy SQLite finds
 * corrupt is removed and the backup refused. A copy whose invariants fail is kept (it is a faithful
 * copy of a ledger that already fails them: evidence worth keeping) and the violations returned.
 */
export async function backupLedger(ledger: Ledger, target: string): Promise<BackupReport> {
  if (target === ledger.path) throw new AppError('usage', 'the backup must go to another file than the ledger itself');
  const exists = () => new AppError('usage', `${target} already exists: a backup never overwrites a file; choose a new path`);
  if (existsSync(target)) throw exists();
  // Written under a name of its own, and given the target's name only once it is whole and
  // checked: a backup killed half way (a durability review found one at the target's path, which
  // `ledger check` then took for an empty ledger) leaves only a file named as unfinished.
  const partial = `${target}.partial-${randomBytes(4).toString('hex')}`;
  try {
    // 'wx': refuses an existing path (no overwrite, no following a planted symlink) and creates
    // the file 0600 before SQLite writes a byte into it.
    closeSync(openSync(partial, 'wx', 0o600));
  } catch (e) {
    throw new AppError('unavailable', `cannot create ${partial}: ${(e as Error).message}`);
  }
  let copy: Ledger | undefined;
  try {
    // All pages in one step, one read of one moment of the ledger. In steps of 100 pages (the
    // default) SQLite starts the copy over whenever another process commits between two of them:
    // a scale review's backup of an 800 MB ledger never finished while serve took 10 orders a
    // second. One step holds a read of the WAL, which writers do not wait for; this process (the
    // CLI) is busy meanwhile, about a second per 250 MB here.
    const progress = await ledger.sqlite.backup(partial, { progress: () => 0x7fffffff });
    copy = openLedger(partial);
    // The backup API copies the pages; the copy is a plain database file (journal mode of the
    // source is kept in its header, WAL here). Checked through the same code that serves.
    const integrity = copy.sqlite.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new AppError('internal', `the copy failed SQLite's integrity check: ${String(integrity)}`);
    const service = new LocalPaymentService(copy, { now: () => Date.now(), caller: { actor: 'backup' } });
    const violations = await service.check();
    copy.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    copy.close();
    copy = undefined;
    for (const side of [`${partial}-wal`, `${partial}-shm`]) if (existsSync(side)) rmSync(side);
    // A link, not a rename: it fails on a file made at the target meanwhile instead of replacing it.
    try {
      linkSync(partial, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw exists();
      throw new AppError('unavailable', `cannot name the backup ${target}: ${(e as Error).message}`);
    }
    unlinkSync(partial);
    const { size } = statSync(target);
    return { path: target, bytes: size, pages: progress.totalPages, integrity: 'ok', violations };
  } catch (e) {
    copy?.close();
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(f, { force: true });
    throw e;
  }
}
