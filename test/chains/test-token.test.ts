import { Contract, Interface, type Log } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil } from '../../src/chains/sandbox/anvil.js';
import { deployTestToken, testTokenArtifact } from '../../src/chains/sandbox/test-token.js';
import type { TestTokenArtifact } from '../../src/chains/sandbox/test-token-artifact.js';
import { startTestChain, type TestChain } from '../helpers/anvil.js';

let chain: TestChain;
let artifact: TestTokenArtifact;

beforeAll(async () => {
  [chain, artifact] = await Promise.all([startTestChain({ chainId: 31337, accounts: 4 }), testTokenArtifact()]);
});
afterAll(async () => {
  await chain?.stop();
});

function transfers(logs: readonly Log[], token: string): { from: string; to: string; value: bigint }[] {
  const iface = new Interface(artifact.abi as never);
  return logs
    .filter((l) => l.address.toLowerCase() === token.toLowerCase())
    .map((l) => iface.parseLog(l))
    .filter((p) => p?.name === 'Transfer')
    .map((p) => ({ from: p!.args[0] as string, to: p!.args[1] as string, value: p!.args[2] as bigint }));
}

describe('the anvil harness', () => {
  it('answers on 127.0.0.1 with the chain id asked for and funded accounts', async () => {
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await chain.provider.getNetwork()).chainId).toBe(31337n);
    expect(chain.signers).toHaveLength(4);
    expect(await chain.provider.getBalance(chain.signers[3]!.address)).toBe(10_000n * 10n ** 18n);
  });

  it('starts a second node with its own chain id and port, and stop() ends it', async () => {
    const other = await startTestChain({ chainId: 1337, accounts: 1 });
    expect(other.rpcUrl).not.toBe(chain.rpcUrl);
    expect(await other.provider.send('eth_chainId', [])).toBe('0x539');
    await other.stop();
    expect(other.node.exited).toBe(true);
    await expect(fetch(other.rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('says why when the binary is missing or is not anvil', async () => {
    await expect(startAnvil({ binary: '/nonexistent/anvil' })).rejects.toThrow('anvil binary /nonexistent/anvil (from the caller) does not exist');
    await expect(startAnvil({ binary: '/bin/false' })).rejects.toThrow(/^anvil exited before listening \(code 1\)/);
  });

  it('mines blocks on demand and on a block time', async () => {
    const before = await chain.provider.getBlockNumber();
    await chain.mine(5);
    expect(await chain.provider.getBlockNumber()).toBe(before + 5);

    const timed = await startTestChain({ accounts: 1, blockTime: 1 });
    try {
      // Two blocks with no one asking for them: at least one whole block time after the first
      // reading. Polled (up to 10 s) rather than read once after a fixed sleep, which left half
      // a second for anvil's timer on a loaded machine.
      const start = await timed.provider.getBlockNumber();
      const t0 = Date.now();
      let now = start;
      while (now < start + 2 && Date.now() - t0 < 10_000) {
        await new Promise((r) => setTimeout(r, 100));
        now = await timed.provider.getBlockNumber();
      }
      expect(now).toBeGreaterThanOrEqual(start + 2);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    } finally {
      await timed.stop();
    }
  });
});

describe('the test token', () => {
  it.each([
    { decimals: 6, symbol: 'USDT' },
    { decimals: 18, symbol: 'USDT18' },
  ])('deploys with $decimals decimals, mints and transfers', async ({ decimals, symbol }) => {
    const [deployer, payer, merchant] = chain.signers;
    const address = await deployTestToken(deployer!, { name: `Test ${symbol}`, symbol, decimals }, artifact);
    const token = new Contract(address, artifact.abi as never, deployer);
    expect(await token.getFunction('decimals')()).toBe(BigInt(decimals));
    expect(await token.getFunction('symbol')()).toBe(symbol);
    expect(await token.getFunction('name')()).toBe(`Test ${symbol}`);

    const unit = 10n ** BigInt(decimals);
    await (await token.getFunction('mint')(payer!.address, 100n * unit)).wait();
    const tx = await (token.connect(payer!) as Contract).getFunction('transfer')(merchant!.address, 12n * unit + 345n);
    const receipt = await tx.wait();
    expect(receipt.status).toBe(1);
    expect(transfers(receipt.logs, address)).toEqual([{ from: payer!.address, to: merchant!.address, value: 12n * unit + 345n }]);
    expect(await token.getFunction('balanceOf')(merchant!.address)).toBe(12n * unit + 345n);
    expect(await token.getFunction('balanceOf')(payer!.address)).toBe(88n * unit - 345n);
    expect(await token.getFunction('totalSupply')()).toBe(100n * unit);
  });

  it('makes two payments in one transaction with transferBatch: two Transfer logs, one hash', async () => {
    const [deployer, payer, a, b] = chain.signers;
    const address = await deployTestToken(deployer!, { name: 'Batch', symbol: 'USDT', decimals: 6 }, artifact);
    const token = new Contract(address, artifact.abi as never, payer);
    await (await (token.connect(deployer!) as Contract).getFunction('mint')(payer!.address, 1_000_000n)).wait();
    const receipt = await (await token.getFunction('transferBatch')([a!.address, b!.address], [250_000n, 300_000n])).wait();
    const logs = transfers(receipt.logs, address);
    expect(logs).toEqual([
      { from: payer!.address, to: a!.address, value: 250_000n },
      { from: payer!.address, to: b!.address, value: 300_000n },
    ]);
    expect(new Set(receipt.logs.map((l: Log) => l.transactionHash))).toEqual(new Set([receipt.hash]));
    expect(await token.getFunction('balanceOf')(payer!.address)).toBe(450_000n);
  });

  it('refuses a transfer above the balance and changes nothing', async () => {
    const [deployer, payer, merchant] = chain.signers;
    const address = await deployTestToken(deployer!, { name: 'Refuse', symbol: 'USDT', decimals: 6 }, artifact);
    const token = new Contract(address, artifact.abi as never, payer);
    await (await (token.connect(deployer!) as Contract).getFunction('mint')(payer!.address, 10n)).wait();
    await expect(token.getFunction('transfer')(merchant!.address, 11n)).rejects.toThrow(/insufficient balance/);
    await expect(token.getFunction('transferBatch')([merchant!.address], [1n, 2n])).rejects.toThrow(/length mismatch/);
    expect(await token.getFunction('balanceOf')(payer!.address)).toBe(10n);
    expect(await token.getFunction('balanceOf')(merchant!.address)).toBe(0n);
  });
});
