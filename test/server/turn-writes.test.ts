import { afterEach, describe, expect, it } from 'vitest';
import { turnWrites } from '../../src/server/turn-writes.js';
import { nextOid, startServer, type TestServer } from './helpers.js';
import { exchange, open, parseResponses } from './raw-http.js';

/**
 * Issue #16: the server writes the answers of a turn of the event loop together at its end
 * (src/server/turn-writes.ts). What a client must still see: every request answered, each
 * connection's answers in the order of its requests, whatever else was answered in that turn.
 */

let s: TestServer | undefined;
afterEach(async () => {
  if (s) {
    expect(await s.service.check()).toEqual([]);
    expect(s.errorLog).toEqual([]);
    await s.close();
    s = undefined;
  }
});

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('answers written at the end of the turn', () => {
  it('answers 200 pipelined requests on one connection, each in its place, past the batch limit', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const paid = await s.paidOrder(m, '2');
    const pending = await s.order(m);
    // Synchronous answers (status reads, 404s, a 405) and answers that wait for a write (a
    // signed create order, its fsync) mixed on one connection, more than the 64 a batch holds.
    const requests: { text: string; expect: (r: { status: number; json: any }) => void }[] = [];
    const oids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const k = i % 5;
      if (k === 0) requests.push({ text: get(`/api/v1/order/${paid.id}/status`), expect: (r) => expect([r.status, r.json.data]).toEqual([200, 'PAID']) });
      else if (k === 1) requests.push({ text: get(`/api/v1/order/${pending.id}/status`), expect: (r) => expect([r.status, r.json.data]).toEqual([200, 'PENDING_PAY']) });
      else if (k === 2) requests.push({ text: get(`/api/v1/order/ord_none${i}/status`), expect: (r) => expect([r.status, r.json.msg]).toEqual([404, 'Order not found']) });
      else if (k === 3) {
        const oid = nextOid();
        oids.push(oid);
        const body = JSON.stringify(s.signed(m, { oid, uid: 'u1', amount: '1' }));
        requests.push({ text: post('/api/v1/order', body), expect: (r) => expect([r.status, r.json.data?.oid]).toEqual([200, oid]) });
      } else requests.push({ text: `DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n`, expect: (r) => expect(r.status).toBe(405) });
    }
    requests.push({ text: get('/healthz', 'Connection: close\r\n'), expect: (r) => expect([r.status, r.json.data]).toEqual([200, { status: 'ok' }]) });
    const x = await exchange(s.url, [requests.map((r) => r.text).join('')], { waitMs: 20_000 });
    expect(x.responses).toHaveLength(requests.length);
    for (const [i, r] of x.responses.entries()) requests[i]!.expect(r);
    expect(x.closedAfterMs).toBeDefined();
    // Each create order made its order, once.
    const made = s.ledger.sqlite.prepare('SELECT count(*) FROM orders WHERE oid IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(oids));
    expect(made).toBe(40n);
  });

  it('answers 90 connections whose requests arrive in the same turn, each with its own answer', async () => {
    s = await startServer();
    const m = await s.addMerchant();
    const orders = await Promise.all(Array.from({ length: 90 }, () => s!.order(m)));
    await s.paidOrder(m, '1');
    const sockets = await Promise.all(orders.map(() => open(s!.url)));
    const answers = sockets.map(
      (so) =>
        new Promise<string>((resolve) => {
          let raw = '';
          so.setEncoding('latin1');
          so.on('data', (d: string) => (raw += d));
          so.once('close', () => resolve(raw));
        }),
    );
    // All written before the server's next turn reads any of them.
    for (const [i, so] of sockets.entries()) so.write(get(`/api/v1/order/${orders[i]!.id}/status`, 'Connection: close\r\n'));
    const raws = await Promise.all(answers);
    for (const raw of raws) {
      const r = parseResponses(raw);
      expect(r.map((x) => [x.status, x.json.data])).toEqual([[200, 'PENDING_PAY']]);
    }
  });
});

describe('turnWrites', () => {
  it('writes at the end of the turn, in the order the answers were made', async () => {
    const w = turnWrites();
    const done: number[] = [];
    for (let i = 0; i < 5; i++) w.later(() => done.push(i));
    expect(done).toEqual([]);
    await Promise.resolve();
    // Not in a microtask either: after the rest of the turn.
    expect(done).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(done).toEqual([0, 1, 2, 3, 4]);
  });

  it('writes at once when `limit` answers wait, and the rest at the end of the turn', async () => {
    const w = turnWrites(3);
    const done: number[] = [];
    for (let i = 0; i < 7; i++) w.later(() => done.push(i));
    expect(done).toEqual([0, 1, 2, 3, 4, 5]);
    await new Promise((r) => setImmediate(r));
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // A later turn schedules its own end.
    w.later(() => done.push(7));
    await new Promise((r) => setImmediate(r));
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
