import { join } from 'node:path';
import { getAddress } from 'ethers';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/signing/index.js';
import { runCli } from '../helpers/cli.js';
import { httpJson, killAll, nextNonce, spawnServe, tempDir, type Spawned } from '../server/helpers.js';
import { HAS_SCRIPT, runPty, stripAnsi } from '../cli/_support.js';
import { pay, startPayChain, until, withService, writeChainsConfig, type PayChain } from './watch/anvil-support.js';
import { startRpcProxy, type RpcProxy } from './watch/rpc-proxy.js';

/**
 * Issue #12 end to end (run `npm run build` first): a real anvil with the test token, a real
 * `cryptopay serve` verifying `POST /withdraw/confirm` and watching the chain, the real CLI
 * binary against the same ledger locally and against serve in remote mode, and a terminal.
 */

const CONFIRMATIONS = 2;
const tmp = tempDir();
let pc: PayChain;
let proxy: RpcProxy;
let rpcUrl: string;
const RPC_KEY = '0123456789abcdef0123456789abcdef';
let db: string;
let chains: string;
let mchId: string;
let secret: string;
let srv: Spawned;
let n = 0;

beforeAll(async () => {
  pc = await startPayChain();
  proxy = await startRpcProxy(pc.chain.rpcUrl);
  // As a provider's URL carries its key (the proxy answers on any path): no answer may show it.
  rpcUrl = `${proxy.url}/v1/${RPC_KEY}/jsonrpc`;
  db = join(tmp.dir, 'ledger.db');
  const head = await pc.chain.provider.getBlockNumber();
  chains = writeChainsConfig(tmp.dir, {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl, confirmations: CONFIRMATIONS, pollInterval: 200, startBlock: head }],
    tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
  });
  await withService(db, async (s) => {
    const m = await s.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0 });
    mchId = m.merchant.mchId;
    secret = m.secret;
    await s.adjustBalance({ uid: 'u1', amount: '+1000', reason: 'test funds', mchId });
  });
  srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
  await srv.waitFor(/watching chain 31337 \(Anvil\)/);
}, 60_000);
afterEach(() => {
  proxy.mode = 'pass';
});
afterAll(async () => {
  killAll();
  await proxy?.close();
  await pc?.stop();
  tmp.cleanup();
});

const env = () => ({ CRYPTOPAY_CHAINS: chains });
const local = (args: string[]) => runCli([...args, '--db', db], { env: env() });
const remote = (args: string[]) => runCli([...args, '--remote', srv.url], { env: { CRYPTOPAY_SECRET: secret, CRYPTOPAY_MCH_ID: mchId } });

async function post(path: string, fields: Record<string, unknown>) {
  const body: Record<string, unknown> = { ...fields, mchId, timestamp: Date.now(), nonce: nextNonce() };
  body.sign = sign(body, secret);
  return httpJson(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const fresh = () => getAddress(`0x${'7'.repeat(28)}${(++n).toString(16).padStart(12, '0')}`);

async function apply(amount = '10'): Promise<{ id: string; to: string; createdAt: number }> {
  const r = await post('/api/v1/withdraw/apply', { uid: 'u1', amount, to: fresh(), chainId: 31337, chainType: 'EVM', token: await pc.usdt.getAddress() });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.data;
}

async function payout(to: string, value: bigint): Promise<{ hash: string; block: number }> {
  const hash = await pay(pc.usdt, to, value);
  return { hash, block: (await pc.chain.provider.getTransactionReceipt(hash))!.blockNumber };
}

const show = async (id: string) => JSON.parse((await local(['withdraw', 'show', id, '--json'])).stdout);

/** A record's value goes on under its column on a narrow terminal: one line again, for matching. */
const unwrapped = (t: string) => t.replace(/\r?\n {8,}/g, ' ');

describe('POST /api/v1/withdraw/confirm verifies on chain', () => {
  it('a mismatch is 409 saying what differs; an unknown hash 409; the node down 503; nothing changes', async () => {
    const w = await apply('10');
    const tx = await payout(w.to, 9_500_000n);
    const wrong = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(wrong.status).toBe(409);
    expect(wrong.json).toMatchObject({ code: 0, data: null });
    expect(wrong.json.msg).toContain(`transaction ${tx.hash} moved 9.5 USDT to ${w.to}; this withdrawal pays 10 USDT to ${w.to}`);

    const unknown = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'ab'.repeat(32)}`, blockNumber: tx.block });
    expect(unknown.status).toBe(409);
    expect(unknown.json.msg).toContain('does not know transaction');

    proxy.mode = 'down';
    const down = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(down.status).toBe(503);
    expect(down.json).toMatchObject({ code: 0, data: null });
    // The merchant reads that the node did not answer, not where the node is (a code review: a node
    // of one's own is an address inside the service's network); serve's log has the detail.
    expect(down.json.msg).toBe('chain 31337 (Anvil) cannot be read: its node did not answer as expected; nothing was changed');
    await srv.waitFor(new RegExp(`POST /api/v1/withdraw/confirm: chain 31337 \\(Anvil\\) cannot be read: ${proxy.url.replace(/[.]/g, '\\.')}/… cannot be reached: ECONNRESET`));
    // The watcher's last error: the operator's summary names the node the same way; the
    // merchant's says the node could not be read, and not where it is (a code review: a node of
    // one's own is an address inside the service's network).
    const operators = await until('the watcher to report the node down', async () => {
      const text = (await local(['summary', '--json'])).stdout;
      return text.includes('cannot be reached') && text;
    });
    expect(operators).toContain(`${proxy.url}/…`);
    expect(operators).not.toContain(RPC_KEY);
    const merchants = JSON.stringify((await post('/api/v1/summary', { op: 'summary' })).json);
    expect(merchants).toContain("the service could not read this chain's node at its last try");
    expect(merchants).not.toContain(new URL(proxy.url).host);
    expect(merchants).not.toContain(RPC_KEY);
    // Nothing changed, the nonce included: the very same signed request, sent again once the node is back, is judged on the chain.
    const once = { logId: w.id, txHash: tx.hash, blockNumber: tx.block, mchId, timestamp: Date.now(), nonce: nextNonce() } as Record<string, unknown>;
    once.sign = sign(once, secret);
    const sendOnce = () => httpJson(srv.url, '/api/v1/withdraw/confirm', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(once) });
    expect((await sendOnce()).status).toBe(503);
    proxy.mode = 'pass';
    const again = await sendOnce();
    expect(again.status, JSON.stringify(again.json)).toBe(409);
    expect(again.json.msg).toContain(`moved 9.5 USDT to ${w.to}`);

    // The API can never skip the chain: no field for it, however it is spelled.
    for (const extra of [{ unverified: true, reason: 'paid from the cold wallet' }, { unverifiedReason: 'paid from the cold wallet' }]) {
      const skip = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'cd'.repeat(32)}`, blockNumber: tx.block, ...extra });
      expect(skip.status, JSON.stringify(skip.json)).toBe(400);
    }

    expect(await show(w.id)).toMatchObject({ status: 'PENDING', txHash: null, verification: null });
    const log = JSON.parse((await local(['log', '--withdrawal', w.id, '--json'])).stdout) as { action: string }[];
    expect(log.map((e) => e.action)).toEqual(['withdrawal.applied']);
  });

  it('short of the confirmations: 200 with PENDING and the txHash; serve\'s watcher confirms it at depth, once', async () => {
    const w = await apply('10');
    const tx = await payout(w.to, 10_000_000n);
    const r = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ status: 'PENDING', txHash: tx.hash, blockNumber: tx.block });
    await pc.chain.mine(CONFIRMATIONS);
    await until('CONFIRMED by the watcher', async () => (await show(w.id)).status === 'CONFIRMED', 20_000);
    expect(await show(w.id)).toMatchObject({ verification: 'verified', txHash: tx.hash });
    await srv.waitFor(new RegExp(`withdrawal ${w.id} confirmed`));
    const log = JSON.parse((await local(['log', '--withdrawal', w.id, '--json'])).stdout) as { action: string; actor: string }[];
    expect(log.filter((e) => e.action === 'withdrawal.confirmed')).toEqual([expect.objectContaining({ actor: 'chain:31337' })]);
    expect(log.map((e) => e.action)).toContain('withdrawal.confirmation_pending');
  });
});

describe('POST /api/v1/withdraw/verify (extension)', () => {
  it("answers what the chain says next to what the withdrawal expects, changing nothing; 409 with no transaction to check", async () => {
    const w = await apply('8');
    const tx = await payout(w.to, 8_000_000n);
    const r = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.data).toMatchObject({
      id: w.id, status: 'PENDING', verification: null, txHash: tx.hash, blockNumber: tx.block, matches: true, deep: false, verdict: 'match',
      expected: { amount: '8', rawAmount: '8000000', to: w.to, confirmations: CONFIRMATIONS },
      chain: { known: true, mined: true, succeeded: true, blockNumber: tx.block, confirmations: 1, transfers: [{ to: w.to, rawAmount: '8000000', amount: '8' }] },
    });
    // When the withdrawal was asked for, and when its block was mined (the chain's clock, in ms).
    expect(r.json.data.expected.requestedAt).toBe(w.createdAt);
    const block = await pc.chain.provider.getBlock(tx.block);
    expect(r.json.data.chain.blockTime).toBe(block!.timestamp * 1000);
    const wrongBlock = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id, txHash: tx.hash, blockNumber: tx.block + 5 });
    expect(wrongBlock.json.data).toMatchObject({ matches: false, verdict: 'mismatch', message: `transaction ${tx.hash} is in block ${tx.block}, not in block ${tx.block + 5}` });
    // The hash alone: looked at in the block its receipt names (what an operator has at hand).
    const byHash = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id, txHash: tx.hash });
    expect(byHash.status, JSON.stringify(byHash.json)).toBe(200);
    expect(byHash.json.data).toMatchObject({ txHash: tx.hash, blockNumber: tx.block, matches: true, expected: { blockNumber: tx.block }, chain: { blockNumber: tx.block } });
    const unknown = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id, txHash: `0x${'ab'.repeat(32)}` });
    expect(unknown.status).toBe(409);
    expect(unknown.json.msg).toBe(`chain 31337 does not know transaction 0x${'ab'.repeat(32)}: check the hash and the chain (the withdrawal is on chain 31337, Anvil)`);
    const blockAlone = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id, blockNumber: tx.block });
    expect(blockAlone.status).toBe(400);
    expect(blockAlone.json.msg).toBe('blockNumber goes with txHash: give the transaction too, or neither for the recorded one');
    const nothing = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id });
    expect(nothing.status).toBe(409);
    // Sent and not recorded yet: the payout on chain is named, with the commands that check and record it.
    expect(nothing.json.msg).toMatch(new RegExp(`^withdrawal ${w.id} is PENDING with no transaction recorded: nothing to verify; chain 31337 shows transaction ${tx.hash} \\(block ${tx.block}: [\\d.]+ USDT from 0x[0-9a-fA-F]{40}\\) to ${w.to} since it was requested: if it is the payout, check it with cryptopay withdraw verify ${w.id} --tx-hash ${tx.hash}, and record it with cryptopay withdraw confirm ${w.id} --tx-hash ${tx.hash}$`));
    expect(await show(w.id)).toMatchObject({ status: 'PENDING', txHash: null, verification: null });
  });
});

describe('the CLI binary', () => {
  it('remote mode: the same refusals and exit codes (1 for a mismatch, 3 for the node down), and a match', async () => {
    const w = await apply('4');
    // A chain the remote alone knows (31337 is in this CLI's registry only through serve's
    // config): the amount still reads with its asset, as it does locally.
    const [shown, listed] = await Promise.all([remote(['withdraw', 'show', w.id]), remote(['withdraw', 'list', '--status', 'PENDING'])]);
    expect(shown.stdout).toMatch(/^amount +4 USDT$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${w.id}\\tu1\\t4 USDT\\t`, 'm'));
    expect(JSON.parse((await remote(['--json', 'withdraw', 'show', w.id])).stdout)).toMatchObject({ amount: '4', asset: 'USDT' });
    // The operations' own answers (the interface's record, no asset) are shown with it too.
    const applied = await remote(['withdraw', 'apply', '--uid', 'u1', '--amount', '1.5', '--to', fresh(), '--chain-id', '31337', '--chain-type', 'EVM', '--token', await pc.usdt.getAddress()]);
    expect(applied.stdout, applied.stderr).toMatch(/^amount +1\.5 USDT$/m);
    const appliedId = /^id +(\S+)$/m.exec(applied.stdout)![1]!;
    expect((await remote(['withdraw', 'reject', appliedId, '--yes'])).stdout).toMatch(/^amount +1\.5 USDT$/m);
    const bad = await payout(w.to, 5_000_000n);
    const refused = await remote(['withdraw', 'confirm', w.id, '--tx-hash', bad.hash, '--block-number', String(bad.block), '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`moved 5 USDT to ${w.to}; this withdrawal pays 4 USDT to ${w.to}`);
    proxy.mode = 'down';
    const down = await remote(['withdraw', 'confirm', w.id, '--tx-hash', bad.hash, '--block-number', String(bad.block), '--yes']);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('cannot be read');
    proxy.mode = 'pass';
    const good = await payout(w.to, 4_000_000n);
    await pc.chain.mine(CONFIRMATIONS);
    const ok = await remote(['withdraw', 'confirm', w.id, '--tx-hash', good.hash, '--block-number', String(good.block), '--yes', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'CONFIRMED', txHash: good.hash });
    const verified = await remote(['withdraw', 'verify', w.id]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`chain says\\s+succeeded in block ${good.block} \\(\\S+Z\\), \\d+ confirmations?; 4 USDT to ${w.to}`));
    // The API can never skip the chain.
    const skip = await remote(['withdraw', 'confirm', w.id, '--tx-hash', good.hash, '--block-number', '1', '--unverified', '--reason', 'x', '--yes']);
    expect(skip.code).toBe(2);
    expect(skip.stderr).toMatch(/withdraw confirm --unverified needs a local ledger/);
  });

  it('local: confirm, show with its verification, withdraw verify; --unverified needs --reason and is kept', async () => {
    const w = await apply('3');
    const tx = await payout(w.to, 3_000_000n);
    const pending = await local(['withdraw', 'confirm', w.id, '--tx-hash', tx.hash, '--block-number', String(tx.block), '--yes']);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toMatch(/status\s+PENDING/);
    expect(pending.stderr).toContain('short of its confirmations; the watcher');
    expect((await local(['withdraw', 'show', w.id])).stdout).toMatch(/verification\s+matches on chain; waiting for its confirmations/);
    expect((await local(['withdraw', 'list'])).stdout).toMatch(new RegExp(`${w.id}\\t.*\\tPENDING \\(confirmations\\)\\t${tx.hash}`));
    await pc.chain.mine(CONFIRMATIONS);
    await until('CONFIRMED', async () => (await show(w.id)).status === 'CONFIRMED', 20_000);
    const shown = await local(['withdraw', 'show', w.id]);
    expect(shown.stdout).toMatch(/verification\s+verified on chain/);
    // The amount with its asset, locally and on the remote, whose answer names the asset (this
    // CLI alone knows only the built-in chains).
    expect(shown.stdout).toMatch(/^amount\s+3 USDT$/m);
    expect((await remote(['withdraw', 'show', w.id])).stdout).toMatch(/^amount\s+3 USDT$/m);
    const verified = await local(['withdraw', 'verify', w.id]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`chain says\\s+succeeded in block ${tx.block} \\(\\S+Z\\), \\d+ confirmations?; 3 USDT to ${w.to}`));
    expect(verified.stdout).toMatch(/verdict\s+matches: /);

    // Confirmed without the chain (its reason kept); verify then finds the chain disagrees: exit 1.
    const u = await apply('2');
    const noReason = await local(['withdraw', 'confirm', u.id, '--tx-hash', `0x${'56'.repeat(32)}`, '--block-number', '3', '--unverified', '--yes']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--unverified needs --reason TEXT');
    const unverified = await local(['withdraw', 'confirm', u.id, '--tx-hash', `0x${'56'.repeat(32)}`, '--block-number', '3', '--unverified', '--reason', 'paid from the cold wallet', '--yes', '--json']);
    expect(unverified.code, unverified.stderr).toBe(0);
    expect(await show(u.id)).toMatchObject({ status: 'CONFIRMED', verification: 'unverified', verificationNote: expect.stringContaining('paid from the cold wallet') });
    expect((await local(['withdraw', 'show', u.id])).stdout).toMatch(/verification\s+NOT verified on chain\n.*why\s+confirmed without verification by an operator: paid from the cold wallet/);
    const check = await local(['withdraw', 'verify', u.id, '--json']);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ id: u.id, matches: false, verification: 'unverified' });
    expect(check.stderr).toContain(`chain 31337 does not know transaction 0x${'56'.repeat(32)}`);
    const log = JSON.parse((await local(['log', '--withdrawal', u.id, '--json'])).stdout) as { action: string; detail: { verified?: boolean; note?: string } }[];
    expect(log[0]).toMatchObject({ action: 'withdrawal.confirmed', detail: { verified: false, note: expect.stringContaining('paid from the cold wallet') } });
  });

  it('without --block-number the block is the one the chain names, locally and remotely; an unknown hash, or a chain without rpcUrl, is refused saying what to do', async () => {
    const w = await apply('2.5');
    const tx = await payout(w.to, 2_500_000n);
    // Checked before confirming with it (withdraw verify --tx-hash), locally and remotely; nothing changes.
    for (const run of [local, remote]) {
      const before = await run(['withdraw', 'verify', w.id, '--tx-hash', tx.hash]);
      expect(before.code, before.stderr).toBe(0);
      expect(before.stdout).toMatch(new RegExp(`chain says\\s+succeeded in block ${tx.block} .*; 2\\.5 USDT to ${w.to}`));
    }
    expect(await show(w.id)).toMatchObject({ status: 'PENDING', txHash: null });
    expect((await local(['withdraw', 'verify', w.id, '--block-number', String(tx.block)])).stderr).toContain('--block-number goes with --tx-hash');
    const off = await apply('3');
    const wrong = await payout(off.to, 4_000_000n);
    const offVerified = await local(['withdraw', 'verify', off.id, '--tx-hash', wrong.hash]);
    expect(offVerified.code).toBe(1);
    expect(offVerified.stderr).toContain(`moved 4 USDT to ${off.to}; this withdrawal pays 3 USDT to ${off.to}`);
    // A mismatch is said before the missing --yes (no terminal here): exit 1, not 2.
    const noYes = await local(['withdraw', 'confirm', off.id, '--tx-hash', wrong.hash]);
    expect(noYes.code).toBe(1);
    expect(noYes.stderr).toContain(`moved 4 USDT to ${off.to}; this withdrawal pays 3 USDT to ${off.to}`);
    expect((await local(['withdraw', 'reject', off.id, '--yes'])).code).toBe(0);
    const ok = await local(['withdraw', 'confirm', w.id, '--tx-hash', tx.hash, '--yes']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await show(w.id)).toMatchObject({ txHash: tx.hash, blockNumber: tx.block, verification: expect.stringMatching(/^(confirming|verified)$/) });

    const r = await apply('1.25');
    const rtx = await payout(r.to, 1_250_000n);
    const viaRemote = await remote(['withdraw', 'confirm', r.id, '--tx-hash', rtx.hash, '--yes', '--json']);
    expect(viaRemote.code, viaRemote.stderr).toBe(0);
    expect(JSON.parse(viaRemote.stdout)).toMatchObject({ id: r.id, txHash: rtx.hash, blockNumber: rtx.block });

    // Nothing to confirm yet: the chain does not know the hash. Refused, nothing changed.
    const u = await apply('1');
    const hash = `0x${'cd'.repeat(32)}`;
    for (const run of [local, remote]) {
      const refused = await run(['withdraw', 'confirm', u.id, '--tx-hash', hash, '--yes']);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`chain 31337 does not know transaction ${hash}: check the hash and the chain`);
    }
    expect(await show(u.id)).toMatchObject({ status: 'PENDING', txHash: null });
    // Not read from the chain: skipping it, or a chain with no node to read.
    const skipped = await local(['withdraw', 'confirm', u.id, '--tx-hash', hash, '--unverified', '--reason', 'cold wallet', '--yes']);
    expect(skipped.code).toBe(2);
    expect(skipped.stderr).toContain('missing required option --block-number');
    const noNode = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', confirmations: CONFIRMATIONS }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    const noRpc = await runCli(['withdraw', 'confirm', u.id, '--tx-hash', hash, '--yes', '--db', db], { env: { CRYPTOPAY_CHAINS: noNode } });
    expect(noRpc.code).toBe(2);
    expect(noRpc.stderr).toContain('missing required option --block-number: chain 31337 (Anvil) has no rpcUrl configured, so the block of the transaction cannot be read from it');
    expect(await show(u.id)).toMatchObject({ status: 'PENDING', txHash: null });
  });

  it.skipIf(!HAS_SCRIPT)('on a terminal, confirm shows what the chain says next to what the withdrawal expects, before asking', async () => {
    const w = await apply('6');
    const tx = await payout(w.to, 6_000_000n);
    await pc.chain.mine(CONFIRMATIONS);
    const r = await runPty(['--db', db, 'withdraw', 'confirm', w.id, '--tx-hash', tx.hash, '--block-number', String(tx.block)], {
      env: env(), steps: [{ waitFor: /Go ahead\?/, send: 'y\r' }],
    });
    const text = unwrapped(stripAnsi(r.text));
    expect(r.code, text).toBe(0);
    expect(text).toMatch(new RegExp(`chain says\\s+succeeded in block ${tx.block} \\(\\S+Z\\), ${CONFIRMATIONS + 1} confirmations; 6 USDT to ${w.to}`));
    expect(text).toMatch(new RegExp(`withdrawal expects\\s+6 USDT to ${w.to} \\(token ${await pc.usdt.getAddress()}\\) in block ${tx.block}, ${CONFIRMATIONS} confirmations, not mined before its request at \\S+Z \\(5 minutes allowed for the clocks\\)`));
    expect(text).toMatch(/status\s+PENDING -> CONFIRMED/);
    expect(await show(w.id)).toMatchObject({ status: 'CONFIRMED', verification: 'verified' });

    // The hash alone: the question names the block read from the chain.
    const h = await apply('6');
    const htx = await payout(h.to, 6_000_000n);
    await pc.chain.mine(CONFIRMATIONS);
    const byHash = await runPty(['--db', db, 'withdraw', 'confirm', h.id, '--tx-hash', htx.hash], { env: env(), steps: [{ waitFor: /Go ahead\?/, send: 'y\r' }] });
    const th = unwrapped(stripAnsi(byHash.text));
    expect(byHash.code, th).toBe(0);
    expect(th).toMatch(new RegExp(`transaction\\s+${htx.hash} in block ${htx.block} \\(read from the chain\\)`));
    expect(await show(h.id)).toMatchObject({ status: 'CONFIRMED', blockNumber: htx.block });

    // A mismatch is shown and refused without asking.
    const m = await apply('6');
    const off = await payout(m.to, 7_000_000n);
    const refused = await runPty(['--db', db, 'withdraw', 'confirm', m.id, '--tx-hash', off.hash, '--block-number', String(off.block)], { env: env() });
    const t2 = unwrapped(stripAnsi(refused.text));
    expect(refused.code).toBe(1);
    expect(t2).toMatch(/verdict\s+DOES NOT MATCH: /);
    expect(t2).not.toMatch(/Go ahead\?/);
    expect(await show(m.id)).toMatchObject({ status: 'PENDING', txHash: null });

    // Remote mode asks the service's chain through the extension endpoint, and says it will wait.
    const short = await apply('5');
    const st = await payout(short.to, 5_000_000n);
    const viaRemote = await runPty(['--remote', srv.url, 'withdraw', 'confirm', short.id, '--tx-hash', st.hash, '--block-number', String(st.block)], {
      env: { CRYPTOPAY_SECRET: secret, CRYPTOPAY_MCH_ID: mchId }, steps: [{ waitFor: /Go ahead\?/, send: 'y\r' }],
    });
    const t3 = unwrapped(stripAnsi(viaRemote.text));
    expect(viaRemote.code, t3).toBe(0);
    expect(t3).toMatch(new RegExp(`chain says\\s+succeeded in block ${st.block} \\(\\S+Z\\), 1 confirmation; 5 USDT to ${short.to}`));
    expect(t3).toMatch(/status\s+PENDING, with this transaction, until its confirmations; then CONFIRMED by the watcher/);
    expect(t3).toMatch(/short of its confirmations/);
  });
});

/**
 * The refusals "the same through HTTP and through remote mode" (audit of #12): each one
 * through serve's POST /withdraw/confirm and through the CLI binary in remote mode, and a reorg
 * under serve's own watcher. Last in the file: its evm_revert takes the chain back.
 */
describe('every refusal through HTTP and remote mode; a reorg under serve', () => {
  async function refusedBoth(w: { id: string }, txHash: string, blockNumber: number, says: string) {
    const http = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash, blockNumber });
    expect(http.status, JSON.stringify(http.json)).toBe(409);
    expect(http.json).toMatchObject({ code: 0, data: null });
    expect(http.json.msg).toContain(says);
    const cli = await remote(['withdraw', 'confirm', w.id, '--tx-hash', txHash, '--block-number', String(blockNumber), '--yes']);
    expect(cli.code, cli.stderr).toBe(1);
    expect(cli.stderr).toContain(says);
    expect(await show(w.id)).toMatchObject({ status: 'PENDING', txHash: null, verification: null });
  }

  it('wrong recipient, wrong token, reverted, wrong block, an unknown hash, a hash that paid an order', async () => {
    const w = await apply('10');
    const elsewhere = pc.chain.signers[2]!.address;
    const toElsewhere = await payout(elsewhere, 10_000_000n);
    await refusedBoth(w, toElsewhere.hash, toElsewhere.block, `moved 10 USDT to ${elsewhere}; this withdrawal pays 10 USDT to ${w.to}`);

    const otherHash = await pay(pc.usdt18, w.to, 10_000_000n);
    const otherBlock = (await pc.chain.provider.getTransactionReceipt(otherHash))!.blockNumber;
    await refusedBoth(w, otherHash, otherBlock, `moved 10000000 base units of token ${await pc.usdt18.getAddress()} to ${w.to}`);

    const broke = pc.usdt.connect(pc.chain.signers[1]!) as typeof pc.usdt;
    const sent = await broke.getFunction('transfer')(w.to, 10_000_000n, { gasLimit: 100_000 });
    const reverted = (await pc.chain.provider.waitForTransaction(sent.hash))!;
    expect(reverted.status).toBe(0);
    await refusedBoth(w, sent.hash, reverted.blockNumber, `transaction ${sent.hash} failed on chain (reverted) in block ${reverted.blockNumber}: it moved nothing`);

    const good = await payout(w.to, 10_000_000n);
    await refusedBoth(w, good.hash, good.block + 1, `transaction ${good.hash} is in block ${good.block}, not in block ${good.block + 1}`);
    await refusedBoth(w, `0x${'ef'.repeat(32)}`, good.block, `chain 31337 does not know transaction 0x${'ef'.repeat(32)}`);

    // The payout's hash used for an order first: refused by the ledger, however it is spelled.
    const o = await withService(db, (s) => s.createOrder({ mchId, oid: `audit-${n}`, uid: 'u2', amount: '10' }));
    await withService(db, (s) => s.markPaid({ id: o.id, txHash: good.hash }));
    await refusedBoth(w, good.hash.toUpperCase().replace('0X', '0x'), good.block, 'is already recorded in this ledger');
  });

  it('one transfer pays one withdrawal: a second withdrawal of the same amount to the same address is refused its hash, while the first waits and after', async () => {
    const first = await apply('9');
    const r2 = await post('/api/v1/withdraw/apply', { uid: 'u1', amount: '9', to: first.to, chainId: 31337, chainType: 'EVM', token: await pc.usdt.getAddress() });
    expect(r2.status, JSON.stringify(r2.json)).toBe(200);
    const second = r2.json.data as { id: string };
    const tx = await payout(first.to, 9_000_000n);
    const accepted = await post('/api/v1/withdraw/confirm', { logId: first.id, txHash: tx.hash, blockNumber: tx.block });
    expect(accepted.json.data).toMatchObject({ status: 'PENDING', txHash: tx.hash });
    // The merchant's own withdrawal that holds it is named, with what to do.
    await refusedBoth(second, tx.hash, tx.block, `is already recorded in this ledger: it confirms withdrawal ${first.id}, and a transaction confirms at most one withdrawal (pay each withdrawal with a transaction of its own)`);
    await pc.chain.mine(CONFIRMATIONS);
    await until('CONFIRMED by the watcher', async () => (await show(first.id)).status === 'CONFIRMED', 20_000);
    await refusedBoth(second, tx.hash, tx.block, 'is already recorded in this ledger');
  });

  it('"exactly that amount" (decisions §6): a transaction moving more in all to the address is refused saying so; one split in parts that add up pays it', async () => {
    // An outsider's trial: transferBatch([to, to], [1, 1]) confirmed a withdrawal of 1 while the
    // wallet sent 2; that transaction could then confirm nothing else.
    const w = await apply('1');
    const batch = async (tos: string[], values: bigint[]) => {
      const sent = await pc.usdt.getFunction('transferBatch')(tos, values);
      const r = (await sent.wait())!;
      return { hash: r.hash as string, block: r.blockNumber as number };
    };
    const twice = await batch([w.to, w.to], [1_000_000n, 1_000_000n]);
    await refusedBoth(w, twice.hash, twice.block, `transaction ${twice.hash} moved 2 USDT in all to ${w.to}, in 2 transfers (1 USDT from ${pc.chain.signers[0]!.address}, 1 USDT from ${pc.chain.signers[0]!.address}); this withdrawal pays 1 USDT to ${w.to}`);
    // Its own amount and more to another address beside it: what went elsewhere is not this payout's.
    const other = fresh();
    const halves = await batch([w.to, other, w.to], [400_000n, 5_000_000n, 600_000n]);
    const accepted = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: halves.hash, blockNumber: halves.block });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    expect(accepted.json.data).toMatchObject({ status: 'PENDING', txHash: halves.hash });
  });

  it('withdraw verify with the node down: exit 3 locally and remotely, 503 through HTTP, nothing changed', async () => {
    const w = await apply('2');
    const tx = await payout(w.to, 2_000_000n);
    await pc.chain.mine(CONFIRMATIONS);
    const ok = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(ok.json.data).toMatchObject({ status: 'CONFIRMED' });
    const before = await show(w.id);
    proxy.mode = 'down';
    const l = await local(['withdraw', 'verify', w.id]);
    expect(l.code, l.stderr).toBe(3);
    expect(l.stderr).toContain('cannot be read');
    expect(l.stderr).toContain(`${proxy.url}/…`);
    const r = await remote(['withdraw', 'verify', w.id]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('cannot be read: its node did not answer as expected');
    expect(r.stderr).not.toContain(new URL(proxy.url).host);
    const http = await post('/api/v1/withdraw/verify', { op: 'withdraw/verify', id: w.id });
    expect(http.status).toBe(503);
    expect(http.json).toMatchObject({ code: 0, data: null });
    proxy.mode = 'pass';
    expect(await show(w.id)).toEqual(before);
  });

  it("a reorg before the depth: serve's watcher keeps the withdrawal waiting while the transaction can come back, reject refused over HTTP; followed to a replacement at the same nonce that pays it, and settled (show, audit, serve's stderr)", async () => {
    const w = await apply('7');
    const snap = await pc.chain.provider.send('evm_snapshot', []);
    const tx = await payout(w.to, 7_000_000n);
    const r = await post('/api/v1/withdraw/confirm', { logId: w.id, txHash: tx.hash, blockNumber: tx.block });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.data).toMatchObject({ status: 'PENDING', txHash: tx.hash });
    await pc.chain.provider.send('evm_revert', [snap]);
    await pc.chain.mine(CONFIRMATIONS + 1);
    await srv.waitFor(new RegExp(`withdrawal ${w.id}: a reorg took transaction ${tx.hash} out of block ${tx.block}; it can still be mined`));
    const lost = await show(w.id);
    expect(lost).toMatchObject({ status: 'PENDING', txHash: tx.hash, verification: 'confirming' });
    expect((await local(['withdraw', 'show', w.id])).stdout).toContain('it can still be mined');
    const rejected = await post('/api/v1/withdraw/reject', { id: w.id });
    expect(rejected.status).toBe(409);
    expect(rejected.json.msg).toContain('which a reorg took out of the chain but which can still be mined and pay it: it cannot be rejected');
    // The operator sends the payout again from the same account, as docs/operations.md says: it
    // takes the lost one's nonce and pays the withdrawal exactly. Once it is deep enough that the
    // lost one can never be mined, serve follows the withdrawal to it and settles it there (it
    // used to put it back to plain PENDING, to be confirmed again by hand, or rejected while the
    // user was paid: attacker review of 2026-11-24). A replacement that pays something else
    // leaves it plain PENDING (test/chains/withdraw-verify.test.ts).
    const replacement = await payout(w.to, 7_000_000n);
    await pc.chain.mine(CONFIRMATIONS);
    await until('followed and settled', async () => (await show(w.id)).status === 'CONFIRMED', 20_000);
    const done = await show(w.id);
    expect(done).toMatchObject({ status: 'CONFIRMED', txHash: replacement.hash, blockNumber: replacement.block });
    await srv.waitFor(new RegExp(`withdrawal ${w.id}: its lost transaction ${tx.hash} was replaced by ${replacement.hash}`));
    const log = JSON.parse((await local(['log', '--withdrawal', w.id, '--json'])).stdout) as { action: string; actor: string }[];
    expect(log.slice(0, 3)).toMatchObject([
      { action: 'withdrawal.confirmed', actor: 'chain:31337' },
      { action: 'withdrawal.confirmation_replaced', actor: 'chain:31337' },
      { action: 'withdrawal.confirmation_lost', actor: 'chain:31337' },
    ]);
    expect(log.some((e) => e.action === 'withdrawal.confirmation_dropped')).toBe(false);
  });
});
