import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/store/db.js';

let dir: string | undefined;
let ledger: Ledger | undefined;
afterEach(() => {
  ledger?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  ledger = dir = undefined;
});

it('a ledger file opens durable (WAL, synchronous FULL, foreign keys) with savepoint journals in memory and a 4 MiB page cache', () => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-db-'));
  ledger = openLedger(join(dir, 'ledger.db'));
  // Integers come back as bigints (the connection reads every integer so).
  const get = (name: string) => {
    const v = ledger!.sqlite.pragma(name, { simple: true });
    return typeof v === 'bigint' ? Number(v) : v;
  };
  expect({
    journal: get('journal_mode'),
    synchronous: get('synchronous'),
    foreignKeys: get('foreign_keys'),
    tempStore: get('temp_store'),
    cacheSize: get('cache_size'),
  }).toEqual({ journal: 'wal', synchronous: 2, foreignKeys: 1, tempStore: 2, cacheSize: -4000 });
});
