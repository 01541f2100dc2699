/**
 * Several real processes on one ledger file at the same time, as operators, cron jobs and the
 * server do: every write queues on the file lock, none fails with "database is locked", and the
 * money stays exact.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { copyFixture } from '../helpers/fixtures.js';
import { balanceOf, EVM_TO, LOCK_WORDS, paidOrder, sandbox, SLOW, USDT_ETH, withMerchant } from './_support.js';

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

function expectNoLockErrors(results: CliResult[]): void {
  for (const r of results) {
    expect(r.stderr).not.toMatch(LOCK_WORDS);
    // A generated wallet's 24 words may well include "busy": the words are not an error message.
    expect(r.stdout.replace(/"mnemonic": "[a-z ]+"/, '')).not.toMatch(LOCK_WORDS);
  }
}

describe('several processes on one ledger file', { timeout: SLOW }, () => {
  it('a fresh file opened by many processes at once: each migrates it or waits, all succeed', async () => {
    // Three fresh files, six processes each: the race to create the schema is lost by someone.
    const rounds = await Promise.all(
      times(3, async () => {
        const s = sandbox();
        const results = await Promise.all([
          ...times(6, (i) => s.run(['merchant', 'add', '--name', `Shop ${i}`, '--generate-wallet', '--json'])),
        ]);
        return { s, results };
      }),
    );
    for (const { s, results } of rounds) {
      expectNoLockErrors(results);
      expect(results.map((r) => [r.code, r.stderr.replace(/^(The secret|WARNING).*\n/gm, '')])).toEqual(times(6, () => [0, '']));
      const ids = results.map((r) => JSON.parse(r.stdout).mchId);
      expect(new Set(ids).size).toBe(6);
      const list = await s.json(['merchant', 'list']);
      expect(list.map((m: { mchId: string }) => m.mchId).sort()).toEqual([...ids].sort());
    }
  });

  it('a fresh file another process is still turning into a ledger: the command waits for it, not "database is locked"', async () => {
    // A process that creates a ledger holds the file's write lock while it switches it to WAL.
    // Another command opening the file then asks for the same lock while holding a read lock:
    // SQLite answers that at once with SQLITE_BUSY (waiting could deadlock), past the busy
    // timeout. Seen in CI as exit 3 "cannot open the ledger ...: database is locked", 1 in ~1,000
    // of five commands started together on a new file.
    const s = sandbox();
    closeSync(openSync(s.db, 'wx', 0o600));
    const first = new Database(s.db);
    first.exec('BEGIN IMMEDIATE');
    first.exec('CREATE TABLE being_created (x)');
    const released = new Promise<void>((resolve) => setTimeout(() => { first.exec('ROLLBACK'); first.close(); resolve(); }, 1_500));
    try {
      const r = await s.run(['merchant', 'add', '--name', 'Waits', '--generate-wallet', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).mchId).toMatch(/^M\d+$/);
    } finally {
      await released;
    }
    expect(await s.json(['merchant', 'list'])).toHaveLength(1);
  });

  // Found by an outside review: commands started while another one upgraded a ledger of the
  // previous release read which migrations were still to do before the winner committed, then
  // ran the winner's steps again (0010's `DROP INDEX`: "no such index") and exited 3.
  it('a ledger of the previous release opened by several commands at once: one migrates it, the others wait, all succeed', async () => {
    const s = sandbox();
    copyFixture('ledger-schema10-addresses.db', s.db);
    // Held while the commands start: each reads the migrations to do, then waits for the lock.
    const holder = new Database(s.db);
    holder.exec('BEGIN IMMEDIATE');
    const released = new Promise<void>((resolve) => setTimeout(() => { holder.exec('ROLLBACK'); holder.close(); resolve(); }, 2_500));
    let results: CliResult[];
    try {
      results = await Promise.all(times(4, () => s.run(['order', 'status', 'old-1', '--json'])));
    } finally {
      await released;
    }
    expectNoLockErrors(results);
    expect(results.map((r) => [r.code, r.stderr])).toEqual(times(4, () => [0, '']));
    // The fixture's orders expired on the day it was written.
    expect(results.map((r) => JSON.parse(r.stdout))).toEqual(times(4, () => ({ id: 'ord_1k86359ta2mHjq8iclrI17XRu6gE60g', status: 'EXPIRED' })));
    const after = new Database(s.db, { readonly: true });
    try {
      expect(after.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'order_addresses' order by name").pluck().all())
        .toEqual(['order_addresses_address', 'sqlite_autoindex_order_addresses_1']);
      // Each migration recorded once.
      expect(after.prepare('select count(*) from __drizzle_migrations').pluck().get()).toBe(after.prepare('select count(distinct hash) from __drizzle_migrations').pluck().get());
    } finally {
      after.close();
    }
  });

  it('orders created at once get distinct addresses; the same oid at once gives one order', async () => {
    const s = await withMerchant();
    const results = await Promise.all([
      ...times(8, (i) => s.run(['order', 'create', '--oid', `C-${i}`, '--uid', `u${i}`, '--amount', '1', '--json'])),
      ...times(4, () => s.run(['order', 'create', '--oid', 'SAME', '--uid', 'u', '--amount', '2', '--json'])),
    ]);
    expectNoLockErrors(results);
    expect(results.map((r) => r.code)).toEqual(times(12, () => 0));
    const orders = results.map((r) => JSON.parse(r.stdout));
    const distinct = orders.slice(0, 8);
    expect(new Set(distinct.map((o) => o.id)).size).toBe(8);
    expect(new Set(distinct.map((o) => o.addresses.EVM)).size).toBe(8);
    expect(new Set(distinct.map((o) => o.addresses.TRON)).size).toBe(8);
    const same = orders.slice(8);
    expect(new Set(same.map((o) => o.id)).size).toBe(1);
    const all = await s.json(['order', 'list']);
    expect(all).toHaveLength(9);
    expect(new Set(all.map((o: { addresses: { EVM: string } }) => o.addresses.EVM)).size).toBe(9);
    expect((await s.json(['merchant', 'show'])).addressesIssued).toEqual({ EVM: 9, TRON: 9 });
  });

  it('20 refunds of 1 at once on an order paid 10: exactly 10 succeed, the order is REFUNDED, the balance 0', async () => {
    const s = await withMerchant();
    const id = await paidOrder(s, 'R-1', 'u1', '10');
    const results = await Promise.all(times(20, () => s.run(['refund', '--id', id, '--amount', '1', '--repeat', '--yes'])));
    expectNoLockErrors(results);
    const ok = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code === 1);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.stderr).toMatch(/not Paid \(it is REFUNDED\)|above what remains refundable|insufficient balance/);
    const [status, bal, refunds, check] = await Promise.all([
      s.run(['order', 'status', id]),
      balanceOf(s, 'u1'),
      s.json(['refund', 'list', '--order', id]),
      s.json(['ledger', 'check']),
    ]);
    expect(status.stdout).toBe('REFUNDED\n');
    expect(bal).toEqual({ available: '0', held: '0' });
    expect(refunds).toHaveLength(10);
    expect(check).toEqual({ ok: true, violations: [] });
  });

  it('20 withdrawals of 10 at once on a balance of 70: exactly 7 succeed, nothing goes negative', async () => {
    const s = await withMerchant();
    await s.json(['balance', 'adjust', 'u1', '--amount', '+70', '--reason', 'load test', '--yes']);
    const results = await Promise.all(
      times(20, () =>
        s.run(['withdraw', 'apply', '--uid', 'u1', '--amount', '10', '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH, '--json']),
      ),
    );
    expectNoLockErrors(results);
    const ok = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code === 1);
    expect(ok).toHaveLength(7);
    expect(refused).toHaveLength(13);
    for (const r of refused) expect(r.stderr).toMatch(/insufficient balance/);
    const [bal, pending, check] = await Promise.all([
      balanceOf(s, 'u1'),
      s.json(['withdraw', 'list', '--status', 'PENDING']),
      s.run(['ledger', 'check']),
    ]);
    expect(bal).toEqual({ available: '0', held: '70' });
    expect(pending.map((w: { id: string }) => w.id).sort()).toEqual(ok.map((r) => JSON.parse(r.stdout).id).sort());
    expect(check).toEqual({ code: 0, stdout: 'ledger ok: every invariant holds\n', stderr: '' });
  });
});
