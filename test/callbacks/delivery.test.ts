import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/callbacks/deliver.js';
import { CallbackWorker, type WorkerOptions } from '../../src/callbacks/worker.js';
import { verify } from '../../src/signing/index.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { groupCommit } from '../../src/store/group-commit.js';
import { recordPayment } from '../../src/store/payments.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { addOtherMerchant, addTestMerchant, evmTx } from '../helpers/service.js';
import { merchantVerifies, startReceiver, type Receiver } from './receiver.js';

/**
 * The sender against real receivers on 127.0.0.1 (issue #13, "Tests"): the retry schedule, one
 * eventId, signatures, a restart in the middle, two senders on one ledger, a receiver that hangs.
 * Real time, with short schedules: the schedule is what is under test, so it is not faked.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  file: string;
  ledger: Ledger;
  service: LocalPaymentService;
  secret: string;
  mchId: string;
}

async function setup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-callbacks-'));
  const file = join(dir, 'ledger.db');
  const ledger = openLedger(file);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' }, allowPrivateCallbacks: true });
  const m = await addTestMerchant(service);
  cleanups.push(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { file, ledger, service, ...m };
}

async function receiver(reply?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(reply);
  cleanups.push(() => r.close());
  return r;
}

function worker(ledger: Ledger, opts: Partial<WorkerOptions> = {}): CallbackWorker {
  const w = new CallbackWorker({ ledger, now: Date.now, allowPrivate: true, pollMs: 50, random: () => 0.5, ...opts });
  w.start();
  cleanups.push(() => w.stop());
  return w;
}

let tx = 0x900000;
async function paidOrderWithHook(s: Setup, url: string, oid?: string): Promise<string> {
  const o = await s.service.createOrder({ oid: oid ?? `o-${tx}`, uid: 'u1', amount: '10', notifyUrl: url });
  await s.service.markPaid({ id: o.id, txHash: evmTx(++tx) });
  return o.id;
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('delivery and retries', () => {
  it('a receiver that fails 3 times then answers 200 gets the attempts on the schedule, one eventId, each signed', async () => {
    const s = await setup();
    const rec = await receiver((n) => (n <= 3 ? 500 : 200));
    const schedule = [300, 600, 900];
    const orderId = await paidOrderWithHook(s, rec.url);
    const committed = Date.now();
    worker(s.ledger, { schedule });
    const got = await rec.waitFor(4);
    // The first attempt follows the commit at once; each retry waits its delay (jitter ±10%, here
    // 0), never less. How late it may come is the machine's: CI once saw 417 ms late at load 18, so
    // the bound here only says the retry did come; the delay of each step is pinned, exactly, on
    // the sender's own clock by the test below.
    expect(got[0]!.at - committed).toBeLessThan(2_000);
    for (let i = 1; i < 4; i++) {
      const gap = got[i]!.at - got[i - 1]!.at;
      expect(gap, `gap before attempt ${i + 1}`).toBeGreaterThanOrEqual(schedule[i - 1]! - 5);
      expect(gap, `gap before attempt ${i + 1}`).toBeLessThan(schedule[i - 1]! + 2_000);
    }
    const ids = new Set(got.map((g) => g.body.eventId));
    expect(ids.size).toBe(1);
    for (const g of got) {
      expect(g.headers['content-type']).toBe('application/json');
      expect(g.body).toMatchObject({ event: 'order.paid', id: orderId, mchId: s.mchId, status: 'PAID', amount: '10', timestamp: expect.any(Number), nonce: expect.any(String) });
      expect(verify(g.body, s.secret), 'the project verifies it').toBe(true);
      expect(merchantVerifies(g.body, s.secret), 'a merchant verifies it').toBe(true);
      expect(merchantVerifies(g.body, `${s.secret}x`)).toBe(false);
    }
    // A fresh nonce per attempt, so a merchant's replay check never drops a retry as a replay.
    expect(new Set(got.map((g) => g.body.nonce)).size).toBe(4);
    await until(async () => (await s.service.listCallbacks({}))[0]!.status === 'delivered');
    const shown = await s.service.showCallback([...ids][0]);
    expect(shown).toMatchObject({ status: 'delivered', attempts: 4, lastStatus: 200, nextAttemptAt: null });
    expect(shown.history.map((h) => h.statusCode)).toEqual([500, 500, 500, 200]);
  });

  it('on the sender\'s clock, each retry is due exactly its step\'s delay after the attempt before it ended, and is not sent a moment earlier', async () => {
    const s = await setup();
    const rec = await receiver((n) => (n <= 3 ? 500 : 200));
    const schedule = [300_000, 60_000, 900_000]; // steps of different lengths: a step taken from the wrong place shows
    await paidOrderWithHook(s, rec.url);
    const clock = { now: Date.now() };
    worker(s.ledger, { schedule, now: () => clock.now });
    for (let i = 0; i < 3; i++) {
      await rec.waitFor(i + 1);
      await until(async () => (await s.service.listCallbacks({}))[0]!.attempts === i + 1);
      const [c] = await s.service.listCallbacks({});
      const last = (await s.service.showCallback(c!.id)).history[i]!;
      expect(c!.nextAttemptAt, `due after attempt ${i + 1}`).toBe(last.at + last.latencyMs + schedule[i]!);
      // A moment before it is due, several polls go by and nothing is sent.
      clock.now = c!.nextAttemptAt! - 1;
      await new Promise((r) => setTimeout(r, 300));
      expect(rec.received, `nothing before attempt ${i + 2} is due`).toHaveLength(i + 1);
      clock.now = c!.nextAttemptAt!;
    }
    await rec.waitFor(4);
    await until(async () => (await s.service.listCallbacks({}))[0]!.status === 'delivered');
  });

  it('after the last delay of the schedule the delivery is failed; nothing more is sent', async () => {
    const s = await setup();
    const rec = await receiver(() => 503);
    await paidOrderWithHook(s, rec.url);
    worker(s.ledger, { schedule: [100, 100] });
    await rec.waitFor(3);
    await until(async () => (await s.service.listCallbacks({}))[0]!.status === 'failed');
    await new Promise((r) => setTimeout(r, 400));
    expect(rec.received).toHaveLength(3);
    expect((await s.service.listCallbacks({ status: 'failed' }))[0]).toMatchObject({ attempts: 3, lastStatus: 503 });
  });

  it('a refused connection and a redirect are failures too, recorded with their reason', async () => {
    const s = await setup();
    const closed = await receiver();
    const deadUrl = closed.url;
    await closed.close();
    const redirect = await receiver(() => ({ status: 307, headers: { Location: 'http://127.0.0.1:1/' } }));
    await paidOrderWithHook(s, deadUrl);
    await paidOrderWithHook(s, redirect.url);
    worker(s.ledger, { schedule: [60_000] });
    await until(async () => (await s.service.listCallbacks({})).every((c) => c.attempts === 1));
    const byUrl = Object.fromEntries((await s.service.listCallbacks({})).map((c) => [c.url, c]));
    expect(byUrl[deadUrl]).toMatchObject({ status: 'pending', lastStatus: null, lastError: expect.stringContaining('ECONNREFUSED') });
    expect(byUrl[redirect.url]).toMatchObject({ status: 'pending', lastStatus: 307, lastError: null });
  });

  it("a notifyUrl whose user name is not valid percent-encoding is refused at creation; one already stored fails its attempts on the schedule instead of staying due forever (an outside review)", async () => {
    const s = await setup();
    const bad = 'http://%zz@shop.example/x';
    await expect(s.service.createOrder({ oid: 'bad-url', uid: 'u1', amount: '1', notifyUrl: bad })).rejects.toMatchObject({
      kind: 'invalid', message: expect.stringContaining('notifyUrl has a user name or password that is not valid percent-encoding'),
    });
    await expect(s.service.createOrder({ oid: 'bad-pass', uid: 'u1', amount: '1', notifyUrl: 'https://user:%E0%A4%A@shop.example/x' })).rejects.toMatchObject({ kind: 'invalid' });
    // One stored before this check: its row is given the URL by hand.
    const rec = await receiver();
    const id = await paidOrderWithHook(s, rec.url);
    s.ledger.sqlite.prepare('update callbacks set url = ? where subject_id = ?').run(bad, id);
    expect(await deliver(bad, '{}', { allowPrivate: true })).toMatchObject({ statusCode: null, error: expect.stringContaining('percent-encoding') });
    worker(s.ledger, { schedule: [60_000] });
    await until(async () => (await s.service.listCallbacks({}))[0]!.attempts === 1);
    expect((await s.service.listCallbacks({}))[0]).toMatchObject({ status: 'pending', lastError: expect.stringContaining('percent-encoding') });
  });

  it('a URL on a port kept for other protocols (mail, SSH, ...) or on port 0 is refused at creation, for the notifyUrl, the redirectUrl and the logo; one already stored is never sent (an attacker review)', async () => {
    const s = await setup();
    for (const [field, url, why] of [
      ['notifyUrl', 'http://1.1.1.1:25/x', 'port 25, kept for services that are not HTTP'],
      ['notifyUrl', 'https://shop.example:0/x', 'port 0, which no server listens on'],
      ['notifyUrl', 'https://shop.example:22/x', 'port 22, kept for services that are not HTTP'],
      ['redirectUrl', 'https://shop.example:6667/back', 'port 6667, kept for services that are not HTTP'],
      ['logo', 'https://cdn.example:110/l.png', 'port 110, kept for services that are not HTTP'],
    ] as const) {
      await expect(s.service.createOrder({ oid: `port-${field}-${url.length}`, uid: 'u1', amount: '1', [field]: url })).rejects.toMatchObject({
        kind: 'invalid', message: expect.stringContaining(`${field} uses ${why}`),
      });
    }
    await expect(s.service.createOrder({ oid: 'port-ok', uid: 'u1', amount: '1', notifyUrl: 'https://shop.example:8443/x' })).resolves.toMatchObject({ oid: 'port-ok' });
    // One stored before the rule: its row is given the URL by hand; its attempts fail, nothing is sent.
    const rec = await receiver();
    const id = await paidOrderWithHook(s, rec.url);
    const smtp = `http://127.0.0.1:25/cb`;
    s.ledger.sqlite.prepare('update callbacks set url = ? where subject_id = ?').run(smtp, id);
    worker(s.ledger, { schedule: [60_000] });
    await until(async () => (await s.service.listCallbacks({})).some((c) => c.attempts === 1));
    expect((await s.service.listCallbacks({})).find((c) => c.attempts === 1)).toMatchObject({ status: 'pending', lastError: expect.stringContaining('it uses port 25, kept for services that are not HTTP') });
    expect(rec.received).toHaveLength(0);
  });

  it('a restart in the middle of the retries resumes them', async () => {
    const s = await setup();
    const rec = await receiver((n) => (n === 1 ? 500 : 200));
    await paidOrderWithHook(s, rec.url);
    const first = new CallbackWorker({ ledger: s.ledger, now: Date.now, allowPrivate: true, pollMs: 50, schedule: [700], random: () => 0.5 });
    first.start();
    await rec.waitFor(1);
    await until(async () => (await s.service.listCallbacks({}))[0]!.attempts === 1);
    await first.stop();
    // The process is gone; another opens the ledger file afresh.
    const again = openLedger(s.file);
    cleanups.push(() => again.close());
    const second = worker(again, { schedule: [700] });
    const got = await rec.waitFor(2);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(695);
    expect(got[1]!.body.eventId).toBe(got[0]!.body.eventId);
    await until(async () => (await s.service.listCallbacks({}))[0]!.status === 'delivered');
    const shown = await s.service.showCallback(got[0]!.body.eventId);
    expect(shown.history.map((h) => [h.statusCode, h.by])).toEqual([[500, first.owner], [200, second.owner]]);
  });

  it('a row this process writes reaches its sender at once (handed over or woken): sent once committed, never when rolled back', async () => {
    const s = await setup();
    const rec = await receiver();
    worker(s.ledger, { pollMs: 60_000 }); // no timed poll: only this process's own news can send
    await new Promise((r) => setTimeout(r, 100));
    const o = await s.service.createOrder({ oid: 'rolled-back', uid: 'u1', amount: '10', notifyUrl: rec.url });
    await expect(groupCommit(s.ledger.sqlite).submit(() => {
      recordPayment(s.ledger.db, { orderId: o.id, txHash: evmTx(++tx), logIndex: 0, amount: 10_000_000n, rawAmount: null, chainType: 'EVM', chainId: '1', token: null, blockNumber: 1, blockHash: null, source: 'chain' }, { now: Date.now(), actor: 'watcher' });
      throw new Error('refused after the event was written');
    })).rejects.toThrow('refused after');
    const before = Date.now();
    const committed = await paidOrderWithHook(s, rec.url);
    // The sender polls once a minute here: a callback within 10 s was handed over or woken (a
    // tighter bound only measures the machine's load).
    const [got] = await rec.waitFor(1, 10_000);
    expect(got!.body.id).toBe(committed);
    expect(got!.at - before).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(rec.received.map((r) => r.body.id)).toEqual([committed]);
    expect((await s.service.listCallbacks({})).map((c) => c.subject)).toEqual([`order:${committed}`]);
  });

  it('two senders on one ledger: every event is sent once and acknowledged once', async () => {
    const s = await setup();
    const rec = await receiver();
    const other = openLedger(s.file);
    cleanups.push(() => other.close());
    // As two processes: neither takes rows from this process's transactions, both poll.
    const a = worker(s.ledger, { pollMs: 10, handoff: false });
    const b = worker(other, { pollMs: 10, handoff: false });
    for (let i = 0; i < 30; i++) await paidOrderWithHook(s, rec.url, `two-${i}`);
    await rec.waitFor(30);
    await until(async () => (await s.service.listCallbacks({ status: 'delivered', limit: 100 })).length === 30);
    await new Promise((r) => setTimeout(r, 300));
    const ids = rec.received.map((r) => r.body.eventId);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const senders = new Set<string>();
    for (const c of await s.service.listCallbacks({ limit: 100 })) {
      const shown = await s.service.showCallback(c.id);
      expect(shown.history).toHaveLength(1);
      senders.add(shown.history[0]!.by);
    }
    expect([...senders].every((o) => o === a.owner || o === b.owner)).toBe(true);
  });

  it('a receiver that hangs is cut at 10 s and does not hold up the delivery to another host', { timeout: 30_000 }, async () => {
    const s = await setup();
    const hanging = await receiver(() => 'hang');
    const fine = await receiver();
    await paidOrderWithHook(s, hanging.url);
    const started = Date.now();
    worker(s.ledger, { schedule: [60_000] }); // the default 10 s timeout
    await hanging.waitFor(1);
    await paidOrderWithHook(s, fine.url);
    const [got] = await fine.waitFor(1);
    expect(got!.at - started, 'the other host waited for the hanging one').toBeLessThan(5_000);
    await until(async () => (await s.service.listCallbacks({ limit: 10 })).every((c) => c.attempts === 1), 15_000);
    const cut = (await s.service.listCallbacks({})).find((c) => c.url === hanging.url)!;
    expect(cut).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'no answer within 10 s' });
    const [attempt] = (await s.service.showCallback(cut.id)).history;
    expect(attempt!.latencyMs).toBeGreaterThanOrEqual(9_990);
    expect(attempt!.latencyMs).toBeLessThan(11_500);
  });

  it('a slow host holds only its own slots (per-host bound)', async () => {
    const s = await setup();
    const slow = await receiver(() => 'hang');
    const fine = await receiver();
    for (let i = 0; i < 5; i++) await paidOrderWithHook(s, slow.url, `slow-${i}`);
    worker(s.ledger, { perHost: 2, timeoutMs: 5_000, schedule: [60_000] });
    await slow.waitFor(2);
    for (let i = 0; i < 3; i++) await paidOrderWithHook(s, fine.url, `fine-${i}`);
    // Well before the slow host's two attempts time out and free their slots.
    await fine.waitFor(3, 3_500);
    expect(slow.received).toHaveLength(2);
  });

  // An attacker review (session 24): one merchant spread its callbacks over eight receivers that
  // accept and never answer, held all 128 attempts, and another merchant's callback waited 261 s
  // behind its backlog. A merchant's share of the process is bounded, whatever its receivers.
  it("one merchant's hanging receivers hold only its own share: another merchant's callback goes at once", async () => {
    const s = await setup();
    const other = await addOtherMerchant(s.service, 'Victim');
    const hanging = await Promise.all(Array.from({ length: 4 }, () => receiver(() => 'hang')));
    const fine = await receiver();
    const paid = async (mchId: string, url: string, oid: string) => {
      const o = await s.service.createOrder({ mchId, oid, uid: 'u1', amount: '10', notifyUrl: url });
      await s.service.markPaid({ id: o.id, txHash: evmTx(++tx) });
    };
    for (let i = 0; i < 24; i++) await paid(s.mchId, hanging[i % 4]!.url, `att-${i}`);
    const started = Date.now();
    worker(s.ledger, { maxInFlight: 8, perHost: 2, perMerchant: 4, timeoutMs: 4_000, schedule: [60_000] });
    // Time enough for the sender to fill every slot it will take.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(hanging.reduce((n, h) => n + h.received.length, 0)).toBe(4);
    await paid(other.mchId, fine.url, 'victim-1');
    // Well before any hanging attempt is cut (4 s) and frees a slot.
    const [got] = await fine.waitFor(1, 2_000);
    expect(got!.at - started).toBeLessThan(3_000);
    // The attacker's merchant never had more than its share in flight.
    expect(hanging.reduce((n, h) => n + h.received.length, 0)).toBe(4);
  });
});

describe('what each attempt is made of', () => {
  it('a retry is signed with the secret of its own time: one rotated after the first attempt signs the second', async () => {
    const s = await setup();
    const rec = await receiver((n) => (n === 1 ? 500 : 200));
    await paidOrderWithHook(s, rec.url);
    worker(s.ledger, { schedule: [400] });
    const [first] = await rec.waitFor(1);
    const rotated = await s.service.rotateSecret(s.mchId);
    const got = await rec.waitFor(2);
    expect(merchantVerifies(first!.body, s.secret)).toBe(true);
    expect(merchantVerifies(got[1]!.body, rotated.secret), 'the retry verifies with the new secret').toBe(true);
    expect(merchantVerifies(got[1]!.body, s.secret), 'and not with the old one').toBe(false);
  });

  it('an answer whose body is still coming at the end of the attempt\'s time is cut there; its status counts', async () => {
    let closedAt = 0;
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => {
        clearInterval(drip);
        closedAt = Date.now();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const started = Date.now();
    const result = await deliver(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, '{}', { allowPrivate: true, timeoutMs: 2_000 });
    expect(result).toMatchObject({ statusCode: 200, error: null });
    // The status counts once it is in: deliver does not wait for the body's end, nor for the cut.
    expect(Date.now() - started).toBeLessThan(1_500);
    await until(() => closedAt > 0, 6_000);
    expect(closedAt - started).toBeGreaterThanOrEqual(1_950);
    expect(closedAt - started).toBeLessThan(4_000);
  });
});
