import { describe, expect, it } from 'vitest';
import { ordersForAddresses } from '../../src/store/chain-state.js';
import { addTestMerchant, order, useHarness } from '../helpers/service.js';

describe('ordersForAddresses: every recipient of a range in one statement', () => {
  const h = useHarness();

  it('finds the orders of EVM addresses in any case and TRON addresses as written; strangers, duplicates and the other chain type find nothing more', async () => {
    const { service, ledger } = h();
    await addTestMerchant(service);
    const a = await order(service, { uid: 'u', amount: '1' });
    const b = await order(service, { uid: 'u', amount: '2' });
    const evmA = a.addresses.EVM!;
    const evmB = b.addresses.EVM!;
    const stranger = '0x2222222222222222222222222222222222222222';
    const evm = ordersForAddresses(ledger.sqlite, 'EVM', [evmA.toLowerCase(), evmB.toUpperCase().replace('0X', '0x'), stranger, evmA.toLowerCase(), b.addresses.TRON!]);
    expect([...evm.keys()].sort()).toEqual([evmA.toLowerCase(), evmB.toLowerCase()].sort());
    expect(evm.get(evmA.toLowerCase())).toEqual({ orderId: a.id, asset: 'USDT', address: evmA });
    expect(evm.get(evmB.toLowerCase())).toEqual({ orderId: b.id, asset: 'USDT', address: evmB });

    const tron = ordersForAddresses(ledger.sqlite, 'TRON', [b.addresses.TRON!, b.addresses.TRON!.toLowerCase(), evmA]);
    expect([...tron.entries()]).toEqual([[b.addresses.TRON!, { orderId: b.id, asset: 'USDT', address: b.addresses.TRON! }]]);
    expect(ordersForAddresses(ledger.sqlite, 'EVM', []).size).toBe(0);
  });
});
