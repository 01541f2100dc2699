import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryConfig } from '../../src/chains/registry.js';
import { devChainEntry, devTokenEntry } from '../../src/chains/sandbox/dev-chain.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { readLedgerRegistry, replaceChainTokens, saveChainEntry } from '../../src/store/registry-entries.js';
import { expectInvalid } from '../helpers/errors.js';
import { openHarness, TEST_EVM_1, TEST_WALLET, type Harness } from '../helpers/service.js';

const DEV_TOKEN = '0xb5E33423B80B5004edB41278BC8639513C70316c';
const SEPOLIA_USDT = '0x7169D38820dfd117C3FA1f22a697dBA58d90BA06';
const w = { now: 1_000, actor: 'tester' };

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

describe('the registry layers: built-ins, the config file, the ledger', () => {
  it('adds a development chain with its polling settings and token from the ledger layer', () => {
    const r = createRegistry(undefined, { chains: [devChainEntry('http://127.0.0.1:8545', 3)], tokens: [devTokenEntry(DEV_TOKEN)] });
    expect(r.chain(31337)).toEqual({
      chainId: '31337', chainType: 'EVM', name: 'Development (anvil)', rpcUrl: 'http://127.0.0.1:8545',
      confirmations: 1, pollIntervalMs: 1000, startBlock: 3, development: true,
    });
    expect(r.token(31337, DEV_TOKEN.toLowerCase())).toMatchObject({ symbol: 'USDT', asset: 'USDT', decimals: 6 });
    expect(r.chains().map((c) => c.chainId)).toEqual(['1', '56', '137', '31337', '728126428']);
  });

  it('reads the polling settings of the file and of the ledger the same way', () => {
    const r = createRegistry(
      { chains: [{ chainId: 11155111, chainType: 'EVM', name: 'Sepolia', rpcUrl: 'https://rpc.example' }, { chainId: 1, pollInterval: 12_000, startBlock: 19_000_000 }] },
      { chains: [{ chainId: 11155111, pollInterval: '3s', startBlock: 7 }] },
    );
    expect(r.chain(11155111)).toMatchObject({ pollIntervalMs: 3000, startBlock: 7 });
    expect(r.chain(11155111).development).toBeUndefined();
    expect(r.chain(1)).toMatchObject({ pollIntervalMs: 12_000, startBlock: 19_000_000, confirmations: 12 });
  });

  it('lets the ledger tune a chain of the file, and keeps one token both list', () => {
    const file: RegistryConfig = {
      chains: [{ chainId: 11155111, chainType: 'EVM', name: 'Sepolia', confirmations: 2 }],
      tokens: [{ chainId: 11155111, address: SEPOLIA_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    };
    const ledger: RegistryConfig = {
      chains: [{ chainId: 11155111, rpcUrl: 'http://127.0.0.1:9545', confirmations: 3 }],
      tokens: [{ chainId: 11155111, address: SEPOLIA_USDT.toLowerCase(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    };
    const r = createRegistry(file, ledger);
    expect(r.chain(11155111)).toEqual({ chainId: '11155111', chainType: 'EVM', name: 'Sepolia', confirmations: 3, rpcUrl: 'http://127.0.0.1:9545' });
    expect(r.tokens().filter((t) => t.chainId === '11155111')).toHaveLength(1);
  });

  it.each<[string, RegistryConfig | undefined, RegistryConfig, RegExp]>([
    ['a built-in chain marked as development', undefined, { chains: [{ chainId: 1, development: true }] }, /^ledger registry chains\[0\]: chain 1 is built in as EVM Ethereum; only its rpcUrl and confirmations can be overridden/],
    ['a chain of the file retyped', { chains: [{ chainId: 5, chainType: 'EVM', name: 'Goerli' }] }, { chains: [{ chainId: 5, chainType: 'TRON' }] }, /^ledger registry chains\[0\]: chain 5 is already known as EVM Goerli, not TRON/],
    ['a token the file gives other decimals', { chains: [{ chainId: 5, chainType: 'EVM', name: 'Goerli' }], tokens: [{ chainId: 5, address: SEPOLIA_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 }] }, { tokens: [{ chainId: 5, address: SEPOLIA_USDT, symbol: 'USDT', asset: 'USDT', decimals: 18 }] }, /^ledger registry tokens\[0\]: token 0x7169D38820dfd117C3FA1f22a697dBA58d90BA06 on chain 5 is already known/],
    ['a built-in token listed again', undefined, { tokens: [{ chainId: 1, address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', symbol: 'USDT', asset: 'USDT', decimals: 6 }] }, /^ledger registry tokens\[0\]: token .* on chain 1 is already known/],
    ['a poll interval under 50 ms', undefined, { chains: [{ chainId: 1, pollInterval: 10 }] }, /^ledger registry chains\[0\]\.pollInterval: /],
    ['a poll interval of 2 hours', undefined, { chains: [{ chainId: 1, pollInterval: '120m' }] }, /^ledger registry chains\[0\]\.pollInterval: must be between 50ms and 1h/],
    ['a negative start block', undefined, { chains: [{ chainId: 1, startBlock: -1 }] }, /^ledger registry chains\[0\]\.startBlock: /],
  ])('refuses %s, naming the ledger layer', (_label, file, ledger, re) => {
    expectInvalid(() => createRegistry(file, ledger), re);
  });
});

describe('registry entries stored in the ledger', () => {
  it('recorded through the service, are checked first, audited, and seen by its registry at once', async () => {
    h = openHarness();
    const { service } = h;
    expect((await service.registry()).chains().map((c) => c.chainId)).not.toContain('31337');
    await service.recordRegistryEntries({ chains: [devChainEntry('http://127.0.0.1:8545', 3)], tokens: [devTokenEntry(DEV_TOKEN)] });
    expect((await service.registry()).chain(31337)).toMatchObject({ rpcUrl: 'http://127.0.0.1:8545', development: true });
    expect((await service.registry()).token(31337, DEV_TOKEN)).toMatchObject({ symbol: 'USDT' });
    expect((await service.log({})).map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([['registry.chain.added', 'tester'], ['registry.tokens.replaced', 'tester']]),
    );
    // A second meaning for a built-in chain is refused before anything is stored.
    await expect(service.recordRegistryEntries({ chains: [{ chainId: 1, development: true }], tokens: [] })).rejects.toMatchObject({
      kind: 'invalid',
      message: 'ledger registry chains[0]: chain 1 is built in as EVM Ethereum; only its rpcUrl and confirmations can be overridden',
    });
    expect(readLedgerRegistry(h.ledger.db)?.chains?.map((c) => String(c.chainId))).toEqual(['31337']);
  });

  it('are empty on a new ledger and survive reopening the file', async () => {
    h = openHarness();
    expect(readLedgerRegistry(h.ledger.db)).toBeUndefined();
    saveChainEntry(h.ledger.db, devChainEntry('http://127.0.0.1:8545', 1), w);
    replaceChainTokens(h.ledger.db, '31337', [devTokenEntry(DEV_TOKEN)], w);
    const reopened = openLedger(h.file);
    try {
      expect(readLedgerRegistry(reopened.db)).toEqual({ chains: [{ ...devChainEntry('http://127.0.0.1:8545', 1), chainId: '31337' }], tokens: [{ ...devTokenEntry(DEV_TOKEN), chainId: '31337' }] });
      const service = new LocalPaymentService(reopened, { now: () => 1, caller: { actor: 't' } });
      const registry = await service.registry();
      expect(registry.chain(31337)).toMatchObject({ development: true, rpcUrl: 'http://127.0.0.1:8545' });
      expect(registry.token('31337', DEV_TOKEN).address).toBe(DEV_TOKEN);
    } finally {
      reopened.close();
    }
  });

  it('replace the chain in place and write the audit log only for a change', async () => {
    h = openHarness();
    saveChainEntry(h.ledger.db, devChainEntry('http://127.0.0.1:8545', 1), w);
    saveChainEntry(h.ledger.db, devChainEntry('http://127.0.0.1:8545', 1), w);
    saveChainEntry(h.ledger.db, devChainEntry('http://127.0.0.1:9999', 1), w);
    replaceChainTokens(h.ledger.db, '31337', [devTokenEntry(DEV_TOKEN)], w);
    replaceChainTokens(h.ledger.db, '31337', [devTokenEntry(DEV_TOKEN)], w);
    expect(readLedgerRegistry(h.ledger.db)!.chains).toEqual([expect.objectContaining({ rpcUrl: 'http://127.0.0.1:9999' })]);
    const log = await h.service.log({});
    expect(log.map((e) => `${e.action} ${e.subject}`).sort()).toEqual(['registry.chain.added chain:31337', 'registry.chain.updated chain:31337', 'registry.tokens.replaced chain:31337']);
  });

  it("make withdrawals on the development chain possible for the public test wallet's merchant, with the same checks as any chain", async () => {
    h = openHarness();
    saveChainEntry(h.ledger.db, devChainEntry('http://127.0.0.1:8545', 1), w);
    replaceChainTokens(h.ledger.db, '31337', [devTokenEntry(DEV_TOKEN)], w);
    await h.service.addMerchant({ name: 'Shop', evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });
    await h.service.adjustBalance({ uid: 'u1', amount: '5', reason: 'seed' });
    const wd = await h.service.applyWithdrawal({ uid: 'u1', amount: '2.5', to: TEST_EVM_1, chainId: 31337, chainType: 'EVM', token: DEV_TOKEN });
    expect(wd).toMatchObject({ status: 'PENDING', chainId: '31337', token: DEV_TOKEN, amount: '2.5' });
    await expect(h.service.applyWithdrawal({ uid: 'u1', amount: '0.0000001', to: TEST_EVM_1, chainId: 31337, chainType: 'EVM', token: DEV_TOKEN })).rejects.toThrow(/decimal/);
  });
});
