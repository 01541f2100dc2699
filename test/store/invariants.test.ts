import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalPaymentService } from '../../src/store/local-service.js';
import { USDT, addShopMerchant, evmTx, order, paidOrder, openHarness, type Harness } from '../helpers/service.js';

/**
 * The ledger check against a file changed behind the service's back, as a bad migration, a manual
 * fix or a disk problem would. Every other test file asserts `check()` is empty after each test.
 */
interface World {
  mchId: string;
  paid: string;
  refunded: string;
  unpaid: string;
  pendingWd: string;
  confirmedWd: string;
}

async function busyLedger(service: LocalPaymentService): Promise<World> {
  const { mchId } = await addShopMerchant(service);
  const paid = (await paidOrder(service, { uid: 'alice', amount: '20' }, evmTx(1))).id;
  const refunded = (await paidOrder(service, { uid: 'bob', amount: '5' }, evmTx(2))).id;
  await service.refund({ id: refunded, amount: '2' });
  const unpaid = (await order(service, { uid: 'carol', amount: '7' })).id;
  const to = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
  const pendingWd = (await service.applyWithdrawal({ uid: 'alice', amount: '4', to, chainId: 1, chainType: 'EVM', token: USDT.ETH })).id;
  const confirmedWd = (await service.applyWithdrawal({ uid: 'alice', amount: '3', to, chainId: 1, chainType: 'EVM', token: USDT.ETH })).id;
  await service.confirmWithdrawal({ logId: confirmedWd, txHash: evmTx(3), blockNumber: 10 });
  await service.adjustBalance({ uid: 'dave', amount: '1', reason: 'goodwill' });
  return { mchId, paid, refunded, unpaid, pendingWd, confirmedWd };
}

const TAMPERING: [string, (w: World) => string, (w: World) => string[]][] = [
  [
    'a user balance raised without a transfer',
    () => "update accounts set posted = posted + 1 where kind = 'user' and uid = 'dave'",
    (w) => [`asset USDT of merchant ${w.mchId} sums to 1, not 0`, '(user dave) records 1000001 but its transfers give 1000000'],
  ],
  [
    'a user balance moved below zero against a system account',
    () => "update accounts set posted = posted - 5000000 where kind = 'user' and uid = 'dave'; update accounts set posted = posted + 5000000 where kind = 'adjustments'",
    (w) => [`user dave (${w.mchId}) has a negative available balance: -4000000`, '(user dave) records -4000000 but its transfers give 1000000', '(adjustments ) records 4000000 but its transfers give -1000000'],
  ],
  [
    'a refund row deleted',
    (w) => `delete from refunds where order_id = '${w.refunded}'`,
    (w) => [`order ${w.refunded} records refunded 2000000 but its refunds total 0`],
  ],
  [
    'a refund row raised above the payment',
    (w) => `update refunds set amount = 6000000 where order_id = '${w.refunded}'`,
    (w) => [`order ${w.refunded} records refunded 2000000 but its refunds total 6000000`, `order ${w.refunded} refunded 6000000, more than the 5000000 it was paid`],
  ],
  [
    'a payment row deleted',
    (w) => `delete from payments where order_id = '${w.paid}'`,
    (w) => [`order ${w.paid} records paid 20000000 but its payments total 0`],
  ],
  [
    'an order status set against its amounts',
    (w) => `update orders set status = 'REFUNDED' where id = '${w.paid}'`,
    (w) => [`order ${w.paid} is REFUNDED but its amounts say PAID`],
  ],
  [
    'an unpaid order set to PAID',
    (w) => `update orders set status = 'PAID' where id = '${w.unpaid}'`,
    (w) => [`order ${w.unpaid} is PAID but its amounts say PENDING_PAY`],
  ],
  [
    'a withdrawal confirmed without its transfer',
    (w) => `update withdrawals set status = 'CONFIRMED' where id = '${w.pendingWd}'`,
    (w) => [`withdrawal ${w.pendingWd} is CONFIRMED but its transfer is pending`, `user alice (${w.mchId}) holds 4000000 but pending withdrawals total 0`],
  ],
  [
    'a withdrawal rejected without its transfer',
    (w) => `update withdrawals set status = 'REJECTED' where id = '${w.pendingWd}'`,
    (w) => [`withdrawal ${w.pendingWd} is REJECTED but its transfer is pending`],
  ],
  [
    'a confirmed withdrawal set back to pending',
    (w) => `update withdrawals set status = 'PENDING' where id = '${w.confirmedWd}'`,
    (w) => [`withdrawal ${w.confirmedWd} is PENDING but its transfer is posted`, `user alice (${w.mchId}) holds 4000000 but pending withdrawals total 7000000`],
  ],
  [
    'a hold released without its transfer',
    () => "update accounts set pending_debits = 0 where kind = 'user' and uid = 'alice'",
    (w) => [`user alice (${w.mchId}) holds 0 but pending withdrawals total 4000000`, '(user alice) holds 0 but its pending transfers give 4000000'],
  ],
  [
    // statusFor depends on history once an order has refunds; the check replays it, so a partly
    // refunded order (PAID) set to REFUNDED is caught, not taken for a refunded one paid dust later.
    'a partly refunded order set to REFUNDED',
    (w) => `update orders set status = 'REFUNDED' where id = '${w.refunded}'`,
    (w) => [`order ${w.refunded} is REFUNDED but its amounts say PAID`],
  ],
  [
    "a payout's transaction key removed",
    () => "delete from tx_keys where scope <> ''",
    (w) => [`transaction ${evmTx(3).slice(2)} is recorded (withdrawal ${w.confirmedWd}) but its key is missing from tx_keys for merchant ${w.mchId}`],
  ],
  [
    "a payment's transaction key removed",
    () => `delete from tx_keys where key = '${evmTx(1).slice(2)}'`,
    (w) => [`transaction ${evmTx(1).slice(2)} is recorded (payment to order ${w.paid}) but its key is missing from tx_keys`],
  ],
  [
    'a transfer recorded as sent back that a payment by hand credits',
    (w) => `insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, order_id, token, to_address, raw_amount, amount, status, seen_at)
      values ('1', '${evmTx(1)}', 0, 5, '0x${'b'.repeat(64)}', '${w.paid}', '0xdac17f958d2ee523a2206206994597c13d831ec7', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', '20000000', 20000000, 'returned', 0)`,
    (w) => [`the payment in tx ${evmTx(1)} to order ${w.paid} is recorded as sent back, and credited by hand`],
  ],
  [
    "a payment and a refund that name another merchant than their order's",
    (w) => `update payments set merchant_id = 'M999999' where order_id = '${w.paid}'; update refunds set merchant_id = null`,
    (w) => [`of order ${w.paid} does not name the order's merchant`, `of order ${w.refunded} does not name the order's merchant`],
  ],
  [
    'a transfer amount changed',
    () => "update transfers set amount = amount + 1 where kind = 'adjustment'",
    () => ['(user dave) records 1000000 but its transfers give 1000001', '(adjustments ) records -1000000 but its transfers give -1000001'],
  ],
];

describe('ledger check', () => {
  let h: Harness;
  beforeEach(() => {
    h = openHarness();
  });
  afterEach(() => h.close());

  it('finds nothing wrong on an honest ledger that saw every kind of operation', async () => {
    await busyLedger(h.service);
    expect(await h.service.check()).toEqual([]);
  });

  it.each(TAMPERING)('reports %s', async (_, sql, expected) => {
    const world = await busyLedger(h.service);
    expect(await h.service.check()).toEqual([]);
    h.ledger.sqlite.exec(sql(world));
    const problems = await h.service.check();
    expect(problems).toEqual(expect.arrayContaining(expected(world).map((m) => expect.stringContaining(m))));
  });
});
