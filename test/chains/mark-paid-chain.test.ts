import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../server/helpers.js';
import { runCli } from '../helpers/cli.js';
import { ledgerWithOrders, pay, startPayChain, withService, writeChainsConfig, type PayChain } from './watch/anvil-support.js';

/**
 * `order mark-paid` on a chain with an rpcUrl reads the transaction there first (a new-user
 * trial: a mistyped hash on the watched chain was credited, and the real transfer counted on top:
 * 60 paid on a 30 order). A real anvil, the real CLI binary, a real ledger file.
 */

const tmp = tempDir();
let pc: PayChain;
let chains: string;
let n = 0;

beforeAll(async () => {
  pc = await startPayChain();
  chains = writeChainsConfig(tmp.dir, {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: pc.chain.rpcUrl, confirmations: 2 }],
    tokens: [
      { chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 },
      { chainId: 31337, address: await pc.usdt18.getAddress(), symbol: 'USDT18', asset: 'USDT', decimals: 18 },
    ],
  });
});
afterAll(async () => {
  await pc?.stop();
  tmp.cleanup();
});

async function setUp() {
  const db = join(tmp.dir, `ledger-${++n}.db`);
  const { orders } = await ledgerWithOrders(db, ['30', '5']);
  const cli = (args: string[]) => runCli([...args, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
  return { db, cli, o: orders[0]!, other: orders[1]! };
}

const state = (db: string, id: string) => withService(db, async (s) => {
  const o = await s.getOrder(id);
  return { status: o.status, paid: o.paidAmount, balance: (await s.balance(o.uid)).available };
});

describe('order mark-paid on a chain with an rpcUrl', () => {
  it('refuses, recording nothing, what the chain does not show paying the order: an unknown hash, too few confirmations, another amount, a transfer elsewhere', async () => {
    const { db, cli, o, other } = await setUp();
    const unknown = `0x${'5e'.repeat(32)}`;
    const r1 = await cli(['order', 'mark-paid', o.id, '--tx-hash', unknown, '--chain-id', '31337', '--yes']);
    expect(r1.code, r1.stderr).toBe(1);
    expect(r1.stderr).toContain(`chain 31337 (Anvil) does not know transaction ${unknown}: nothing was recorded; check the hash and the chain (or record it without the chain: --unverified --reason TEXT)`);

    const tx = await pay(pc.usdt, o.addresses.EVM!, 30_000_000n);
    const shallow = await cli(['order', 'mark-paid', o.id, '--tx-hash', tx, '--chain-id', '31337', '--yes']);
    expect(shallow.code, shallow.stderr).toBe(1);
    expect(shallow.stderr).toContain(`transaction ${tx} has 1 of the 2 confirmations chain 31337 (Anvil) needs: nothing was recorded; the chain watcher counts it once it has them (it pays 30 USDT)`);
    await pc.chain.mine(1);

    const wrongAmount = await cli(['order', 'mark-paid', o.id, '--tx-hash', tx, '--chain-id', '31337', '--amount', '300', '--yes']);
    expect(wrongAmount.code, wrongAmount.stderr).toBe(1);
    expect(wrongAmount.stderr).toContain(`chain 31337 says transaction ${tx} paid 30 USDT to order ${o.id}'s address, not 300: nothing was recorded`);

    const elsewhere = await cli(['order', 'mark-paid', other.id, '--tx-hash', tx, '--chain-id', '31337', '--yes']);
    expect(elsewhere.code, elsewhere.stderr).toBe(1);
    expect(elsewhere.stderr).toContain(`transaction ${tx} on chain 31337 (Anvil) pays no USDT to order ${other.id}'s address ${other.addresses.EVM}: nothing was recorded`);

    expect(await state(db, o.id)).toEqual({ status: 'PENDING_PAY', paid: '0', balance: '0' });
    expect(await state(db, other.id)).toEqual({ status: 'PENDING_PAY', paid: '0', balance: '0' });
  });

  it('records what the chain says the transaction paid the order, the audit saying it was read there', async () => {
    const { db, cli, o } = await setUp();
    // 18 decimals: credited in the order's 6.
    const tx = await pay(pc.usdt18, o.addresses.EVM!, 30n * 10n ** 18n);
    await pc.chain.mine(1);
    const r = await cli(['order', 'mark-paid', o.id, '--tx-hash', tx, '--chain-id', '31337', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'PAID', paidAmount: '30' });
    expect(await state(db, o.id)).toEqual({ status: 'PAID', paid: '30', balance: '30' });
    const log = JSON.parse((await cli(['log', '--order', o.id, '--json'])).stdout) as { action: string; detail: Record<string, unknown> }[];
    expect(log.find((e) => e.action === 'order.payment_recorded')?.detail).toMatchObject({ txHash: tx, amount: '30', chainId: '31337', verifiedOnChain: true });
  });

  it('--unverified records without the chain, with its reason kept in the audit; without a reason it is a usage error', async () => {
    const { db, cli, o } = await setUp();
    const hash = `0x${'6f'.repeat(32)}`;
    const bare = await cli(['order', 'mark-paid', o.id, '--tx-hash', hash, '--chain-id', '31337', '--unverified', '--yes']);
    expect(bare).toMatchObject({ code: 2, stderr: expect.stringContaining('--unverified needs --reason TEXT') });
    const r = await cli(['order', 'mark-paid', o.id, '--tx-hash', hash, '--chain-id', '31337', '--amount', '30', '--unverified', '--reason', 'the bank statement shows it', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(await state(db, o.id)).toEqual({ status: 'PAID', paid: '30', balance: '30' });
    const log = JSON.parse((await cli(['log', '--order', o.id, '--json'])).stdout) as { action: string; detail: Record<string, unknown> }[];
    expect(log.find((e) => e.action === 'order.payment_recorded')?.detail).toMatchObject({ txHash: hash, unverified: 'the bank statement shows it' });
  });

  // A new-user trial (session 24), from the README's example without --chain-id: a mistyped hash
  // was credited, and the watcher counted the real transfer on top (6 paid on a 3 order).
  // An operator trial: a made-up hash recorded so was credited, the real transfer counted on top.
  it('without --chain-id under --yes it is refused, naming the watched chain, and --unverified --reason records it unchecked', async () => {
    const { db, cli, other } = await setUp();
    const r = await cli(['order', 'mark-paid', other.id, '--tx-hash', `0x${'7a'.repeat(32)}`, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: order mark-paid --yes without --chain-id would record a transaction nobody read, while the watcher reads chain 31337 (Anvil): give --chain-id 31337 to read it there first (or the chain it was paid on), or --unverified --reason TEXT to record it unread; nothing was changed\n');
    expect(await state(db, other.id)).toMatchObject({ status: 'PENDING_PAY', paid: '0' });
    const u = await cli(['order', 'mark-paid', other.id, '--tx-hash', `0x${'7a'.repeat(32)}`, '--unverified', '--reason', 'bank transfer', '--yes']);
    expect(u.code, u.stderr).toBe(0);
    expect(await state(db, other.id)).toMatchObject({ status: 'PAID', paid: '5' });
  });

  // A review: the refusal said "--yes" to a pipe that gave none, and named the EVM chain to an
  // operator who had said --chain-type TRON (which the watcher does not read: nothing is counted on top).
  it('in a pipe without --yes the refusal does not say --yes, and --chain-type limits it to the chains of that type', async () => {
    const { db, cli, other } = await setUp();
    const piped = await cli(['order', 'mark-paid', other.id, '--tx-hash', `0x${'7b'.repeat(32)}`]);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toBe('error: order mark-paid without --chain-id, with no terminal to ask, would record a transaction nobody read, while the watcher reads chain 31337 (Anvil): give --chain-id 31337 to read it there first (or the chain it was paid on), or --unverified --reason TEXT to record it unread; nothing was changed\n');
    expect(await state(db, other.id)).toMatchObject({ status: 'PENDING_PAY', paid: '0' });
    const evm = await cli(['order', 'mark-paid', other.id, '--tx-hash', `0x${'7b'.repeat(32)}`, '--chain-type', 'EVM', '--yes']);
    expect(evm).toMatchObject({ code: 2, stderr: expect.stringContaining('while the watcher reads chain 31337 (Anvil)') });
    const tron = await cli(['order', 'mark-paid', other.id, '--tx-hash', '7b'.repeat(32), '--chain-type', 'TRON', '--yes']);
    expect(tron.code, tron.stderr).toBe(0);
    expect(tron.stderr).not.toContain('watcher reads');
    expect(await state(db, other.id)).toMatchObject({ status: 'PAID', paid: '5' });
  });
});
