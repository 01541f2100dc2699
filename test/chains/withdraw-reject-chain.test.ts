import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Contract, ContractFactory, type Signer } from 'ethers';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../src/chains/address.js';
import { firstBlockAtOrAfter } from '../../src/chains/payout-search.js';
import type { RegistryConfig } from '../../src/chains/registry.js';
import { SOLC_SETTINGS } from '../../src/chains/sandbox/test-token-compile.js';
import { adapterFor } from '../../src/chains/watch/adapter.js';
import type { RpcClient } from '../../src/chains/watch/rpc.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { accountRows, refused } from '../helpers/service.js';
import { closedPort } from '../helpers/closed-port.js';
import { pay, startPayChain, type PayChain } from './watch/anvil-support.js';
import { startRpcProxy } from './watch/rpc-proxy.js';

/**
 * A withdrawal the chain shows paid out is not rejected (a new-user trial, session 23: an
 * operator paid one out by hand, then rejected it; the hold went back to the user, paid twice).
 * Against a real anvil running the test token: the reject asks the chain for a transfer of the
 * withdrawal's amount to its address since it was requested, and refuses, naming it.
 */

let pc: PayChain;
let tokenAddr: string;
let dir: string;
let ledger: Ledger;
let service: LocalPaymentService;
let mchId: string;
let n = 0;

beforeAll(async () => {
  pc = await startPayChain();
  tokenAddr = await pc.usdt.getAddress();
});
afterAll(async () => {
  await pc?.stop();
});

function serviceWith(rpcUrl: string | undefined, opts: { actor?: string; offset?: number } = {}): LocalPaymentService {
  const registryConfig: RegistryConfig = {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', ...(rpcUrl ? { rpcUrl } : {}), confirmations: 2 }],
    tokens: [{ chainId: 31337, address: tokenAddr, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
  };
  return new LocalPaymentService(ledger, { now: () => Date.now() + (opts.offset ?? 0), caller: { actor: opts.actor ?? 'tester' }, registryConfig });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-wreject-'));
  ledger = openLedger(join(dir, 'ledger.db'));
  service = serviceWith(pc.chain.rpcUrl);
  const m = await service.addMerchant({ name: 'Shop', generateWallet: true });
  mchId = m.merchant.mchId;
  await service.adjustBalance({ uid: 'u1', amount: '+100', reason: 'test funds', mchId });
});
afterEach(async () => {
  try {
    expect(await service.check()).toEqual([]);
  } finally {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh recipient per withdrawal, so no two tests' transfers can be mistaken for each other. */
async function recipient(): Promise<string> {
  const { getAddress } = await import('ethers');
  return getAddress(`0x${'ab'.repeat(14)}${(++n).toString(16).padStart(12, '0')}`);
}

async function apply(amount: string, on = service, to?: string) {
  return on.applyWithdrawal({ mchId, uid: 'u1', amount, to: to ?? (await recipient()), chainId: '31337', chainType: 'EVM', token: tokenAddr });
}

/** A contract that moves a token from several owners to one address in one transaction (transferFrom each). */
async function pullContract(deployer: Signer): Promise<Contract> {
  const source = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;
interface Token { function transferFrom(address from, address to, uint256 value) external returns (bool); }
contract Pull {
    function pull(address token, address[] calldata from, address to, uint256[] calldata values) external {
        for (uint256 i = 0; i < from.length; i++) require(Token(token).transferFrom(from[i], to, values[i]), "transferFrom");
    }
}`;
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const input = { language: 'Solidity', sources: { 'Pull.sol': { content: source } }, settings: SOLC_SETTINGS };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as { errors?: { severity: string; formattedMessage: string }[]; contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>> };
  const errors = (out.errors ?? []).filter((x) => x.severity === 'error');
  if (errors.length) throw new Error(errors.map((x) => x.formattedMessage).join('\n'));
  const c = out.contracts['Pull.sol']!['Pull']!;
  const deployed = await new ContractFactory(c.abi as never, `0x${c.evm.bytecode.object}`, deployer).deploy();
  await deployed.waitForDeployment();
  return deployed as unknown as Contract;
}

const blockOf = async (hash: string) => (await pc.chain.provider.getTransactionReceipt(hash))!.blockNumber;

/** What a refusal must leave alone: the withdrawal's row, every account, the audit log's length. */
function state(id: string) {
  return {
    row: ledger.sqlite.prepare('select status, tx_hash, remark, updated_at from withdrawals where id = ?').get(id),
    accounts: accountRows(ledger),
    audit: ledger.sqlite.prepare('select count(*) as n from audit_log').get(),
  };
}

const balanceOf = async () => service.balance('u1', { mchId });

describe('withdraw reject asks the chain whether it was paid out', () => {
  it('paid out exactly after the request: refused, naming the transaction and the confirm that records it; nothing changes; that confirm then settles it', async () => {
    const w = await apply('7.5');
    const hash = await pay(pc.usdt, w.to, 7_500_000n);
    const before = state(w.id);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id, remark: 'customer cancelled' }), 'conflict', 'looks paid out');
    expect(e.message).toBe(
      `withdrawal ${w.id} looks paid out already: on chain 31337 (Anvil), transaction ${hash} (block ${await blockOf(hash)}: 7.5 USDT from ${pc.chain.signers[0]!.address}) moved to ${w.to} after it was requested (it pays 7.5 USDT). `
      + `Rejecting it would return the 7.5 USDT to user u1 as well: paid twice. Confirm it with that transaction instead (cryptopay withdraw confirm ${w.id} --tx-hash ${hash}); `
      + "if it paid something else, an operator at the ledger's terminal can reject it with --unverified --reason TEXT. Nothing was changed",
    );
    expect(state(w.id)).toEqual(before);
    expect(await balanceOf()).toMatchObject({ available: '92.5', held: '7.5' });
    await pc.chain.mine(2);
    expect(await service.confirmWithdrawal({ mchId, logId: w.id, txHash: hash, blockNumber: await blockOf(hash) })).toMatchObject({ status: 'CONFIRMED' });
    expect(await balanceOf()).toMatchObject({ available: '92.5', held: '0' });
  });

  // A new-user trial (session 24): a payout of 0.95 for 1 (a fee taken off) was refused by confirm, and the reject then returned the whole hold.
  it('a payout less a fee (down to 90% of the amount) looks paid out too: refused, saying how to record it', async () => {
    const w = await apply('5');
    const hash = await pay(pc.usdt, w.to, 4_750_000n);
    const block = await blockOf(hash);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${hash} (block ${block}: 4.75 USDT from ${pc.chain.signers[0]!.address}) moved to ${w.to} after it was requested (it pays 5 USDT)`);
    expect(e.message).toContain(`If it is this payout (a fee taken off; confirm checks the exact amount from a named wallet), record it at the ledger's terminal: cryptopay withdraw confirm ${w.id} --tx-hash ${hash} --block-number ${block} --unverified --reason TEXT`);
    await pc.chain.mine(2);
    expect(await service.confirmWithdrawalUnverified({ mchId, logId: w.id, txHash: hash, blockNumber: await blockOf(hash) }, 'paid 4.75: the exchange took 0.25')).toMatchObject({ status: 'CONFIRMED' });
  });

  // Confirm reads "exactly that amount" as what one transaction moved to the address in all: the
  // reject's search reads a transaction the same way, or a split payout would be paid twice.
  it('a payout split in parts of one transaction (2.5 + 2.5 in a batch) looks paid out: refused; confirm with it settles it', async () => {
    const w = await apply('5');
    const sent = await pc.usdt.getFunction('transferBatch')([w.to, w.to], [2_500_000n, 2_500_000n]);
    const hash = (await sent.wait())!.hash as string;
    const block = await blockOf(hash);
    const before = state(w.id);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${hash} (block ${block}: 5 USDT in all, in 2 transfers, from ${pc.chain.signers[0]!.address}) moved to ${w.to} after it was requested (it pays 5 USDT). `);
    // Confirm accepts it (the parts add up), so confirm is what is advised.
    expect(e.message).toContain(`Confirm it with that transaction instead (cryptopay withdraw confirm ${w.id} --tx-hash ${hash})`);
    expect(state(w.id)).toEqual(before);
    await pc.chain.mine(2);
    expect(await service.confirmWithdrawal({ mchId, logId: w.id, txHash: hash, blockNumber: block })).toMatchObject({ status: 'CONFIRMED' });
    expect(await balanceOf()).toMatchObject({ available: '95', held: '0' });
  });

  it('a transaction that moved more in all ([1, 1]) is named with its sum, and confirm is not advised (it refuses it): --unverified is', async () => {
    const w = await apply('1');
    const sent = await pc.usdt.getFunction('transferBatch')([w.to, w.to], [1_000_000n, 1_000_000n]);
    const hash = (await sent.wait())!.hash as string;
    const block = await blockOf(hash);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${hash} (block ${block}: 2 USDT in all, in 2 transfers, from ${pc.chain.signers[0]!.address}) moved to ${w.to} after it was requested (it pays 1 USDT)`);
    expect(e.message).toContain(`If it is this payout (more than its amount in all; confirm checks the exact amount from a named wallet), record it at the ledger's terminal: cryptopay withdraw confirm ${w.id} --tx-hash ${hash} --block-number ${block} --unverified --reason TEXT`);
    expect(e.message).not.toContain('Confirm it with that transaction instead');
    await refused(service.confirmWithdrawal({ mchId, logId: w.id, txHash: hash, blockNumber: block }), 'conflict', 'moved 2 USDT in all');
  });

  // One transaction paying from two wallets (a contract pulling from both with transferFrom): the
  // refusal names both senders, and the one not named as a payout wallet as such.
  it('a payout from two senders in one transaction names both, and the one that is not a payout wallet', async () => {
    const [a, b] = [pc.chain.signers[0]!, pc.chain.signers[1]!];
    const pull = await pullContract(a);
    const pullAt = await pull.getAddress();
    await (await pc.usdt.getFunction('transfer')(b.address, 10_000_000n)).wait();
    for (const owner of [a, b]) await (await (pc.usdt.connect(owner) as typeof pc.usdt).getFunction('approve')(pullAt, 10n ** 30n)).wait();
    const pay2 = async (to: string) => {
      const sent = await pull.getFunction('pull')(tokenAddr, [a.address, b.address], to, [2_500_000n, 2_500_000n]);
      const hash = (await sent.wait())!.hash as string;
      return { hash, block: await blockOf(hash) };
    };

    // No payout wallet named: every sender is taken as one, and confirm is advised.
    const w = await apply('5');
    const t = await pay2(w.to);
    const before = state(w.id);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${t.hash} (block ${t.block}: 5 USDT in all, in 2 transfers, from ${a.address} and ${b.address}) moved to ${w.to} after it was requested (it pays 5 USDT). `);
    expect(e.message).toContain(`Confirm it with that transaction instead (cryptopay withdraw confirm ${w.id} --tx-hash ${t.hash})`);
    expect(state(w.id)).toEqual(before);

    // A named payout wallet: the other sender is said not to be one, and how to name it.
    await service.changePayoutWallet({ mchId, address: a.address }, 'add');
    const w2 = await apply('5');
    const t2 = await pay2(w2.to);
    const before2 = state(w2.id);
    const e2 = await refused(service.rejectWithdrawal({ mchId, id: w2.id }), 'conflict', `transaction ${t2.hash} (block ${t2.block}: 5 USDT in all, in 2 transfers, from ${a.address} and ${b.address}, not a payout wallet of this merchant) moved to ${w2.to}`);
    expect(e2.message).toContain(`If it is this payout (a wallet not named yet: cryptopay merchant payout-wallet add ${b.address}; confirm checks the exact amount from a named wallet), record it at the ledger's terminal: cryptopay withdraw confirm ${w2.id} --tx-hash ${t2.hash} --block-number ${t2.block} --unverified --reason TEXT`);
    expect(e2.message).not.toContain('Confirm it with that transaction instead');
    expect(state(w2.id)).toEqual(before2);
  });

  // A reviewer: a batch [A 1, B 1] confirmed the withdrawal to A; the one to B could not take the
  // same hash (a transaction confirms one withdrawal), and its reject went through: B paid twice.
  it('a transaction another withdrawal holds still pays this one where it moved more than that one accounts for', async () => {
    const toA = await apply('1');
    const toB = await apply('1');
    const sent = await pc.usdt.getFunction('transferBatch')([toA.to, toB.to], [1_000_000n, 1_000_000n]);
    const hash = (await sent.wait())!.hash as string;
    const block = await blockOf(hash);
    expect(await service.confirmWithdrawal({ mchId, logId: toA.id, txHash: hash, blockNumber: block })).toMatchObject({ txHash: hash });
    await refused(service.confirmWithdrawal({ mchId, logId: toB.id, txHash: hash, blockNumber: block }), 'conflict', 'is already recorded in this ledger');
    const before = state(toB.id);
    await refused(service.rejectWithdrawal({ mchId, id: toB.id }), 'conflict', `transaction ${hash} (block ${block}: 1 USDT from ${pc.chain.signers[0]!.address}) moved to ${toB.to}`);
    expect(state(toB.id)).toEqual(before);

    // Two withdrawals of 1 to one address, paid by one [1, 1]: the one recorded by hand accounts
    // for 1 of the 2; the other's reject is refused with the 1 left.
    const first = await apply('1');
    const second = await apply('1', service, first.to);
    const twice = await pc.usdt.getFunction('transferBatch')([first.to, first.to], [1_000_000n, 1_000_000n]);
    const both = (await twice.wait())!.hash as string;
    const bothBlock = await blockOf(both);
    await pc.chain.mine(2);
    await service.confirmWithdrawalUnverified({ mchId, logId: first.id, txHash: both, blockNumber: bothBlock }, 'one batch paid both');
    // The block is read before the reject is asked for: an await between them would leave its refusal unhandled meanwhile.
    await refused(service.rejectWithdrawal({ mchId, id: second.id }), 'conflict', `transaction ${both} (block ${bothBlock}: 1 USDT in all, in 2 transfers, from ${pc.chain.signers[0]!.address}) moved to ${first.to}`);
    // A withdrawal to the same address that the transaction's transfers are all accounted for by: rejected.
    const third = await apply('1', service, toA.to);
    expect(await service.rejectWithdrawal({ mchId, id: third.id })).toMatchObject({ status: 'REJECTED' });
  });

  it('another amount (more, or less than 90% of it), another token, or the same transfer to another address: not its payout, rejected; the audit log says which blocks were searched', async () => {
    const w = await apply('5');
    await pay(pc.usdt, w.to, 4_499_999n);
    await pay(pc.usdt, w.to, 5_000_001n);
    await pay(pc.stranger, w.to, 5_000_000n);
    await pay(pc.usdt, await recipient(), 5_000_000n);
    const head = await pc.chain.provider.getBlockNumber();
    expect(await service.rejectWithdrawal({ mchId, id: w.id, remark: 'cancelled' })).toMatchObject({ status: 'REJECTED', remark: 'cancelled' });
    expect(await balanceOf()).toMatchObject({ available: '100', held: '0' });
    const [entry] = await service.log({ withdrawalId: w.id });
    expect(entry).toMatchObject({ action: 'withdrawal.rejected', detail: { payoutSearched: { chainId: '31337', toBlock: head, found: 0 } } });
    expect((entry!.detail as { payoutSearched: { fromBlock: number } }).payoutSearched.fromBlock).toBeLessThanOrEqual(head);
  });

  it('a transfer mined before the withdrawal was requested (more than the clocks may disagree) cannot be its payout: rejected', async () => {
    const to = await recipient();
    await pay(pc.usdt, to, 3_000_000n);
    // The service's clock an hour ahead: the transfer is an hour older than the request.
    const later = serviceWith(pc.chain.rpcUrl, { offset: 3_600_000 });
    const w = await apply('3', later, to);
    expect(await later.rejectWithdrawal({ mchId, id: w.id })).toMatchObject({ status: 'REJECTED' });
  });

  it("a transfer that already confirmed another of the merchant's withdrawals cannot pay this one too: rejected", async () => {
    const to = await recipient();
    const a = await apply('2', service, to);
    const b = await apply('2', service, to);
    const hash = await pay(pc.usdt, to, 2_000_000n);
    await pc.chain.mine(2);
    expect(await service.confirmWithdrawal({ mchId, logId: a.id, txHash: hash, blockNumber: await blockOf(hash) })).toMatchObject({ status: 'CONFIRMED' });
    expect(await service.rejectWithdrawal({ mchId, id: b.id })).toMatchObject({ status: 'REJECTED' });
    expect(await balanceOf()).toMatchObject({ available: '98', held: '0' });
  });

  // A new-user trial (session 24): paid out from a wallet not named yet, confirm refused it, and the reject returned the hold.
  it("with payout wallets named, a transfer from another wallet still looks paid out: refused, naming the wallet and how to add it", async () => {
    const stranger = pc.chain.signers[2]!;
    const asStranger = pc.usdt.connect(stranger) as typeof pc.usdt;
    await (await asStranger.getFunction('mint')(stranger.address, 10_000_000n)).wait();
    await service.changePayoutWallet({ mchId, address: pc.chain.signers[0]!.address }, 'add');
    const w = await apply('4');
    const other = (await (await asStranger.getFunction('transfer')(w.to, 4_000_000n)).wait())!.hash as string;
    const block = await blockOf(other);
    const e = await refused(service.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${other} (block ${block}: 4 USDT from ${stranger.address}, not a payout wallet of this merchant)`);
    expect(e.message).toContain(`If it is this payout (a wallet not named yet: cryptopay merchant payout-wallet add ${stranger.address}; confirm checks the exact amount from a named wallet)`);
    const v = await apply('4');
    const hash = await pay(pc.usdt, v.to, 4_000_000n);
    expect((await refused(service.rejectWithdrawal({ mchId, id: v.id }), 'conflict', `transaction ${hash}`)).message).toContain(`Confirm it with that transaction instead (cryptopay withdraw confirm ${v.id} --tx-hash ${hash})`);
    await service.rejectWithdrawalUnverified({ mchId, id: w.id }, 'test: the stranger paid something else');
    await service.rejectWithdrawalUnverified({ mchId, id: v.id }, 'test');
  });

  it('a node that ranges are refused by (more than 3 blocks per eth_getLogs) is searched in smaller ranges: the payout is still found', async () => {
    const proxy = await startRpcProxy(pc.chain.rpcUrl);
    try {
      proxy.maxRange = 3;
      const viaProxy = serviceWith(proxy.url);
      const w = await apply('6', viaProxy);
      await pc.chain.mine(5);
      const hash = await pay(pc.usdt, w.to, 6_000_000n);
      await pc.chain.mine(5);
      expect((await refused(viaProxy.rejectWithdrawal({ mchId, id: w.id }), 'conflict', `transaction ${hash}`)).message).toContain('looks paid out');
      expect(proxy.refusedRanges).toBeGreaterThan(0);
      expect(Math.max(...proxy.spans.slice(-3))).toBeLessThanOrEqual(3);
    } finally {
      await proxy.close();
    }
  });

  it('a node that cannot be reached: 503 kind, nothing changed; an operator rejects without the chain only with a reason, which the audit log keeps', async () => {
    const down = serviceWith(`http://127.0.0.1:${await closedPort()}`, { actor: 'alice' });
    const w = await apply('1');
    const before = state(w.id);
    const e = await refused(down.rejectWithdrawal({ mchId, id: w.id }), 'unavailable', 'cannot be read');
    expect(e.message).toMatch(new RegExp(`^chain 31337 \\(Anvil\\) cannot be read to see whether withdrawal ${w.id} was paid out: .*; nothing was changed; try again once it can be read\\. Rejecting without the chain returns the hold even if it was paid out: only after checking on an explorer that nothing was sent to ${w.to} since ${new Date(w.createdAt).toISOString().replace(/\./g, '\\.')}, an operator at the ledger's terminal can: --unverified --reason TEXT$`));
    expect(state(w.id)).toEqual(before);
    expect(await down.rejectWithdrawalUnverified({ mchId, id: w.id, remark: 'cancelled' }, 'node down; checked the explorer: nothing sent')).toMatchObject({ status: 'REJECTED' });
    expect((await service.log({ withdrawalId: w.id }))[0]).toMatchObject({ actor: 'alice', detail: { unverified: 'node down; checked the explorer: nothing sent', remark: 'cancelled' } });
    // And on the record, as withdraw show shows it.
    expect(await service.getWithdrawal(w.id)).toMatchObject({ verificationNote: 'rejected without asking the chain whether it was paid out, by an operator: node down; checked the explorer: nothing sent' });
  });

  it('a chain without an rpcUrl: rejected as before, nothing searched', async () => {
    const plain = serviceWith(undefined);
    const w = await apply('1', plain);
    await pay(pc.usdt, w.to, 1_000_000n);
    expect(await plain.rejectWithdrawal({ mchId, id: w.id })).toMatchObject({ status: 'REJECTED' });
    expect((await service.log({ withdrawalId: w.id }))[0]!.detail).not.toHaveProperty('payoutSearched');
  });

  it('TRON: a payout to a base58 address is found through the Ethereum-compatible JSON-RPC, and named as TRON writes hashes', async () => {
    const TRON = 728126428;
    const tc = await startPayChain(TRON);
    try {
      const token = tronAddressFromEvm(await tc.usdt.getAddress());
      const tron = new LocalPaymentService(ledger, {
        now: Date.now, caller: { actor: 'tester' },
        registryConfig: { chains: [{ chainId: TRON, rpcUrl: tc.chain.rpcUrl, confirmations: 1 }], tokens: [{ chainId: TRON, address: token, symbol: 'USDT', asset: 'USDT', decimals: 6 }] },
      });
      const to = tronAddressFromEvm(`0x${'cd'.repeat(14)}${(++n).toString(16).padStart(12, '0')}`);
      const w = await tron.applyWithdrawal({ mchId, uid: 'u1', amount: '3', to, chainId: TRON, chainType: 'TRON', token });
      const hash = await pay(tc.usdt, adapterFor('TRON').toNodeAddress(to), 3_000_000n);
      const e = await refused(tron.rejectWithdrawal({ mchId, id: w.id }), 'conflict', 'looks paid out');
      expect(e.message).toContain(`transaction ${hash.slice(2)} (block ${(await tc.chain.provider.getTransactionReceipt(hash))!.blockNumber}: 3 USDT from ${tronAddressFromEvm(tc.chain.signers[0]!.address)}) moved to ${to}`);
      expect(await tron.confirmWithdrawal({ mchId, logId: w.id, txHash: hash.slice(2), blockNumber: (await tc.chain.provider.getTransactionReceipt(hash))!.blockNumber })).toMatchObject({ status: 'CONFIRMED' });
    } finally {
      await tc.stop();
    }
  });
});

describe('the first block mined at or after a time', () => {
  /** A node whose blocks have these times (seconds, never going back), counting the headers asked for. */
  function nodeOf(times: { length: number; at(n: number): number | undefined }): RpcClient & { asked: number } {
    const header = (n: number) => (n < times.length ? { number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}`, parentHash: `0x${'0'.repeat(64)}`, timestamp: `0x${times.at(n)!.toString(16)}` } : null);
    const node = {
      url: 'http://node', asked: 0,
      call: async () => {
        throw new Error('not used');
      },
      batch: async (calls: { method: string; params: unknown[] }[]) => calls.map((c) => {
        node.asked++;
        return { ok: true as const, result: header(Number.parseInt(c.params[0] as string, 16)) };
      }),
    };
    return node;
  }

  it('is the first block whose time is at or after it, whatever the chain (fast-check, against reading every block)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: -2, max: 800 }), async (gaps, t) => {
        let at = 1_000;
        const times = gaps.map((g) => (at += g));
        const timeMs = (1_000 + t) * 1000;
        const expected = times.findIndex((s) => s * 1000 >= timeMs);
        expect(await firstBlockAtOrAfter(nodeOf(times), timeMs, times.length - 1)).toBe(expected === -1 ? times.length : expected);
      }),
      { numRuns: 300 },
    );
  });

  it('asks for a few dozen headers of a 20-million-block chain, not millions', async () => {
    const times = { length: 20_000_001, at: (i: number) => 1_600_000_000 + i * 12 };
    const node = nodeOf(times);
    expect(await firstBlockAtOrAfter(node, (1_600_000_000 + 12 * 12_345_678 - 5) * 1000, times.length - 1)).toBe(12_345_678);
    expect(node.asked).toBeLessThanOrEqual(80);
  });
});
