import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Contract } from 'ethers';
import { deployTestToken, testTokenArtifact, testTokenAt } from '../../../src/chains/sandbox/test-token.js';
import { openLedger } from '../../../src/store/db.js';
import { LocalPaymentService } from '../../../src/store/local-service.js';
import type { Order } from '../../../src/core/types.js';
import { startTestChain, type TestChain } from '../../helpers/anvil.js';

export interface PayChain {
  chain: TestChain;
  /** 6 decimals, in the registry. */
  usdt: Contract;
  /** 18 decimals, in the registry. */
  usdt18: Contract;
  /** 6 decimals, not in the registry. */
  stranger: Contract;
  stop(): Promise<void>;
}

/** A real anvil with three test tokens deployed and minted to the first account. */
export async function startPayChain(chainId = 31337, opts: { genesisTimestamp?: number } = {}): Promise<PayChain> {
  const [chain, artifact] = await Promise.all([startTestChain({ chainId, accounts: 3, ...opts }), testTokenArtifact()]);
  const payer = chain.signers[0]!;
  const deploy = async (symbol: string, decimals: number) => {
    const address = await deployTestToken(payer, { name: `Test ${symbol}`, symbol, decimals }, artifact);
    const c = testTokenAt(address, payer, artifact);
    await (await c.getFunction('mint')(payer.address, 10n ** 30n)).wait();
    return c;
  };
  const usdt = await deploy('USDT', 6);
  const usdt18 = await deploy('USDT18', 18);
  const stranger = await deploy('XXX', 6);
  return { chain, usdt, usdt18, stranger, stop: () => chain.stop() };
}

/** Sends `value` base units of `token` to `to` and waits until it is mined. */
export async function pay(token: Contract, to: string, value: bigint): Promise<string> {
  const tx = await token.getFunction('transfer')(to, value);
  const r = await tx.wait();
  return r!.hash as string;
}

export function writeChainsConfig(dir: string, config: unknown): string {
  const file = join(dir, `chains-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/**
 * A merchant with a fresh wallet and the orders asked for, made in the ledger file directly.
 * `now` is the clock they are made by: one in the past makes orders that have long expired.
 */
export async function ledgerWithOrders(db: string, amounts: string[], lifetime = '30m', now: () => number = Date.now): Promise<{ mchId: string; orders: Order[] }> {
  const ledger = openLedger(db);
  try {
    const service = new LocalPaymentService(ledger, { now, caller: { actor: 'test' } });
    const m = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0, orderLifetime: lifetime });
    const orders: Order[] = [];
    for (const [i, amount] of amounts.entries()) orders.push(await service.createOrder({ oid: `o-${i}-${Date.now()}`, uid: `user-${i}`, amount, mchId: m.merchant.mchId }));
    return { mchId: m.merchant.mchId, orders };
  } finally {
    ledger.close();
  }
}

/** Reads the ledger the way an operator would, without holding it open. */
export async function withService<T>(db: string, fn: (s: LocalPaymentService) => Promise<T>): Promise<T> {
  const ledger = openLedger(db);
  try {
    return await fn(new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' } }));
  } finally {
    ledger.close();
  }
}

export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
