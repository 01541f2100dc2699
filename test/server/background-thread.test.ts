/**
 * serve's one background thread: the address pool's ranges and the WAL checkpoints on a real
 * worker (the shipped bundle's dist/bundle/background-worker.js, built by `npm test` first), on a
 * real ledger file.
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeriver } from '../../src/chains/deriver.js';
import { startDerivationWorker } from '../../src/chains/derive-ahead.js';
import { deriveAddress, walletFromMnemonic } from '../../src/chains/derive.js';
import type { RangeReply } from '../../src/chains/derive-ranges.js';
import { startBackgroundThread, type BackgroundThread } from '../../src/server/background-thread.js';
import type { CheckpointReply } from '../../src/store/checkpoint-answer.js';
import { checkpointInBackground } from '../../src/store/checkpointer.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { syncInBackground } from '../../src/store/group-commit.js';

const WORKER = new URL('../../dist/bundle/background-worker.js', import.meta.url);
const wallet = walletFromMnemonic('legal winner thank year wave sausage worth useful legal winner thank yellow');

let dir: string;
let ledger: Ledger;
let thread: BackgroundThread | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-bg-'));
  ledger = openLedger(join(dir, 'ledger.db'));
});
afterEach(async () => {
  await thread?.close();
  thread = undefined;
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

const turn = () => new Promise((r) => setImmediate(r));

describe('serve\'s background thread', () => {
  it('the shipped worker file exists (npm test builds it first)', () => {
    expect(existsSync(WORKER)).toBe(true);
  });

  it('derives the pool\'s addresses and checkpoints the ledger, one thread for both', async () => {
    thread = startBackgroundThread(ledger.path, { workerUrl: WORKER });
    const errors: string[] = [];
    const pool = startDerivationWorker({ port: thread.derive, onError: (m) => errors.push(m) });
    const g = syncInBackground(ledger);
    const ck = checkpointInBackground(ledger, { port: thread.checkpoint, onError: (m) => errors.push(m), everyChanges: 5 });
    expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(0);
    pool.prime('EVM', wallet.evmXpub, 0);
    pool.prime('TRON', wallet.tronXpub, 300);
    const insert = ledger.sqlite.prepare("insert into settings (key, value, updated_at) values (?, 'v', 0)");
    for (let i = 0; i < 30; i++) {
      expect(await g.submit(() => insert.run(`c${i}`).changes)).toBe(1);
      await turn();
    }
    while (pool.readyUntil('EVM', wallet.evmXpub) <= 600 || pool.readyUntil('TRON', wallet.tronXpub) <= 600) await new Promise((r) => setTimeout(r, 20));
    for (const i of [0, 1, 255, 256, 600]) expect(pool.take('EVM', wallet.evmXpub, i), `EVM ${i}`).toBe(deriveAddress('EVM', wallet.evmXpub, i));
    for (const i of [300, 555, 556, 600]) expect(pool.take('TRON', wallet.tronXpub, i), `TRON ${i}`).toBe(deriveAddress('TRON', wallet.tronXpub, i));
    await ck.close();
    await pool.close();
    expect(errors).toEqual([]);
    expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
    // The database file alone holds what the thread's checkpoints copied.
    const copy = join(dir, 'copy.db');
    copyFileSync(ledger.path, copy);
    const alone = new Database(copy, { readonly: true });
    expect(Number(alone.prepare("select count(*) from settings where key like 'c%'").pluck().get())).toBeGreaterThanOrEqual(25);
    alone.close();
  });

  it('answers a checkpoint asked for during a range before that range is done (between its slices)', async () => {
    thread = startBackgroundThread(ledger.path, { workerUrl: WORKER });
    const order: string[] = [];
    const node = createDeriver(wallet.evmXpub).change;
    const done = new Promise<void>((resolve) => {
      thread!.derive.on('message', (r: RangeReply) => {
        order.push(`range ${'addresses' in r ? r.addresses.length : r.error}`);
        // The first, short range is done: the thread is now on the long one. Ask for a checkpoint.
        if (order.length === 1) thread!.checkpoint.postMessage({ id: 1 });
        if (order.length === 3) resolve();
      });
    });
    thread.checkpoint.on('message', (r: CheckpointReply) => order.push(`checkpoint ${'error' in r ? r.error : 'ok'}`));
    thread.derive.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 0, count: 256 });
    thread.derive.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 256, count: 2048 });
    await done;
    expect(order).toEqual(['range 256', 'checkpoint ok', 'range 2048']);
  });

  it('closed in the middle of a long range, ends on its own after the slice it is on: never terminated inside a call into libsecp256k1', async () => {
    // Worker.terminate() during a range could land between two calls into the addon; the next
    // call then throws a C++ exception nothing catches and the whole process aborts (seen as
    // serve exiting on SIGABRT when stopped right after an order, under load).
    thread = startBackgroundThread(ledger.path, { workerUrl: WORKER });
    const node = createDeriver(wallet.evmXpub).change;
    const replies: RangeReply[] = [];
    const first = new Promise<void>((resolve) => thread!.derive.on('message', (r: RangeReply) => (replies.push(r), resolve())));
    thread.derive.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 0, count: 256 });
    // Minutes of work at 50-100 µs an address: the thread is surely inside it when closed.
    thread.derive.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 256, count: 2_000_000 });
    await first;
    await new Promise((r) => setTimeout(r, 50));
    const ended = await thread.close();
    thread = undefined;
    expect(ended).toBe('finished');
    expect(replies.map((r) => ('addresses' in r ? r.addresses.length : r.error))).toEqual([256]);
  });

  it('the pool on a thread of its own, closed in the middle of a range, ends that thread on its own too', async () => {
    const pool = startDerivationWorker({ workerUrl: new URL('./derive-worker.js', WORKER) });
    pool.prime('EVM', wallet.evmXpub, 0);
    while (pool.readyUntil('EVM', wallet.evmXpub) === 0) await new Promise((r) => setTimeout(r, 5));
    // Two chunks ahead are asked for as soon as one is delivered: close while they are derived.
    pool.take('EVM', wallet.evmXpub, pool.readyUntil('EVM', wallet.evmXpub) - 1);
    expect(await pool.close()).toBe('finished');
  });

  it('a thread that cannot start: the pool derives on demand, the connections checkpoint in their COMMITs again', async () => {
    thread = startBackgroundThread(ledger.path, { workerUrl: new URL('./no-such-worker.js', WORKER) });
    const errors: string[] = [];
    const pool = startDerivationWorker({ port: thread.derive, onError: (m) => errors.push(m) });
    checkpointInBackground(ledger, { port: thread.checkpoint, onError: (m) => errors.push(m) });
    while (errors.length < 2) await new Promise((r) => setTimeout(r, 20));
    expect(errors.join('\n')).toMatch(/derivation thread stopped.*deriving on demand/);
    expect(errors.join('\n')).toMatch(/checkpoint thread stopped.*checkpoints run in the COMMITs again/);
    expect(Number(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
    expect(pool.take('EVM', wallet.evmXpub, 1)).toBeUndefined();
    await pool.close();
  });
});
