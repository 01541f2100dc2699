import { readStatus } from '../core/state.js';
import type { OrderStatus } from '../core/types.js';
import { schemaVersion } from '../core/version.js';
import { cannotOpen, connectLedgerForRead, refuseReadableByOthers } from './ledger-file.js';

/**
 * `order status ID` on the local ledger with SQLite alone: the service (LocalPaymentService and
 * every store module), drizzle and its schema were ~12 ms of the command's start-up, its query
 * builder ~1.5 ms more, for one row. The file is refused as every command refuses it (a ledger
 * others can read) and opened for one read (connectLedgerForRead); the status is the ledger's, read as
 * the service reads it (an unpaid order past its expiry is EXPIRED).
 *
 * Undefined when this read cannot answer on its own: no order with this id (of `mchId`, when
 * given), or a ledger whose schema is not this build's (the service migrates it, or refuses a
 * newer one). The caller then asks the service, which also resolves oids and words the refusals.
 */
export function quickOrderStatus(path: string, id: string, mchId: string | undefined, now: number): OrderStatus | undefined {
  let sqlite;
  let version;
  try {
    refuseReadableByOthers(path);
    sqlite = connectLedgerForRead(path);
    // The first read of the file: a file that is not SQLite fails here, refused as not opened.
    version = Number(sqlite.pragma('user_version', { simple: true }));
  } catch (e) {
    sqlite?.close();
    throw cannotOpen(path, e);
  }
  try {
    if (version !== schemaVersion()) return undefined;
    const row = sqlite.prepare<[string], [string, bigint, string]>('SELECT status, expired_at, merchant_id FROM orders WHERE id = ?').raw(true).get(id);
    if (!row || (mchId && row[2] !== mchId)) return undefined;
    return readStatus(row[0], Number(row[1]), now);
  } finally {
    sqlite.close();
  }
}
