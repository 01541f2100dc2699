// The sender's poll while one receiver is full and has a backlog (not one of npm run bench's
// figures; bench/CHANGES.md, twelfth round). A receiver at its 16 attempts in flight, with N due
// rows behind them: each poll (every 500 ms in serve, on its event loop) asks whether a row of any
// other host is due, and a claim then reads those rows. Baseline in the same run: the poll's read
// when no host is full (the first due row). Medians of 21 reads each, alternating.
//   npm run build && node bench/callbacks-backlog.mjs [N ...]      (default 10000 100000)
// BACKLOG_DIST=DIR/dist measures another build's reads (e.g. a `git archive` of main's, built)
// on ledgers made by this tree's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HERE = new URL('..', import.meta.url).pathname;
const DIST = process.env.BACKLOG_DIST ?? join(HERE, 'dist');
const { openLedger } = await import(join(HERE, 'dist', 'store', 'db.js'));
const { LocalPaymentService } = await import(join(HERE, 'dist', 'store', 'local-service.js'));
const { deliveryDue, claimDue } = await import(join(DIST, 'store', 'outbox.js'));
const { groupCommit } = await import(join(DIST, 'store', 'group-commit.js'));
const sizes = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-bench-backlog-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const FULL = 'a.example:80';

for (const n of sizes.length ? sizes : [10_000, 100_000]) {
  const ledger = openLedger(join(dir, `backlog-${n}.db`));
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' } });
  const m = await service.addMerchant({ name: 'Bench', generateWallet: true, rateLimit: 0 });
  const now = Date.now();
  // The backlog as the outbox holds it (order.paid rows of ~600 bytes), written with SQL: the
  // full host's n rows, and one row of another host, due last, not yet due.
  const insert = ledger.sqlite.prepare(`INSERT INTO callbacks (id, merchant_id, event, subject_type, subject_id, url, host, payload, status, attempts, step, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, 'order.paid', 'order', ?, ?, ?, ?, 'pending', 0, 0, ?, ?, ?)`);
  const payload = JSON.stringify({ event: 'order.paid', filler: 'x'.repeat(560) });
  ledger.sqlite.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`evt_${i}`, m.merchant.mchId, `ord_${i}`, 'http://a.example/cb', FULL, payload, now - n + i, now, now);
    insert.run('evt_other', m.merchant.mchId, 'ord_other', 'http://b.example/cb', 'b.example:80', payload, now + 60_000, now, now);
  })();
  const timed = (fn) => {
    const t = process.hrtime.bigint();
    const r = fn();
    return [Number(process.hrtime.bigint() - t) / 1000, r];
  };
  const base = [];
  const poll = [];
  const claims = [];
  for (let k = 0; k < 21; k++) {
    base.push(timed(() => deliveryDue(ledger.db, now, []))[0]);
    const [us, due] = timed(() => deliveryDue(ledger.db, now, [FULL]));
    if (due) throw new Error('a row of another host was reported due');
    poll.push(us);
    // The claim a poll makes when it finds one: here it finds none, as the read above said.
    const t = process.hrtime.bigint();
    const got = await groupCommit(ledger.sqlite).submit(() =>
      claimDue(ledger.db, { now, owner: 'bench', leaseMs: 60_000, limit: 112, perHost: 16, inFlight: new Map([[FULL, 16]]) }));
    claims.push(Number(process.hrtime.bigint() - t) / 1000);
    if (got.length) throw new Error('a claim leased a row of the full host');
  }
  console.log(`backlog ${n.toLocaleString('en')} rows of a full host: the poll's read ${median(poll).toFixed(1)} µs, a claim ${median(claims).toFixed(1)} µs; the due read with no host full ${median(base).toFixed(1)} µs (poll / baseline ${(median(poll) / median(base)).toFixed(1)}x)`);
  ledger.close();
}
rmSync(dir, { recursive: true, force: true });
