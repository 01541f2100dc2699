/**
 * `order status ID` read with SQLite alone (src/store/order-status-read.ts), on a real ledger
 * file: it answers what the service answers, or leaves the question to the service.
 */
import { chmodSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaVersion } from '../../src/core/version.js';
import { quickOrderStatus } from '../../src/store/order-status-read.js';
import { MINUTE, T0, addOtherMerchant, addTestMerchant, order, paidOrder, refused, useHarness } from '../helpers/service.js';

describe('quickOrderStatus', () => {
  const h = useHarness();

  it("answers each order's status as the service does: pending, expired once past its expiry, paid", async () => {
    const { service, file } = h();
    const { mchId } = await addTestMerchant(service);
    const pending = await order(service, { oid: 'A-1', expiredAt: T0 + 30 * MINUTE });
    const paid = await paidOrder(service, { oid: 'A-2' });
    for (const now of [T0, T0 + 30 * MINUTE, T0 + 30 * MINUTE + 1, T0 + 60 * MINUTE]) {
      h().clock.now = now;
      for (const o of [pending, paid]) {
        expect(quickOrderStatus(file, o.id, undefined, now), `${o.oid} at ${now - T0}`).toBe(await service.getOrderStatus(o.id));
        expect(quickOrderStatus(file, o.id, mchId, now)).toBe(await service.getOrderStatus(o.id));
      }
    }
    expect(quickOrderStatus(file, pending.id, undefined, T0 + 30 * MINUTE + 1)).toBe('EXPIRED');
    expect(quickOrderStatus(file, paid.id, undefined, T0 + 60 * MINUTE)).toBe('PAID');
  });

  it("leaves to the service what it cannot answer alone: an oid, an unknown id, another merchant's order", async () => {
    const { service, file } = h();
    const { mchId } = await addTestMerchant(service);
    const other = await addOtherMerchant(service);
    const o = await order(service, { oid: 'A-1', mchId });
    expect(quickOrderStatus(file, o.id, mchId, T0)).toBe('PENDING_PAY');
    expect(quickOrderStatus(file, 'A-1', undefined, T0)).toBeUndefined();
    expect(quickOrderStatus(file, 'ord_nothing', undefined, T0)).toBeUndefined();
    expect(quickOrderStatus(file, o.id, other.mchId, T0)).toBeUndefined();
  });

  it('leaves a ledger of another schema to the service (which migrates it or refuses a newer one)', async () => {
    const { service, file, ledger } = h();
    await addTestMerchant(service);
    const o = await order(service);
    ledger.sqlite.pragma(`user_version = ${schemaVersion() + 1}`);
    expect(quickOrderStatus(file, o.id, undefined, T0)).toBeUndefined();
    ledger.sqlite.pragma(`user_version = ${schemaVersion()}`);
    expect(quickOrderStatus(file, o.id, undefined, T0)).toBe('PENDING_PAY');
  });

  it('refuses a ledger others can read, as every command does, and a file that is not a ledger', async () => {
    const { service, file } = h();
    await addTestMerchant(service);
    const o = await order(service);
    chmodSync(file, 0o644);
    await refused(() => quickOrderStatus(file, o.id, undefined, T0), 'unavailable', /can be read by others \(mode 644\)/);
    chmodSync(file, 0o600);
    await refused(() => quickOrderStatus(`${file}-missing-dir/x/y.db`, o.id, undefined, T0), 'unavailable', /cannot open the ledger at/);
  });
});
