import { describe, expect, it } from 'vitest';
import { SHOP_WALLET, USDT, addOtherMerchant, counts, evmTx, refused, useHarness } from '../helpers/service.js';

const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('an xpub serves one merchant only, in either column', () => {
  // A wallet of its own: the public test wallet across columns is refused before (its keys are public).
  const h = useHarness();

  it.each([
    ['EVM xpub reused as the TRON xpub', { evmXpub: SHOP_WALLET.evmXpub }, { tronXpub: SHOP_WALLET.evmXpub }],
    ['TRON xpub reused as the EVM xpub', { tronXpub: SHOP_WALLET.tronXpub }, { evmXpub: SHOP_WALLET.tronXpub }],
  ])('%s is refused', async (_name, first, second) => {
    const { service, ledger } = h();
    const a = await service.addMerchant({ name: 'A', ...first });
    const before = counts(ledger);
    await refused(service.addMerchant({ name: 'B', ...second }), 'conflict', `already the wallet of merchant ${a.merchant.mchId}`);
    expect(counts(ledger)).toEqual(before);
  });
});

describe("a transaction hash the ledger already records as a payment", () => {
  const h = useHarness();

  it('is refused as a payout in the same words for every merchant, naming nothing', async () => {
    const { service } = h();
    const a = await addOtherMerchant(service, 'A');
    const b = await addOtherMerchant(service, 'B');
    const apply = async (mchId: string) => {
      await service.adjustBalance({ mchId, uid: 'u1', amount: '+10', reason: 'seed' });
      return service.applyWithdrawal({ mchId, uid: 'u1', amount: '1', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH });
    };
    const wa = await apply(a.mchId);
    const wb = await apply(b.mchId);
    // A payment into merchant A's order: a fact the whole ledger holds the hash for.
    const o = await service.createOrder({ mchId: a.mchId, oid: 'paid', uid: 'u1', amount: '1' });
    await service.markPaid({ id: o.id, txHash: evmTx(7) });

    const other = await refused(service.confirmWithdrawal({ mchId: b.mchId, logId: wb.id, txHash: evmTx(7), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
    const own = await refused(service.confirmWithdrawal({ mchId: a.mchId, logId: wa.id, txHash: evmTx(7), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
    // Identical answers: the words cannot tell merchant B that merchant A used the hash.
    expect(other.message).toBe(own.message);
    expect(other.message).not.toContain(o.id);
  });
});

describe("a payout (here confirmed without verification: no rpcUrl) holds its transaction within its merchant", () => {
  const h = useHarness();
  const setUp = async () => {
    const { service } = h();
    const a = await addOtherMerchant(service, 'A');
    const b = await addOtherMerchant(service, 'Squatter');
    const apply = async (mchId: string, amount = '1') => {
      await service.adjustBalance({ mchId, uid: 'u1', amount: `+${amount}`, reason: 'seed' });
      return service.applyWithdrawal({ mchId, uid: 'u1', amount, to: TO, chainId: 56, chainType: 'EVM', token: USDT.BSC });
    };
    return { service, a, b, apply };
  };

  it("holds its hash within its merchant only: it cannot keep another merchant's payment from being credited (an outside review did, with 0.000001)", async () => {
    const { service, a, b, apply } = await setUp();
    const o = await service.createOrder({ mchId: a.mchId, oid: 'victim', uid: 'payer', amount: '10' });
    // The squatter copies the hash of A's payment from the mempool and confirms a dust payout with it.
    const squat = await apply(b.mchId, '0.000001');
    await service.confirmWithdrawal({ mchId: b.mchId, logId: squat.id, txHash: evmTx(9), blockNumber: 1 });
    // A's payment is recorded and credited all the same.
    await service.markPaid({ id: o.id, txHash: evmTx(9) });
    expect(await service.getOrderStatus(o.id)).toBe('PAID');
    expect(await service.balance('payer', { mchId: a.mchId })).toMatchObject({ available: '10' });
    // The ledger's operator reads that the payout's transaction is recorded elsewhere; the squatter
    // does not (its log would tell it when the victim was paid).
    expect((await service.log({ withdrawalId: squat.id })).map((e) => e.action)).toContain('withdrawal.transaction_recorded_elsewhere');
    const log = await service.log({ mchId: b.mchId });
    expect(log.map((e) => e.action)).not.toContain('withdrawal.transaction_recorded_elsewhere');
    expect(JSON.stringify(log)).not.toContain(o.id);
  });

  it("cannot keep another merchant from confirming its own payout with its real transaction", async () => {
    const { service, a, b, apply } = await setUp();
    const squat = await apply(b.mchId, '0.000001');
    const mine = await apply(a.mchId, '5');
    await service.confirmWithdrawal({ mchId: b.mchId, logId: squat.id, txHash: evmTx(11), blockNumber: 1 });
    expect(await service.confirmWithdrawal({ mchId: a.mchId, logId: mine.id, txHash: evmTx(11), blockNumber: 1 })).toMatchObject({ status: 'CONFIRMED' });
  });

  it('still refuses a second use within its own merchant, and a hash the ledger knows for a fact', async () => {
    const { service, a, b, apply } = await setUp();
    const first = await apply(b.mchId);
    const second = await apply(b.mchId);
    await service.confirmWithdrawal({ mchId: b.mchId, logId: first.id, txHash: evmTx(12), blockNumber: 1 });
    await refused(service.confirmWithdrawal({ mchId: b.mchId, logId: second.id, txHash: evmTx(12), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
    // Its own order's payment with that hash too: one merchant, one use.
    const o = await service.createOrder({ mchId: b.mchId, oid: 'own', uid: 'u2', amount: '1' });
    await refused(service.markPaid({ id: o.id, txHash: evmTx(12) }), 'conflict', 'is already recorded in this ledger');
    // A payment of merchant A's first: then nobody's payout may name it.
    const p = await service.createOrder({ mchId: a.mchId, oid: 'fact', uid: 'u3', amount: '1' });
    await service.markPaid({ id: p.id, txHash: evmTx(13) });
    await refused(service.confirmWithdrawal({ mchId: b.mchId, logId: second.id, txHash: evmTx(13), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
  });
});
