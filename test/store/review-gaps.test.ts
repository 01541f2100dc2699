import { describe, expect, it } from 'vitest';
import { TEST_WALLET, USDT, addOtherMerchant, counts, evmTx, refused, useHarness } from '../helpers/service.js';

const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('an xpub serves one merchant only, in either column', () => {
  const h = useHarness();

  it.each([
    ['EVM xpub reused as the TRON xpub', { evmXpub: TEST_WALLET.evmXpub }, { tronXpub: TEST_WALLET.evmXpub }],
    ['TRON xpub reused as the EVM xpub', { tronXpub: TEST_WALLET.tronXpub }, { evmXpub: TEST_WALLET.tronXpub }],
  ])('%s is refused', async (_name, first, second) => {
    const { service, ledger } = h();
    const a = await service.addMerchant({ name: 'A', ...first });
    const before = counts(ledger);
    await refused(service.addMerchant({ name: 'B', ...second }), 'conflict', `already the wallet of merchant ${a.merchant.mchId}`);
    expect(counts(ledger)).toEqual(before);
  });
});

describe("a payout hash already used by another merchant's withdrawal", () => {
  const h = useHarness();

  it('is refused in the same words for every merchant, naming no withdrawal', async () => {
    const { service } = h();
    const a = await addOtherMerchant(service, 'A');
    const b = await addOtherMerchant(service, 'B');
    const apply = async (mchId: string) => {
      await service.adjustBalance({ mchId, uid: 'u1', amount: '+10', reason: 'seed' });
      return service.applyWithdrawal({ mchId, uid: 'u1', amount: '1', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH });
    };
    const wa = await apply(a.mchId);
    const wa2 = await apply(a.mchId);
    const wb = await apply(b.mchId);
    await service.confirmWithdrawal({ mchId: a.mchId, logId: wa.id, txHash: evmTx(7), blockNumber: 1 });

    const other = await refused(service.confirmWithdrawal({ mchId: b.mchId, logId: wb.id, txHash: evmTx(7), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
    const own = await refused(service.confirmWithdrawal({ mchId: a.mchId, logId: wa2.id, txHash: evmTx(7), blockNumber: 1 }), 'conflict', 'is already recorded in this ledger');
    // Identical answers: the words cannot tell merchant B that merchant A used the hash.
    expect(other.message).toBe(own.message);
    expect(other.message).not.toContain(wa.id);
  });
});
