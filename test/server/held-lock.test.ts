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

  it('refuses a create order that waited out the 15 s busy timeout with a 503 that says why and keeps nothing; a copy sent during the wait says the first is still being carried out, and the body is taken once the lock goes', async () => {
    const db = join(tmp.dir, 'held-long.db');
    const m = await ledgerWithMerchant(db);
    const srv = await spawnServe(db);
    const holder = new Database(db, { timeout: 5_000 });
    const oid = nextOid();
    const body = createOrderBody(m, oid);
    const t0 = Date.now();
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    let resent: Promise<Awaited<ReturnType<typeof post>> & { after: number; firstDone: boolean }>;
    try {
      holder.exec('BEGIN IMMEDIATE');
      const waiting = post(srv.url, body);
      await sleep(2_000);
      // The client gives up and sends the very same signed body again. It is refused at once, as
      // a copy of a request being carried out, and says so: its nonce is not used up yet, and the
      // first copy's answer is the one that says whether it was done. Before, it said "nonce has
      // already been used", and the first copy then failed with nothing kept.
      const sentAt = Date.now();
      resent = post(srv.url, body).then((r) => ({ ...r, after: Date.now() - sentAt, firstDone: refused !== undefined }));
      expect((await httpJson(srv.url, '/healthz')).status).toBe(200);
      refused = await waiting;
      // Refused while the lock is still held: nothing of it is in the ledger.
      expect(Number(holder.prepare('select count(*) from orders where oid = ?').pluck().get(oid))).toBe(0);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(15_000);
    // Its wait ends at 15 s (a bound loose enough for a loaded machine, tight enough to tell it from none).
    expect(waited).toBeLessThan(20_000);
    expect(refused!.status).toBe(503);
    expect(refused!.json).toMatchObject({ code: 0, msg: 'the ledger is busy: another process held it too long; try again', data: null });
    const copy = await resent!;
    // At once: answered while the first still waited, not after it.
    expect(copy.firstDone).toBe(false);
    expect(copy.after).toBeLessThan(5_000);
    expect(copy.status).toBe(401);
    expect((copy.json as { msg: string }).msg).toBe(
      "nonce has already been used, or is about to be: a copy of this request is still being carried out, and that copy's own answer says whether it was done",
    );
    // Nothing was kept, its nonce neither: the very same body goes through once the lock is gone.
    const made = await post(srv.url, body);
    expect(made.status).toBe(200);
    const order = (made.json as { data: { id: string; oid: string; status: string } }).data;
    expect(order).toMatchObject({ oid, status: 'PENDING_PAY' });
    // Its nonce is used now, and the oid names that one order.
    const replay = await post(srv.url, body);
    expect(replay.status).toBe(401);
    expect((replay.json as { msg: string }).msg).toBe('nonce has already been used');
    const fresh = await post(srv.url, createOrderBody(m, oid));
    expect((fresh.json as { data: { id: string } }).data.id).toBe(order.id);
    expect(srv.stderr()).not.toMatch(/internal error|SQLITE_BUSY/);
  }, 60_000);
});
