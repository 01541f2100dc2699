import { describe, expect, it } from 'vitest';
import { ASSETS, createRegistry, maxDecimals, parseChainId, type RegistryConfig } from '../../src/chains/registry.js';
import { expectInvalid } from '../helpers/errors.js';

const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const USDT_BSC = '0x55d398326f99059fF775485246999027B3197955';
const USDT_POLYGON = '0xc2132D05D31c914a87C6611C10748AEb04B58e8F';
const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

describe('chain ids', () => {
  it('reads numbers and decimal strings alike', () => {
    expect(parseChainId(56)).toBe('56');
    expect(parseChainId('56')).toBe('56');
    expect(parseChainId('728126428')).toBe('728126428');
  });

  it.each(['056', '5.6', '-1', '', ' 56', '56 ', '1e3', '0x38', '0', 0, -1, 5.6, Number.NaN, 2 ** 53, '9007199254740993', null, undefined, {}])(
    'refuses %j',
    (v) => {
      expectInvalid(() => parseChainId(v), /^chainId must be a positive decimal integer such as 56, got /);
    },
  );
});

describe('built-in registry', () => {
  const r = createRegistry();

  it('knows the four chains with their default confirmations', () => {
    expect(r.chains()).toEqual([
      { chainId: '1', chainType: 'EVM', name: 'Ethereum', confirmations: 12 },
      { chainId: '56', chainType: 'EVM', name: 'BNB Smart Chain', confirmations: 15 },
      { chainId: '137', chainType: 'EVM', name: 'Polygon', confirmations: 128 },
      { chainId: '728126428', chainType: 'TRON', name: 'TRON', confirmations: 19 },
    ]);
  });

  it('treats "56" and 56 as the same chain', () => {
    expect(r.chain('56')).toBe(r.chain(56));
    expect(r.chain(56).name).toBe('BNB Smart Chain');
  });

  it('refuses an unknown chain, listing the known ones', () => {
    expectInvalid(() => r.chain(999), /^chainId 999 is not a chain this service knows \(known: 1, 56, 137, 728126428\)$/);
    expectInvalid(() => r.chain('056'), /positive decimal integer/);
  });

  it('knows USDT on each chain with its decimals', () => {
    expect(r.token(1, USDT_ETH)).toMatchObject({ chainId: '1', symbol: 'USDT', asset: 'USDT', decimals: 6 });
    expect(r.token('56', USDT_BSC).decimals).toBe(18);
    expect(r.token(137, USDT_POLYGON).decimals).toBe(6);
    expect(r.token(728126428, USDT_TRON)).toMatchObject({ chainId: '728126428', decimals: 6 });
    expect(r.tokens()).toHaveLength(4);
  });

  it('looks EVM tokens up case-insensitively and answers the EIP-55 form', () => {
    expect(r.token(1, USDT_ETH.toLowerCase()).address).toBe(USDT_ETH);
    expect(r.token(1, '0x' + USDT_ETH.slice(2).toUpperCase()).address).toBe(USDT_ETH);
  });

  it('looks TRON tokens up exactly', () => {
    expectInvalid(() => r.token(728126428, USDT_TRON.replace('NHq', 'nHq')), /is not a token this service knows on chain 728126428 \(TRON\)/);
  });

  it('refuses a token on the wrong chain, naming the token and the chain', () => {
    expectInvalid(
      () => r.token(56, USDT_ETH),
      new RegExp(`^token "${USDT_ETH}" is not a token this service knows on chain 56 \\(BNB Smart Chain\\); known: USDT ${USDT_BSC}$`),
    );
    expectInvalid(() => r.token(56, 42), /^token 42 is not a token/);
    expectInvalid(() => r.token(999, USDT_ETH), /chainId 999 is not a chain/);
  });

  it('caps amount decimals at the smaller of asset and token precision', () => {
    expect(ASSETS.USDT!.decimals).toBe(6);
    expect(maxDecimals(r.token(56, USDT_BSC))).toBe(6);
    expect(maxDecimals(r.token(1, USDT_ETH))).toBe(6);
  });

  it('answers objects callers cannot alter', () => {
    expect(() => {
      (r.chain(1) as { confirmations: number }).confirmations = 1;
    }).toThrow(TypeError);
    expect(r.chain(1).confirmations).toBe(12);
  });
});

describe('registry config', () => {
  const ARB_USDT = '0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9';
  const config: RegistryConfig = {
    chains: [
      { chainId: 42161, chainType: 'EVM', name: 'Arbitrum One', rpcUrl: 'https://arb1.example/rpc' },
      { chainId: '1', rpcUrl: 'https://eth.example/rpc', confirmations: 20 },
    ],
    tokens: [
      { chainId: '42161', address: ARB_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 },
      { chainId: 1, address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', asset: 'USDT', decimals: 2 },
    ],
  };

  it('adds chains and tokens and overrides a built-in chain', () => {
    const r = createRegistry(config);
    expect(r.chain('42161')).toEqual({ chainId: '42161', chainType: 'EVM', name: 'Arbitrum One', rpcUrl: 'https://arb1.example/rpc', confirmations: 12 });
    expect(r.chain(1)).toEqual({ chainId: '1', chainType: 'EVM', name: 'Ethereum', rpcUrl: 'https://eth.example/rpc', confirmations: 20 });
    const arb = r.token(42161, ARB_USDT.toUpperCase().replace('0X', '0x'));
    expect(arb.address).toBe('0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9');
    expect(maxDecimals(r.token(1, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'))).toBe(2);
    expect(r.chains().map((c) => c.chainId)).toEqual(['1', '56', '137', '42161', '728126428']);
    expectInvalid(() => r.chain(999), /known: 1, 56, 137, 42161, 728126428\)/);
  });

  it('leaves other registries at the built-in values', () => {
    createRegistry(config);
    expect(createRegistry().chain(1)).toEqual({ chainId: '1', chainType: 'EVM', name: 'Ethereum', confirmations: 12 });
  });

  it('adds a TRON chain with TRON addresses', () => {
    const nile = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
    const r = createRegistry({
      chains: [{ chainId: 3448148188, chainType: 'TRON', name: 'TRON Nile' }],
      tokens: [{ chainId: 3448148188, address: nile, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    expect(r.chain(3448148188).confirmations).toBe(19);
    expect(r.token('3448148188', nile).address).toBe(nile);
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', [], /^registry config \(root\): /],
    ['unknown top-level key', { chain: [] }, /^registry config \(root\): Unrecognized key: "chain"/],
    ['unknown chain key', { chains: [{ chainId: 1, confirmation: 3 }] }, /^registry config chains\[0\]: Unrecognized key: "confirmation"/],
    ['bad chainType', { chains: [{ chainId: 10, chainType: 'SOL', name: 'x' }] }, /^registry config chains\[0\]\.chainType: /],
    ['bad chainId', { chains: [{ chainId: '010', chainType: 'EVM', name: 'Optimism' }] }, /^registry config chains\[0\]: chainId must be a positive decimal integer/],
    ['non-http rpcUrl', { chains: [{ chainId: 1, rpcUrl: 'ftp://eth.example' }] }, /^registry config chains\[0\]\.rpcUrl: must be an http\(s\) URL/],
    ['zero confirmations', { chains: [{ chainId: 1, confirmations: 0 }] }, /^registry config chains\[0\]\.confirmations: /],
    ['chain listed twice', { chains: [{ chainId: 1 }, { chainId: '1' }] }, /^registry config chains\[1\]: chain 1 is listed twice/],
    ['new chain without name', { chains: [{ chainId: 10, chainType: 'EVM' }] }, /^registry config chains\[0\]: a new chain needs chainType \("EVM" or "TRON"\) and name/],
    ['built-in chain retyped', { chains: [{ chainId: 56, chainType: 'TRON' }] }, /^registry config chains\[0\]: chain 56 is built in as EVM BNB Smart Chain; only its rpcUrl and confirmations can be overridden/],
    ['token on unknown chain', { tokens: [{ chainId: 10, address: USDT_ETH, symbol: 'USDT', asset: 'USDT', decimals: 6 }] }, /^registry config tokens\[0\]: chain 10 is neither built in nor listed under chains/],
    ['token with unknown asset', { tokens: [{ chainId: 1, address: ARB_USDT, symbol: 'EURT', asset: 'EUR', decimals: 6 }] }, /^registry config tokens\[0\]: asset "EUR" is not a ledger asset \(known: USDT\)/],
    ['token with a bad checksum', { tokens: [{ chainId: 1, address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbB9', symbol: 'X', asset: 'USDT', decimals: 6 }] }, /^registry config tokens\[0\]\.address is not a valid EVM address: mixed-case checksum/],
    ['EVM address on TRON', { tokens: [{ chainId: 728126428, address: USDT_ETH, symbol: 'X', asset: 'USDT', decimals: 6 }] }, /^registry config tokens\[0\]\.address is not a valid TRON address/],
    ['duplicate of a built-in token', { tokens: [{ chainId: 1, address: USDT_ETH.toLowerCase(), symbol: 'USDT', asset: 'USDT', decimals: 6 }] }, /^registry config tokens\[0\]: token 0xdAC17F958D2ee523a2206206994597C13D831ec7 on chain 1 is already known/],
    ['negative decimals', { tokens: [{ chainId: 1, address: ARB_USDT, symbol: 'X', asset: 'USDT', decimals: -1 }] }, /^registry config tokens\[0\]\.decimals: /],
    ['missing symbol', { tokens: [{ chainId: 1, address: ARB_USDT, asset: 'USDT', decimals: 6 }] }, /^registry config tokens\[0\]\.symbol: /],
  ])('refuses %s', (_label, bad, re) => {
    expectInvalid(() => createRegistry(bad as RegistryConfig), re);
  });
});
