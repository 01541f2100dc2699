import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { MINUTE, T0, accountRows, addOtherMerchant, addTestMerchant, counts, paidOrder, refused, useHarness } from '../helpers/service.js';

const expiresAt = T0 + 5 * MINUTE;

describe('nonces of signed requests', () => {
  const h = useHarness();

  it('is consumed by the operation: the same nonce again is refused and changes nothing', async () => {
    const { service, ledger } = h();
    const { mchId } = await addTestMerchant(service);
    const signed = () => service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n1', expiresAt } });
    const o = await signed().createOrder({ mchId, oid: 'a', uid: 'u', amount: '1' });
    const before = { counts: counts(ledger), accounts: accountRows(ledger) };
    // The very same request replayed, and a different operation under the used nonce.
    await refused(signed().createOrder({ mchId, oid: 'a', uid: 'u', amount: '1' }), 'unauthorized', 'nonce has already been used');
    await refused(signed().createOrder({ mchId, oid: 'b', uid: 'u', amount: '1' }), 'unauthorized', 'nonce has already been used');
    await refused(signed().adjustBalance({ uid: 'u', amount: '1', reason: 'r' }), 'unauthorized', 'nonce has already been used');
    expect({ counts: counts(ledger), accounts: accountRows(ledger) }).toEqual(before);
    // An idempotent retry under a fresh nonce still finds the order.
    const retry = await service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n2', expiresAt } })
      .createOrder({ mchId, oid: 'a', uid: 'u', amount: '1' });
    expect(retry.id).toBe(o.id);
  });

  it('is refused for every signed operation, not only create order', async () => {
    const { service } = h();
    const { mchId } = await addTestMerchant(service);
    const o = await paidOrder(service, { amount: '10' });
    const signed = service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'r1', expiresAt } });
    await signed.refund({ id: o.id, amount: '1' });
    await refused(signed.refund({ id: o.id, amount: '1' }), 'unauthorized', 'nonce has already been used');
    expect((await service.getOrder(o.id)).refundedAmount).toBe('1');
  });

  // decisions §1: the nonce is used up once the signature verifies, whatever the operation answers;
  // a client retries a refused request by signing it again with a new nonce.
  it.each([
    ['a bad amount', (s: LocalPaymentService, mchId: string) => s.createOrder({ mchId, oid: 'x', uid: 'u', amount: '1e3' }), 'invalid', 'amount must be a plain decimal'],
    ['an unknown field', (s: LocalPaymentService, mchId: string) => s.createOrder({ mchId, oid: 'x', uid: 'u', amount: '1', notifyURL: 'https://a.example' } as never), 'invalid', 'unknown field: notifyURL'],
    ['a state conflict', (s: LocalPaymentService, mchId: string) => s.refund({ mchId, oid: 'unpaid', amount: '1' }), 'conflict', 'order status is not Paid'],
  ] as const)('is used up by a signed operation refused for %s', async (_, op, kind, msg) => {
    const { service, ledger } = h();
    const { mchId } = await addTestMerchant(service);
    await service.createOrder({ mchId, oid: 'unpaid', uid: 'u', amount: '1' });
    const signed = service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n1', expiresAt } });
    await refused(op(signed, mchId), kind, msg);
    expect(counts(ledger).nonces).toBe(1);
    await refused(signed.createOrder({ mchId, oid: 'ok', uid: 'u', amount: '1' }), 'unauthorized', 'nonce has already been used');
    expect((await service.listOrders({ mchId })).map((o) => o.oid)).toEqual(['unpaid']);
  });

  it('is not touched by an operator operation (no signature, no nonce)', async () => {
    const { service, ledger } = h();
    const { mchId } = await addTestMerchant(service);
    await refused(service.adjustBalance({ mchId, uid: 'u', amount: '-1', reason: 'r' }), 'conflict', 'insufficient balance');
    expect(counts(ledger).nonces).toBe(0);
  });

  it('is remembered per merchant', async () => {
    const { service } = h();
    const a = await addTestMerchant(service);
    const b = await addOtherMerchant(service);
    await service.as({ actor: `api:${a.mchId}`, nonce: { merchantId: a.mchId, value: 'same', expiresAt } }).createOrder({ mchId: a.mchId, oid: 'x', uid: 'u', amount: '1' });
    const other = await service.as({ actor: `api:${b.mchId}`, nonce: { merchantId: b.mchId, value: 'same', expiresAt } }).createOrder({ mchId: b.mchId, oid: 'x', uid: 'u', amount: '1' });
    expect(other.status).toBe('PENDING_PAY');
  });

  it('survives a restart: a second connection to the file refuses it too', async () => {
    const { service, file, clock } = h();
    const { mchId } = await addTestMerchant(service);
    await service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n1', expiresAt } }).createOrder({ mchId, oid: 'x', uid: 'u', amount: '1' });
    const reopened = openLedger(file);
    try {
      const again = new LocalPaymentService(reopened, { now: () => clock.now, caller: { actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n1', expiresAt } } });
      await refused(again.createOrder({ mchId, oid: 'y', uid: 'u', amount: '1' }), 'unauthorized', 'nonce has already been used');
    } finally {
      reopened.close();
    }
  });
});
