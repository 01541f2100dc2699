import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAD_SIGNATURE } from '../../src/server/app.js';
import { expectOk, expectRefused, startServer, type Merchant, type TestServer } from './helpers.js';

/**
 * POST /api/v1/chains (decisions §12 extension): the chains and tokens the service knows, for
 * `withdraw apply` on a remote to know a chain only the service knows. Never a chain's rpcUrl,
 * which holds a node provider's key in most set-ups.
 */
const BASE_USDT = '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2';
const NODE_KEY = 'k3y-0f-the-n0de-pr0vider';

describe('the chains the service knows', () => {
  let s: TestServer;
  let m: Merchant;
  beforeAll(async () => {
    s = await startServer({
      registryConfig: {
        chains: [
          { chainId: 8453, chainType: 'EVM', name: 'Base', rpcUrl: `https://base.example/v2/${NODE_KEY}`, confirmations: 10 },
          { chainId: 1, rpcUrl: `https://eth.example/?apikey=${NODE_KEY}` },
        ],
        tokens: [{ chainId: 8453, address: BASE_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
      },
    });
    m = await s.addMerchant({ name: 'Shop' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('lists every chain with its type, name, confirmations and tokens, built in and configured, and no node URL', async () => {
    const r = await s.post('/api/v1/chains', s.signed(m, { op: 'chains' }));
    const chains = expectOk(r) as { chainId: string }[];
    expect(chains.map((c) => c.chainId)).toEqual(['1', '56', '137', '8453', '728126428']);
    expect(chains.find((c) => c.chainId === '8453')).toEqual({
      chainId: '8453', chainType: 'EVM', name: 'Base', confirmations: 10, development: false,
      tokens: [{ address: BASE_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    expect(chains.find((c) => c.chainId === '728126428')).toMatchObject({ chainType: 'TRON', tokens: [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }] });
    expect(r.text).not.toContain(NODE_KEY);
    expect(r.text).not.toContain('rpcUrl');
  });

  it('is a signed read like the others: op named, nonce used up, a bad signature refused', async () => {
    const body = s.signed(m, { op: 'chains' });
    expectOk(await s.post('/api/v1/chains', body));
    expectRefused(await s.post('/api/v1/chains', body), 401, 'nonce has already been used');
    expectRefused(await s.post('/api/v1/chains', s.signed(m, {})), 400, /op is required/);
    expectRefused(await s.post('/api/v1/chains', { ...s.signed(m, { op: 'chains' }), sign: 'ab'.repeat(32) }), 401, BAD_SIGNATURE);
    expectRefused(await s.post('/api/v1/chains', s.signed(m, { op: 'chains', chainId: 1 })), 400, /unknown field: chainId/);
  });
});
