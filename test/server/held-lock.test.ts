import Database from 'better-sqlite3';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { httpJson, killAll, ledgerWithMerchant, nextNonce, nextOid, spawnServe, tempDir, type Merchant } from './helpers.js';

/**
 * Another process holding the ledger's write lock (an operator's `sqlite3` shell in a
 * transaction, a long CLI command): serve's writes wait for it, its event loop does not. Before,
 * the write's BEGIN waited in SQLite's busy handler on serve's one thread, up to 15 s, and
 * every request meanwhile (the status GETs, the payment pages, /healthz) waited with it
 * (durability review, finding F8). The real binary (dist/: `npm run build` after a change).
 */

const tmp = tempDir();
afterEach(() => killAll());
afterAll(() => tmp.cleanup());

function createOrderBody(m: Merchant, oid: string): string {
  const body = { mchId: m.mchId, oid, uid: 'buyer', amount: '2.5', timestamp: Date.now(), nonce: nextNonce() };
  return JSON.stringify({ ...body, sign: sign(body, m.secret) });
}

const post = (url: string, text: string) => httpJson(url, '/api/v1/order', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text });

describe('serve while another process holds the write lock', () => {
  it('answers reads meanwhile, and makes the waiting create order once the lock is let go', async () => {
    const db = join(tmp.dir, 'held.db');
    const m = await ledgerWithMerchant(db);
    const srv = await spawnServe(db);
    const first = await post(srv.url, createOrderBody(m, nextOid()));
    expect(first.status).toBe(200);
    const firstId = (first.json as { data: { id: string } }).data.id;

    const holder = new Database(db, { timeout: 5_000 });
    try {
      holder.exec('BEGIN IMMEDIATE');
      const oid = nextOid();
      const waiting = post(srv.url, createOrderBody(m, oid));
      // Let serve reach the create's BEGIN, which now finds the lock taken.
      await sleep(300);
      // The lock is still held: a read must be answered before the holder lets go (a frozen
      // event loop answers only after it, here after 8 s, or at 15 s when its wait ends).
      const read = Promise.all([httpJson(srv.url, '/healthz'), httpJson(srv.url, `/api/v1/order/${firstId}/status`)]);
      const first8s = await Promise.race([read, sleep(8_000).then(() => 'no answer while held' as const)]);
      expect(first8s).not.toBe('no answer while held');
      const r = first8s as Awaited<typeof read>;
      expect(r.map((x) => x.status)).toEqual([200, 200]);
      expect((r[1]!.json as { data: string }).data).toBe('PENDING_PAY');
      // The create has not been made: it waits for the lock, and is not refused.
      expect(Number(holder.prepare('select count(*) from orders where oid = ?').pluck().get(oid))).toBe(0);
      const early = await Promise.race([waiting.then(() => 'answered'), sleep(200).then(() => 'waiting')]);
      expect(early).toBe('waiting');
      holder.exec('COMMIT');
      const made = await waiting;
      expect(made.status).toBe(200);
      const order = (made.json as { data: { id: string; oid: string; status: string } }).data;
      expect(order).toMatchObject({ oid, status: 'PENDING_PAY' });
      const status = await httpJson(srv.url, `/api/v1/order/${order.id}/status`);
      expect((status.json as { data: string }).data).toBe('PENDING_PAY');
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    expect(srv.stderr()).not.toMatch(/internal error|SQLITE_BUSY/);
  }, 60_000);
});
