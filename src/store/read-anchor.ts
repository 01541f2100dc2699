import Database from 'better-sqlite3';

/**
 * Holds SQLite's read locks of the ledger file in this process while a burst of reads runs, so
 * that each read does not take and drop them with system calls of its own (issue #16).
 *
 * A statement outside a transaction is a read transaction of its own: on a WAL ledger SQLite
 * takes a SHARED lock on the database file and a read mark in the -shm file, then drops both,
 * six fcntl calls for one `SELECT status FROM orders WHERE id = ?` (~2.3 of its ~3.6 µs here).
 * SQLite keeps those locks per process, not per connection: while another connection of this
 * process holds them, a read only counts them up and down, in memory.
 *
 * So serve's GETs call `hold()`: the first in a turn of the event loop opens a read transaction
 * on a connection of its own (the anchor) and the check phase of that turn ends it. Every read
 * still runs on its own connection in a transaction of its own, and so sees every change
 * committed before it began, by this process or another: the anchor changes which system calls
 * are made, never what a read sees. It reads nothing anyone is shown.
 *
 * The anchor is ended before a write of this process commits (`releaseReadAnchors`, called by
 * the group commit): a read mark held then would keep the writer from starting the WAL over and
 * the WAL would grow. Between turns it holds nothing, so other processes' writers and the
 * checkpoint thread see no reader of ours that they would not have seen before.
 */
export class ReadAnchor {
  private held = false;
  private readonly begin: Database.Statement;
  private readonly probe: Database.Statement;
  private readonly end: Database.Statement;

  constructor(
    private readonly conn: Database.Database,
    /** The ledger file it anchors, its key among the open anchors. */
    private readonly path: string,
  ) {
    this.begin = conn.prepare('BEGIN');
    // Any read of a page starts the read transaction; the schema's first row is one page.
    this.probe = conn.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').pluck();
    this.end = conn.prepare('COMMIT');
  }

  /** Holds the locks until this turn's check phase; a no-op while held. Never throws. */
  hold(): void {
    if (this.held || !this.conn.open) return;
    try {
      this.begin.run();
      this.probe.get();
    } catch {
      // Busy or closing: the reads take their own locks, as without an anchor.
      this.release();
      return;
    }
    this.held = true;
    setImmediate(() => this.release());
  }

  /** Ends the read transaction, if one is open. Never throws. */
  release(): void {
    this.held = false;
    try {
      if (this.conn.open && this.conn.inTransaction) this.end.run();
    } catch {
      // A COMMIT of a read-only transaction only fails if the connection is gone.
    }
  }

  close(): void {
    if (anchors.get(this.path) === this) anchors.delete(this.path);
    this.release();
    if (this.conn.open) this.conn.close();
  }
}

const anchors = new Map<string, ReadAnchor>();

/** The read anchor of a ledger file, if serve opened one (`anchorReads`). */
export function readAnchorOf(path: string): ReadAnchor | undefined {
  return anchors.get(path);
}

/**
 * Opens serve's read anchor on the ledger file: a second connection that never writes. None for
 * an in-memory ledger (no file locks to save).
 */
export function anchorReads(ledger: { path: string; sqlite: Database.Database }, nativeBinding?: string): ReadAnchor | undefined {
  if (ledger.path === ':memory:') return undefined;
  const existing = anchors.get(ledger.path);
  if (existing) return existing;
  const anchor = new ReadAnchor(new Database(ledger.path, { fileMustExist: true, nativeBinding }), ledger.path);
  anchors.set(ledger.path, anchor);
  return anchor;
}

/** Ends every anchor's read transaction: the group commit calls it before it writes. */
export function releaseReadAnchors(): void {
  for (const a of anchors.values()) a.release();
}
