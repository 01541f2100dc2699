import { describe, expect, it } from 'vitest';
import { evmTx, SLOW, withMerchant } from './_support.js';

// Found by a new-user trial (session 20): `callbacks list --order <oid>` listed nothing for an
// order with seven callbacks (the filter took the id only), exit 0; an unknown order or
// withdrawal answered an empty list in callbacks list and log, where refund list refused it.
describe('filters that name an order or a withdrawal', { timeout: SLOW }, () => {
  it('take an order by id or oid, and refuse an order or withdrawal that is not there', async () => {
    const s = await withMerchant();
    const o = await s.json(['order', 'create', '--oid', 'F-1', '--uid', 'fay', '--amount', '2', '--notify-url', 'https://shop.example/hook']);
    await s.json(['order', 'mark-paid', 'F-1', '--tx-hash', evmTx(), '--yes']);
    const [byId, byOid] = await Promise.all([
      s.json(['callbacks', 'list', '--order', o.id]),
      s.json(['callbacks', 'list', '--order', 'F-1']),
    ]);
    expect(byId.map((c: { event: string }) => c.event)).toEqual(['order.paid']);
    expect(byOid).toEqual(byId);

    const refusals = await Promise.all([
      s.run(['callbacks', 'list', '--order', 'F-404']),
      s.run(['order', 'held', '--order', 'F-404']),
      s.run(['callbacks', 'list', '--withdrawal', 'wd_nope']),
      s.run(['log', '--withdrawal', 'wd_nope']),
    ]);
    for (const r of refusals.slice(0, 2)) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: Order not found: no order has the id or oid F-404 /);
    }
    for (const r of refusals.slice(2)) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/wd_nope/);
      expect(r.stderr).toMatch(/not found/i);
    }
  });
});
