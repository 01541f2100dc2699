import { describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { groupCommit } from '../../src/store/group-commit.js';
import { claimDue, deliveryDue, findCallback, recordAttempt } from '../../src/store/outbox.js';
import { MINUTE, addOtherMerchant, addTestMerchant, paidOrder, useHarness } from '../helpers/service.js';

/**
 * The sender's claim (src/store/outbox.ts claimDue) with serve's limits: 128 in flight in all,
 * 16 to one host. A slot freed by a host's answer leases that host's next row; the claim reads
 * the due rows in order to find it, and once the host is full, the rows of other hosts.
 */
const A = 'https://shop.example/cb';
const B = 'https://other.example/cb';

/** Counts the rows each read of due candidates returned, on this connection. */
function countCandidateReads(sqlite: Database.Database): number[] {
  const reads: number[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    const st = prepare(source);
    if (/^SELECT id, host, merchant_id FROM callbacks WHERE/.test(source)) {
      const all = st.all.bind(st);
      st.all = ((...args: unknown[]) => {
        const rows = all(...(args as [])) as unknown[];
        reads.push(rows.length);
        return rows;
      }) as typeof st.all;
    }
    return st;
  }) as typeof sqlite.prepare;
  return reads;
}

describe("the sender's claim", () => {
  const h = useHarness();

  it('a slot freed by a busy host reads a page of two hosts\' worth of due rows, not four times the free slots, and the other hosts\' rows are not left behind it', async () => {
    const { service, ledger, clock } = h();
    await addTestMerchant(service);
    for (let i = 0; i < 600; i++) await paidOrder(service, { notifyUrl: A });
    for (let i = 0; i < 5; i++) await paidOrder(service, { notifyUrl: B });
    const reads = countCandidateReads(ledger.sqlite);
    const claim = (inFlight: Map<string, number>) => groupCommit(ledger.sqlite).submit(() =>
      claimDue(ledger.db, { now: clock.now, owner: 'me', leaseMs: 60_000, limit: 128 - [...inFlight.values()].reduce((s, n) => s + n, 0), perHost: 16, inFlight }));

    // Host A has 15 of its 16 in flight, and 600 rows due ahead of B's five. One row of A is
    // leased from a page of 32 rows (it was 4 x 113 free slots = 452, all of A's, to lease that
    // one); A is full then, and B's five are leased in the same claim (they waited behind A's
    // backlog until a poll happened to find A full).
    const first = await claim(new Map([['shop.example:443', 15]]));
    expect(first.map((r) => r.host)).toEqual(['shop.example:443', ...Array(5).fill('other.example:443')]);
    expect(reads).toEqual([32]);

    // A still full: nothing else is due but A's.
    expect(await claim(new Map([['shop.example:443', 16], ['other.example:443', 5]]))).toEqual([]);
  });

  // An attacker review (session 24): one merchant's callbacks to eight hanging receivers held every slot.
  it("a merchant at its share leases nothing more, on any host, and another merchant's rows behind its backlog are leased in the same claim", async () => {
    const { service, ledger, clock } = h();
    const attacker = await addTestMerchant(service);
    const victim = await addOtherMerchant(service, 'Victim');
    const hosts = ['https://h1.example/cb', 'https://h2.example/cb', 'https://h3.example/cb'];
    for (let i = 0; i < 90; i++) await paidOrder(service, { mchId: attacker.mchId, notifyUrl: hosts[i % 3] });
    for (let i = 0; i < 3; i++) await paidOrder(service, { mchId: victim.mchId, notifyUrl: B });
    const claim = (merchantsInFlight: Map<string, number>, inFlight: Map<string, number>) => groupCommit(ledger.sqlite).submit(() =>
      claimDue(ledger.db, { now: clock.now, owner: 'me', leaseMs: 60_000, limit: 64, perHost: 16, inFlight, perMerchant: 32, merchantsInFlight }));
    // 30 of its 32 in flight, 10 on each host: two more of its rows, then the victim's three.
    const got = await claim(new Map([[attacker.mchId, 30]]), new Map(hosts.map((u) => [`${new URL(u).hostname}:443`, 10])));
    expect(got.map((r) => r.merchantId)).toEqual([attacker.mchId, attacker.mchId, victim.mchId, victim.mchId, victim.mchId]);
    // At its share: none of its rows, though each of its hosts has room.
    expect(await claim(new Map([[attacker.mchId, 32]]), new Map())).toEqual([]);
  });

  it('with full hosts left out, the due rows of every other host are found in due order, and a row not yet due is not', async () => {
    const { service, ledger, clock } = h();
    await addTestMerchant(service);
    const C = 'https://third.example/cb';
    // Interleaved in time: A's backlog with C's rows (i = 50, 150, 250) and B's (30, 90, 210, 270) among it.
    for (let i = 0; i < 300; i++) {
      await paidOrder(service, { notifyUrl: i % 100 === 50 ? C : i % 60 === 30 ? B : A });
      clock.now += 10;
    }
    const due = (busy: string[]) => deliveryDue(ledger.db, clock.now, busy);
    const claim = (inFlight: Map<string, number>, limit: number) => groupCommit(ledger.sqlite).submit(() =>
      claimDue(ledger.db, { now: clock.now, owner: 'me', leaseMs: 10 * MINUTE, limit, perHost: 16, inFlight }));
    const aFull = new Map([['shop.example:443', 16]]);

    expect(due(['shop.example:443'])).toBe(true);
    // Room for one: the earliest of the two hosts' rows (B's at i = 30), from their merged list.
    const one = await claim(aFull, 1);
    expect(one.map((r) => r.host)).toEqual(['other.example:443']);
    const got = await claim(aFull, 100);
    expect(got.map((r) => r.host).sort()).toEqual([...Array(3).fill('other.example:443'), ...Array(3).fill('third.example:443')]);
    expect(Math.min(...got.map((r) => r.nextAttemptAt))).toBeGreaterThan(one[0]!.nextAttemptAt);
    const times = got.map((r) => r.nextAttemptAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // All leased now: nothing of B and C is due, though A's backlog is.
    expect(due(['shop.example:443'])).toBe(false);
    expect(due([])).toBe(true);
    expect(await claim(aFull, 100)).toEqual([]);

    // One of B's attempts failed: due again a minute later, not before.
    await groupCommit(ledger.sqlite).submit(() =>
      recordAttempt(ledger.db, { id: got[0]!.id, owner: 'me', at: clock.now, statusCode: 500, latencyMs: 3, error: null }, () => MINUTE));
    expect(due(['shop.example:443'])).toBe(false);
    clock.now += MINUTE + 3;
    expect(due(['shop.example:443'])).toBe(true);
    expect((await claim(aFull, 100)).map((r) => r.id)).toEqual([got[0]!.id]);

    // A host's first row, written a moment after the hosts were last looked at: found at once.
    expect(due(['shop.example:443', 'other.example:443'])).toBe(false);
    await paidOrder(service, { notifyUrl: 'https://fourth.example/cb' });
    expect(due(['shop.example:443', 'other.example:443'])).toBe(true);
    expect((await claim(new Map([['shop.example:443', 16], ['other.example:443', 16]]), 100)).map((r) => r.host)).toEqual(['fourth.example:443']);
  });
});

describe("an attempt's record", () => {
  const h = useHarness();

  it("an answer for a row another sender took over counts, and leaves that sender's lease and retry schedule alone; the first delivery's time is kept", async () => {
    const { service, ledger, clock } = h();
    await addTestMerchant(service);
    await paidOrder(service, { notifyUrl: A });
    await paidOrder(service, { notifyUrl: A });
    const claim = (owner: string) => groupCommit(ledger.sqlite).submit(() =>
      claimDue(ledger.db, { now: clock.now, owner, leaseMs: MINUTE, limit: 1, perHost: 16, inFlight: new Map() }));
    const record = (owner: string, id: string, statusCode: number) => groupCommit(ledger.sqlite).submit(() =>
      recordAttempt(ledger.db, { id, owner, at: clock.now, statusCode, latencyMs: 5, error: null }, () => 30 * MINUTE));
    const row = (id: string) => findCallback(ledger.db, id);

    // Ours and acknowledged: delivered, lease cleared.
    const [mine] = await claim('me');
    expect(await record('me', mine!.id, 204)).toBe('delivered');
    expect(row(mine!.id)).toMatchObject({ status: 'delivered', attempts: 1, leaseOwner: null, leaseUntil: null, deliveredAt: clock.now + 5, lastStatus: 204 });

    // Ours and refused: due again after the schedule's delay, lease cleared.
    const [second] = await claim('me');
    const at = clock.now;
    expect(await record('me', second!.id, 500)).toBe('pending');
    expect(row(second!.id)).toMatchObject({ status: 'pending', attempts: 1, step: 1, nextAttemptAt: at + 5 + 30 * MINUTE, leaseOwner: null, lastStatus: 500 });

    // Its lease ran out (our answer was slow) and another sender took it.
    clock.now += 30 * MINUTE + 10;
    const [taken] = await claim('other');
    expect(taken!.id).toBe(second!.id);
    const until = taken!.leaseUntil;
    // Our late refusal: counted, the other's lease and the schedule untouched.
    expect(await record('me', second!.id, 502)).toBe('pending');
    expect(row(second!.id)).toMatchObject({ status: 'pending', attempts: 2, step: 1, leaseOwner: 'other', leaseUntil: until, lastStatus: 502 });
    // Our late acknowledgement: delivered (the merchant has it), the other's lease left to run out.
    expect(await record('me', second!.id, 200)).toBe('delivered');
    const delivered = row(second!.id);
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 3, leaseOwner: 'other', leaseUntil: until, deliveredAt: clock.now + 5 });
    // The other's acknowledgement a moment later: counted, its lease cleared, the first delivery's time kept.
    clock.now += 1000;
    expect(await record('other', second!.id, 200)).toBe('delivered');
    expect(row(second!.id)).toMatchObject({ status: 'delivered', attempts: 4, leaseOwner: null, leaseUntil: null, deliveredAt: delivered.deliveredAt });
  });
});

