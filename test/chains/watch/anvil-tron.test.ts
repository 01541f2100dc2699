import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../../src/chains/address.js';
import { adapterFor } from '../../../src/chains/watch/adapter.js';
import { BIN, cliEnv, runCli } from '../../helpers/cli.js';
import { tempDir } from '../../server/helpers.js';
import { ledgerWithOrders, pay, startPayChain, until, withService, writeChainsConfig, type PayChain } from './anvil-support.js';

/**
 * A chain configured as TRON: an anvil answering with TRON mainnet's chain id, the token and the
 * order addresses in base58check in the registry and the ledger, read by `cryptopay watch` in
 * the foreground (no serve).
 */
const TRON = 728126428;
const tmp = tempDir();
let pc: PayChain;
const children: ChildProcess[] = [];

beforeAll(async () => {
  pc = await startPayChain(TRON);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await pc?.stop();
  tmp.cleanup();
});

describe('cryptopay watch on a TRON chain', () => {
  it('credits a payment to a base58 order address, with the hash in TRON form, and stops cleanly', async () => {
    const db = join(tmp.dir, 'tron.db');
    const token = tronAddressFromEvm(await pc.usdt.getAddress());
    const head = await pc.chain.provider.getBlockNumber();
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: TRON, rpcUrl: pc.chain.rpcUrl, confirmations: 2, pollInterval: '200ms', startBlock: head }],
      tokens: [{ chainId: TRON, address: token, symbol: 'USDTT', asset: 'USDT', decimals: 6 }],
    });
    const { orders } = await ledgerWithOrders(db, ['8']);
    const o = orders[0]!;
    expect(o.addresses.TRON).toMatch(/^T/);

    const child = spawn(process.execPath, [BIN, 'watch', '--chain', String(TRON), '--db', db], { env: cliEnv({ CRYPTOPAY_CHAINS: chains }) });
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    await until('watching', async () => /watching chain 728126428 \(TRON\)/.test(err));

    // On TRON's JSON-RPC an address is the base58check payload without its 0x41 prefix.
    await pay(pc.usdt, adapterFor('TRON').toNodeAddress(o.addresses.TRON!), 8_000_000n);
    await until('seen', async () => /1 of 2 confirmations/.test((await runCli(['order', 'show', o.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));
    await pc.chain.mine(1);
    const detail = await until('PAID', () => withService(db, async (s) => {
      const d = await s.getOrder(o.id);
      return d.status === 'PAID' && d;
    }));
    expect(detail.payments[0]).toMatchObject({ chainType: 'TRON', chainId: String(TRON), token, amount: '8', source: 'chain' });
    expect(detail.payments[0]!.txHash).toMatch(/^[0-9a-f]{64}$/);

    const chainsOut = await runCli(['chains', '--json', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    const tron = (JSON.parse(chainsOut.stdout) as { chainId: string; watch: { scannedTo: number; head: number; leaseHolder: string | null } }[]).find((c) => c.chainId === String(TRON))!;
    expect(tron.watch.leaseHolder).toContain(`:${child.pid}:`);
    expect(tron.watch.scannedTo).toBeGreaterThanOrEqual(head);

    child.kill('SIGTERM');
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(0);
    expect(err).toMatch(/stopped; leases given up/);
    // The lease was given up at once: nobody holds it now.
    const after = await runCli(['chains', '--json', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    expect((JSON.parse(after.stdout) as { chainId: string; watch: { leaseHolder: string | null } }[]).find((c) => c.chainId === String(TRON))!.watch.leaseHolder).toBeNull();
    expect((await runCli(['ledger', 'check', '--db', db])).code).toBe(0);
  });

  it('watch without any chain to watch is a usage error naming what to do', async () => {
    const db = join(tmp.dir, 'none.db');
    await ledgerWithOrders(db, []);
    const r = await runCli(['watch', '--db', db], { env: { CRYPTOPAY_CHAINS: writeChainsConfig(tmp.dir, {}) } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no chain in the registry has an rpcUrl/);
    const one = await runCli(['watch', '--chain', '1', '--db', db], { env: { CRYPTOPAY_CHAINS: writeChainsConfig(tmp.dir, {}) } });
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/chain 1 \(Ethereum\) has no rpcUrl/);
    // A chain with an RPC endpoint but no token would mean every Transfer of the chain: refused.
    const bare = writeChainsConfig(tmp.dir, { chains: [{ chainId: 5, chainType: 'EVM', name: 'Bare', rpcUrl: pc.chain.rpcUrl }] });
    const noToken = await runCli(['watch', '--chain', '5', '--db', db], { env: { CRYPTOPAY_CHAINS: bare } });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/chain 5 \(Bare\) has no token in the registry/);
    // --chain is the one option given more than once on purpose: each names a chain.
    const two = await runCli(['watch', '--chain', '1', '--chain', '5', '--db', db], { env: { CRYPTOPAY_CHAINS: bare } });
    expect(two.code).toBe(1);
    expect(two.stderr).toMatch(/chain (1 \(Ethereum\) has no rpcUrl|5 \(Bare\) has no token)/);
  });
});
