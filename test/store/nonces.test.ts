import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Ledger } from '../../src/store/db.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { closedPort } from '../helpers/closed-port.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService, NONCE_IN_FLIGHT } from '../../src/store/local-service.js';
import { MINUTE, T0, USDT, accountRows, addOtherMerchant, addShopMerchant, counts, evmTx, order, paidOrder, refused, useHarness } from '../helpers/service.js';

const expiresAt = T0 + 5 * MINUTE;

describe('nonces of signed requests', () => {
  const h = useHarness();

  it('is consumed by the operation: the same nonce again is refused and changes nothing', async () => {
    const { service, ledger } = h();
    const { mchId } = await addShopMerchant(service);
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
    const { mchId } = await addShopMerchant(service);
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
    const { mchId } = await addShopMerchant(service);
    await service.createOrder({ mchId, oid: 'unpaid', uid: 'u', amount: '1' });
    const signed = service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'n1', expiresAt } });
    await refused(op(signed, mchId), kind, msg);
    expect(counts(ledger).nonces).toBe(1);
    await refused(signed.createOrder({ mchId, oid: 'ok', uid: 'u', amount: '1' }), 'unauthorized', 'nonce has already been used');
    expect((await service.listOrders({ mchId })).map((o) => o.oid)).toEqual(['unpaid']);
  });

  it('is not touched by an operator operation (no signature, no nonce)', async () => {
    const { service, ledger } = h();
    const { mchId } = await addShopMerchant(service);
    await refused(service.adjustBalance({ mchId, uid: 'u', amount: '-1', reason: 'r' }), 'conflict', 'insufficient balance');
    expect(counts(ledger).nonces).toBe(0);
  });

  it('is remembered per merchant', async () => {
    const { service } = h();
    const a = await addShopMerchant(service);
    const b = await addOtherMerchant(service);
    await service.as({ actor: `api:${a.mchId}`, nonce: { merchantId: a.mchId, value: 'same', expiresAt } }).createOrder({ mchId: a.mchId, oid: 'x', uid: 'u', amount: '1' });
    const other = await service.as({ actor: `api:${b.mchId}`, nonce: { merchantId: b.mchId, value: 'same', expiresAt } }).createOrder({ mchId: b.mchId, oid: 'x', uid: 'u', amount: '1' });
    expect(other.status).toBe('PENDING_PAY');
  });

  it('survives a restart: a second connection to the file refuses it too', async () => {
    const { service, file, clock } = h();
    const { mchId } = await addShopMerchant(service);
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

/**
 * A replay that lands while the first copy's refusal is being answered (first attacker review of
 * session 18, left open then). The refusal rolled its change back, nonce included, and spent the
 * nonce in a write of its own afterwards: a copy of the request checked in between found the
 * nonce unused, and went through if the state had changed meanwhile. One signed request must be
 * carried out at most once, whatever it answered.
 *
 * To land the copy in that window every time, the test submits the state change and the copy
 * the moment the first copy's change is submitted to the group commit: they go into the same
 * batch, after it (the same connection), or into the next transaction on the file (another).
 */
describe('a replay racing the refusal of the first copy', () => {
  const h = useHarness();
  const TO = '0x00000000000000000000000000000000000000a1';
  let others: Ledger[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const l of others) l.close();
    others = [];
  });

  /**
   * Sends `request` through `service`; right after its change is submitted to the group commit,
   * `meanwhile` runs and a copy of the request goes through `via`. Answers all three, settled.
   */
  async function copyDuring(
    service: LocalPaymentService, via: LocalPaymentService, request: (s: LocalPaymentService) => Promise<unknown>, meanwhile: () => Promise<unknown>,
  ) {
    const submit = GroupCommit.prototype.submit;
    let during!: Promise<unknown>;
    let copy!: Promise<unknown>;
    let sent = false;
    vi.spyOn(GroupCommit.prototype, 'submit').mockImplementation(function (this: GroupCommit, change) {
      const p = submit.call(this, change);
      if (!sent) {
        // Set first: `meanwhile` and the copy submit changes of their own.
        sent = true;
        during = meanwhile();
        copy = request(via);
        // Judged by the caller once the first is settled; handled now, as they may fail before.
        copy.catch(() => {});
        during.catch(() => {});
      }
      return p;
    });
    const first = request(service);
    // The first change's submit started the other two: they exist once it has settled.
    await Promise.allSettled([first]);
    await Promise.allSettled([during, copy]);
    return { first, copy, during };
  }

  /** A service over a second connection to the ledger file: another serve process. */
  function otherProcess(): LocalPaymentService {
    const { file, clock } = h();
    const ledger = openLedger(file);
    others.push(ledger);
    return new LocalPaymentService(ledger, { now: () => clock.now, caller: { actor: 'tester' } });
  }

  it.each([['this process', false], ['another process', true]] as const)(
    'a withdrawal refused for lack of funds is not carried out by a copy (in %s) that comes with a top-up', async (_, elsewhere) => {
      const { service, ledger } = h();
      const { mchId } = await addShopMerchant(service);
      await service.adjustBalance({ mchId, uid: 'u', amount: '5', reason: 'start' });
      const via = elsewhere ? otherProcess() : service;
      const apply = (s: LocalPaymentService) => s.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'w1', expiresAt } })
        .applyWithdrawal({ mchId, uid: 'u', amount: '10', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH });
      const { first, copy, during } = await copyDuring(service, via, apply, () => service.adjustBalance({ mchId, uid: 'u', amount: '100', reason: 'top-up' }));
      await refused(first, 'conflict', 'insufficient balance');
      await during;
      await refused(copy, 'unauthorized', 'nonce has already been used');
      expect(counts(ledger).withdrawals).toBe(0);
      expect(await service.balance('u', { mchId })).toMatchObject({ available: '105', held: '0' });
    });

  it.each([['this process', false], ['another process', true]] as const)(
    'a refund refused as the order is unpaid is not carried out by a copy (in %s) that comes with the payment', async (_, elsewhere) => {
      const { service } = h();
      const { mchId } = await addShopMerchant(service);
      const o = await order(service, { mchId, oid: 'r', uid: 'u', amount: '10' });
      const via = elsewhere ? otherProcess() : service;
      const refund = (s: LocalPaymentService) => s.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'r1', expiresAt } }).refund({ mchId, oid: 'r', amount: '4' });
      const { first, copy, during } = await copyDuring(service, via, refund, () => service.markPaid({ id: o.id, txHash: evmTx(77) }));
      await refused(first, 'conflict', 'order status is not Paid');
      await during;
      await refused(copy, 'unauthorized', 'nonce has already been used');
      expect((await service.getOrder(o.id)).refundedAmount).toBe('0');
    });

  it('a copy that arrives while the first is still being carried out is refused at once, and the first goes through', async () => {
    const { service, ledger } = h();
    const { mchId } = await addShopMerchant(service);
    const signed = () => service.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'c1', expiresAt } });
    const first = signed().createOrder({ mchId, oid: 'c', uid: 'u', amount: '1' });
    const copy = signed().createOrder({ mchId, oid: 'c', uid: 'u', amount: '1' });
    // Said to be a copy of a request being carried out: nothing has used the nonce yet.
    await refused(copy, 'unauthorized', NONCE_IN_FLIGHT);
    // Refused before any of its work: the first is not even written yet.
    expect(counts(ledger).orders).toBe(0);
    expect((await first).oid).toBe('c');
    expect(counts(ledger).orders).toBe(1);
  });

  // Code review: only an e2e test noticed a copy's key left in flight. A request that could not be
  // carried out (the chain's node down: 503) leaves its nonce unspent and no longer in flight, so
  // the same body sent again is judged again, not refused as a replay.
  it('a request the node could not answer (unavailable) leaves its nonce unspent and not in flight: the same body again is judged again', async () => {
    const { service, ledger, clock } = h();
    const { mchId } = await addShopMerchant(service);
    await service.adjustBalance({ mchId, uid: 'u', amount: '+5', reason: 'start' });
    const token = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const down = new LocalPaymentService(ledger, {
      now: () => clock.now, caller: { actor: 'tester' },
      registryConfig: {
        chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: `http://127.0.0.1:${await closedPort()}`, confirmations: 1 }],
        tokens: [{ chainId: 31337, address: token, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
      },
    });
    const w = await down.applyWithdrawal({ mchId, uid: 'u', amount: '1', to: TO, chainId: '31337', chainType: 'EVM', token });
    const signed = down.as({ actor: `api:${mchId}`, nonce: { merchantId: mchId, value: 'v1', expiresAt } });
    for (let i = 0; i < 2; i++) await refused(signed.confirmWithdrawal({ mchId, logId: w.id, txHash: evmTx(9), blockNumber: 1 }), 'unavailable', /cannot be read/);
    expect(counts(ledger).nonces).toBe(0);
  });
});
