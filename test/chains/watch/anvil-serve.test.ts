import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpJson, killAll, runCli, spawnServe, tempDir } from '../../server/helpers.js';
import { runCli as runCliEnv } from '../../helpers/cli.js';
import { ledgerWithOrders, pay, startPayChain, until, withService, writeChainsConfig, type PayChain } from './anvil-support.js';
import { startRpcProxy, type RpcProxy } from './rpc-proxy.js';

/**
 * The watcher end to end: a real anvil, test tokens compiled from contracts/TestUSDT.sol, and
 * real `cryptopay serve` processes (run `npm run build` first) reading it over JSON-RPC.
 */

const tmp = tempDir();
let pc: PayChain;
let proxy: RpcProxy;
let n = 0;
const newDb = () => join(tmp.dir, `ledger-${++n}.db`);

beforeAll(async () => {
  pc = await startPayChain();
  proxy = await startRpcProxy(pc.chain.rpcUrl);
});
afterEach(() => {
  killAll();
  proxy.mode = 'pass';
  proxy.maxRange = Infinity;
  proxy.rateLimited = 0;
  proxy.beforeLogs = undefined;
  proxy.behind = 0;
});
afterAll(async () => {
  await proxy?.close();
  await pc?.stop();
  tmp.cleanup();
});

async function config(opts: { rpcUrl?: string; confirmations?: number } = {}) {
  const head = await pc.chain.provider.getBlockNumber();
  return writeChainsConfig(tmp.dir, {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: opts.rpcUrl ?? pc.chain.rpcUrl, confirmations: opts.confirmations ?? 3, pollInterval: 200, startBlock: head }],
    tokens: [
      { chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 },
      { chainId: 31337, address: await pc.usdt18.getAddress(), symbol: 'USDT18', asset: 'USDT', decimals: 18 },
    ],
  });
}

const status = async (url: string, id: string) => (await httpJson(url, `/api/v1/order/${id}/status`)).json?.data;
const paid = (url: string, id: string) => until(`order ${id} PAID`, async () => (await status(url, id)) === 'PAID');

async function ledgerCheck(db: string, chains: string) {
  const r = await runCli(['ledger', 'check', '--db', db]);
  expect(r.stderr + r.stdout, 'ledger check').not.toMatch(/violat|negative|not 0/i);
  expect(r.code).toBe(0);
  const c = await import('../../helpers/cli.js').then((m) => m.runCli(['chains', '--json', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } }));
  return JSON.parse(c.stdout) as { chainId: string; watch: Record<string, unknown> }[];
}

describe('serve watches the chain', () => {
  it('exact, under then top-up, over, two in one block, an 18-decimal token; an unknown token ignored', async () => {
    const db = newDb();
    const chains = await config();
    const { orders } = await ledgerWithOrders(db, ['10', '10', '10', '10', '1']);
    const [exact, under, over, oneBlock, dec18] = orders.map((o) => ({ id: o.id, to: o.addresses.EVM! }));
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337 \(Anvil\) at http:\/\/127\.0\.0\.1:\d+, 3 confirmations, every 200 ms/);

    await pay(pc.usdt, exact!.to, 10_000_000n);
    await pay(pc.usdt, under!.to, 4_000_000n);
    await pay(pc.usdt, over!.to, 12_500_001n);
    await pay(pc.stranger, exact!.to, 99_000_000n);
    // Two transfers in one block.
    const p = pc.chain.provider;
    await p.send('evm_setAutomine', [false]);
    const payer = pc.chain.signers[0]!;
    const nonce = await p.getTransactionCount(payer.address, 'pending');
    await pc.usdt.getFunction('transfer')(oneBlock!.to, 6_000_000n, { nonce });
    await pc.usdt.getFunction('transfer')(oneBlock!.to, 4_000_000n, { nonce: nonce + 1 });
    await p.send('evm_mine', []);
    await p.send('evm_setAutomine', [true]);
    await pay(pc.usdt18, dec18!.to, 1_000_000_999_999_999_999n);

    // Seen but short of 3 confirmations: still PENDING_PAY, listed as k of n.
    const show = await until('the 18-decimal payment seen', async () => {
      const r = await runCliEnv(['order', 'show', dec18!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
      return /seen .*: 1 of 3 confirmations/.test(r.stdout) && r.stdout;
    });
    expect(show).toMatch(/status +PENDING_PAY/);
    expect(await status(srv.url, dec18!.id)).toBe('PENDING_PAY');

    await pc.chain.mine(2);
    for (const o of [exact, over, oneBlock, dec18]) await paid(srv.url, o!.id);
    expect(await status(srv.url, under!.id)).toBe('PENDING_PAY');
    await pay(pc.usdt, under!.to, 6_000_000n);
    await pc.chain.mine(2);
    await paid(srv.url, under!.id);

    await withService(db, async (s) => {
      expect(await s.getOrder(exact!.id)).toMatchObject({ paidAmount: '10' });
      expect(await s.getOrder(under!.id)).toMatchObject({ paidAmount: '10' });
      expect(await s.getOrder(over!.id)).toMatchObject({ paidAmount: '12.500001' });
      expect(await s.getOrder(oneBlock!.id)).toMatchObject({ paidAmount: '10' });
      expect(await s.getOrder(dec18!.id)).toMatchObject({ paidAmount: '1' });
      expect(await s.balance('user-2')).toMatchObject({ available: '12.500001' });
    });
    const watch = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch;
    expect(watch).toMatchObject({ lastError: null, leaseHolder: expect.stringContaining(':'), lag: expect.any(Number) });
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  // A merchant integration trial and a new-user trial (sessions 23, 24): support could not tell
  // where a payment came from (a refund goes back there), nor find an order by the wallet a
  // customer says it paid from.
  it("who paid: order show names the wallet the tokens came from, and order find finds the order by it, in any case", async () => {
    const db = newDb();
    const chains = await config({ confirmations: 1 });
    const { orders } = await ledgerWithOrders(db, ['10', '10']);
    const [o, other] = orders;
    const customer = pc.chain.signers[2]!;
    const asCustomer = pc.usdt.connect(customer) as typeof pc.usdt;
    await (await asCustomer.getFunction('mint')(customer.address, 10_000_000n)).wait();
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    const sent = await (await asCustomer.getFunction('transfer')(o!.addresses.EVM!, 10_000_000n)).wait();
    await pay(pc.usdt, other!.addresses.EVM!, 10_000_000n);
    await paid(srv.url, o!.id);
    await paid(srv.url, other!.id);
    const env = { env: { CRYPTOPAY_CHAINS: chains } };
    const [json, text, found, foundJson] = await Promise.all([
      runCliEnv(['order', 'show', o!.id, '--db', db, '--json'], env),
      runCliEnv(['order', 'show', o!.id, '--db', db], env),
      runCliEnv(['order', 'find', customer.address.toLowerCase(), '--db', db], env),
      runCliEnv(['order', 'find', customer.address, '--db', db, '--json'], env),
    ]);
    expect(JSON.parse(json.stdout).onChain).toEqual([expect.objectContaining({ txHash: sent!.hash, status: 'counted', from: customer.address })]);
    expect(text.stdout).toMatch(new RegExp(`^payment +10 tx ${sent!.hash} from ${customer.address}$`, 'm'));
    expect(JSON.parse(foundJson.stdout).orders.map((x: { id: string; matchedBy: string[] }) => [x.id, x.matchedBy])).toEqual([[o!.id, ['payer']]]);
    expect(found.stdout).toMatch(new RegExp(`^paid from\t${o!.id}\t`, 'm'));
    expect(found.stdout).not.toContain(other!.id);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('two Transfer logs in one transaction are two payments of one order', async () => {
    const db = newDb();
    const chains = await config({ confirmations: 1 });
    const { orders } = await ledgerWithOrders(db, ['10']);
    const oneTx = orders[0]!;
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337 \(Anvil\) at http:\/\/127\.0\.0\.1:\d+, 1 confirmation, every 200 ms/);
    const r = await (await pc.usdt.getFunction('transferBatch')([oneTx.addresses.EVM!, oneTx.addresses.EVM!], [3_000_000n, 7_000_000n])).wait();
    await paid(srv.url, oneTx.id);
    await withService(db, async (s) => {
      const o = await s.getOrder(oneTx.id);
      expect(o).toMatchObject({ status: 'PAID', paidAmount: '10' });
      expect(o.payments.map((x) => [x.txHash, x.amount])).toEqual([[r.hash, '3'], [r.hash, '7']]);
      expect(await s.balance('user-0')).toMatchObject({ available: '10' });
    });
    await ledgerCheck(db, chains);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('a reorg before the confirmations (evm_revert, then anvil_reorg) leaves nothing counted', async () => {
    const db = newDb();
    const chains = await config({ confirmations: 4 });
    const { orders } = await ledgerWithOrders(db, ['5', '5']);
    const [a, b] = orders;
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    const p = pc.chain.provider;

    const snap = await p.send('evm_snapshot', []);
    await pay(pc.usdt, a!.addresses.EVM!, 5_000_000n);
    await until('payment a seen', async () => /1 of 4 confirmations/.test((await runCliEnv(['order', 'show', a!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));
    await p.send('evm_revert', [snap]);
    await pc.chain.mine(6);
    await until('payment a dropped', async () => !/seen/.test((await runCliEnv(['order', 'show', a!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));

    await pay(pc.usdt, b!.addresses.EVM!, 5_000_000n);
    await until('payment b seen', async () => /of 4 confirmations/.test((await runCliEnv(['order', 'show', b!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));
    // Replace the last 2 blocks (the payment's among them) with empty ones.
    await p.send('anvil_reorg', [2, []]);
    await pc.chain.mine(6);
    await until('payment b dropped', async () => !/seen/.test((await runCliEnv(['order', 'show', b!.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));

    expect(await status(srv.url, a!.id)).toBe('PENDING_PAY');
    expect(await status(srv.url, b!.id)).toBe('PENDING_PAY');
    await srv.waitFor(/reorg, rescanning from block/);
    await withService(db, async (s) => {
      expect((await s.getOrder(a!.id)).payments).toEqual([]);
      expect((await s.getOrder(b!.id)).payments).toEqual([]);
    });
    await ledgerCheck(db, chains);
  });

  it('kill -9 between seen and counted: the next serve counts it exactly once', async () => {
    const db = newDb();
    const chains = await config();
    const { orders } = await ledgerWithOrders(db, ['7']);
    const o = orders[0]!;
    const first = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await first.waitFor(/watching chain 31337/);
    await pay(pc.usdt, o.addresses.EVM!, 7_000_000n);
    await until('seen', async () => /1 of 3 confirmations/.test((await runCliEnv(['order', 'show', o.id, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } })).stdout));
    first.child.kill('SIGKILL');
    await first.exited;
    await pc.chain.mine(3);
    const second = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await paid(second.url, o.id);
    await pc.chain.mine(3);
    await new Promise((r) => setTimeout(r, 800));
    await withService(db, async (s) => {
      expect(await s.getOrder(o.id)).toMatchObject({ status: 'PAID', paidAmount: '7' });
      expect(await s.balance('user-0')).toMatchObject({ available: '7' });
    });
    await ledgerCheck(db, chains);
  });

  it('two serve processes on one ledger: one scans, the other takes over when it dies', async () => {
    const db = newDb();
    const chains = await config();
    const { orders } = await ledgerWithOrders(db, ['2', '3']);
    const a = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    const b = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await b.waitFor(/this process stands by|watching chain/);
    await pay(pc.usdt, orders[0]!.addresses.EVM!, 2_000_000n);
    await pc.chain.mine(2);
    await paid(a.url, orders[0]!.id);
    expect(await status(b.url, orders[0]!.id)).toBe('PAID');
    const holder = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch.leaseHolder as string;
    const [dead, alive] = holder.includes(`:${a.child.pid}:`) ? [a, b] : [b, a];
    // The other one stood by: it found the lease held by the scanning process and said so.
    await alive.waitFor(new RegExp(`chain 31337: scanned by ${holder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; this process stands by`));
    expect(dead.stderr()).not.toMatch(/this process stands by/);
    dead.child.kill('SIGKILL');
    await dead.exited;
    await pay(pc.usdt, orders[1]!.addresses.EVM!, 3_000_000n);
    await pc.chain.mine(2);
    await paid(alive.url, orders[1]!.id);
    await withService(db, async (s) => {
      expect(await s.getOrder(orders[0]!.id)).toMatchObject({ paidAmount: '2' });
      expect(await s.getOrder(orders[1]!.id)).toMatchObject({ paidAmount: '3' });
    });
    const after = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch;
    expect(after.leaseHolder).toContain(`:${alive.child.pid}:`);
  });

  it('a node down, then answering garbage, then back: serve keeps serving, chains shows the error, nothing is missed', async () => {
    const db = newDb();
    const chains = await config({ rpcUrl: proxy.url });
    const { orders } = await ledgerWithOrders(db, ['4']);
    const o = orders[0]!;
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    proxy.mode = 'down';
    await pay(pc.usdt, o.addresses.EVM!, 4_000_000n);
    await pc.chain.mine(3);
    await srv.waitFor(/chain 31337: .*cannot be reached/);
    expect(await status(srv.url, o.id)).toBe('PENDING_PAY');
    const down = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch;
    expect(down.lastError).toMatch(/cannot be reached/);
    expect(down.rpc).toBe(proxy.url);
    proxy.mode = 'garbage';
    await srv.waitFor(/not JSON/);
    proxy.mode = 'pass';
    await paid(srv.url, o.id);
    await srv.waitFor(/the node answers again/);
    const back = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch;
    expect(back.lastError).toBeNull();
  });

  it('a node that refuses large eth_getLogs ranges: the range shrinks and nothing is missed', async () => {
    const db = newDb();
    const head = await pc.chain.provider.getBlockNumber();
    const { orders } = await ledgerWithOrders(db, ['1', '1', '1']);
    for (const o of orders) {
      await pay(pc.usdt, o.addresses.EVM!, 1_000_000n);
      await pc.chain.mine(40);
    }
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: proxy.url, confirmations: 3, pollInterval: 200, startBlock: head }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    proxy.maxRange = 10;
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    for (const o of orders) await paid(srv.url, o.id);
    expect(proxy.refusedRanges).toBeGreaterThan(0);
    await ledgerCheck(db, chains);
  });

  it('a rate-limited node (-32005 "limit exceeded"): serve backs off without shrinking the range, and misses nothing', async () => {
    const db = newDb();
    const chains = await config({ rpcUrl: proxy.url });
    const { orders } = await ledgerWithOrders(db, ['3']);
    const o = orders[0]!;
    await pay(pc.usdt, o.addresses.EVM!, 3_000_000n);
    await pc.chain.mine(3);
    proxy.rateLimited = 2;
    proxy.spans.length = 0;
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/chain 31337: .*limit exceeded; retrying in \d+ ms/);
    await paid(srv.url, o.id);
    expect(proxy.rateLimited).toBe(0);
    // Every range asked for covers the whole gap: the span was never cut for a rate limit.
    expect(new Set(proxy.spans).size).toBe(1);
    await ledgerCheck(db, chains);
  });

  /** A serve at 2 confirmations whose one order (5 USDT, user-0) is paid and counted. */
  async function countedUnderServe(opts: { rpcUrl?: string } = {}) {
    const db = newDb();
    const chains = await config({ confirmations: 2, ...opts });
    const { orders } = await ledgerWithOrders(db, ['5']);
    const o = orders[0]!;
    const cli = (args: string[]) => runCliEnv([...args, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    const tx = await pay(pc.usdt, o.addresses.EVM!, 5_000_000n);
    await pc.chain.mine(1);
    await paid(srv.url, o.id);
    return { db, chains, o, cli, srv, tx };
  }

  // An outside attacker review: a node 4 blocks behind for seconds was taken for a deep reorg of
  // a counted payment, and the alarm held the user's money after the node had caught up.
  it('a node that falls behind the blocks already scanned, then catches up: waited for, shown in chains meanwhile; no reorg, no alarm, the money free', async () => {
    const { db, chains, o, cli, srv } = await countedUnderServe({ rpcUrl: proxy.url });
    proxy.behind = 4;
    await srv.waitFor(/chain 31337: the node is behind the blocks already scanned \(its head is block \d+; block \d+ was scanned\); nothing changed, waiting for it to catch up/);
    const meanwhile = JSON.parse((await cli(['chains', '--json'])).stdout).find((c: { chainId: string }) => c.chainId === '31337').watch;
    expect(meanwhile).toMatchObject({ deepReorg: null, lastError: expect.stringMatching(/the node is behind the blocks already scanned/) });
    proxy.behind = 0;
    await pc.chain.mine(2);
    await srv.waitFor(/chain 31337: the node answers again/);
    // A few more ticks over the blocks it had lost sight of.
    await pc.chain.mine(2);
    await new Promise((r) => setTimeout(r, 800));
    expect(srv.stderr()).not.toMatch(/reorg/i);
    const after = JSON.parse((await cli(['chains', '--json'])).stdout).find((c: { chainId: string }) => c.chainId === '31337').watch;
    expect(after).toMatchObject({ deepReorg: null, lastError: null });
    const log = JSON.parse((await cli(['log', '--order', o.id, '--json'])).stdout) as { action: string }[];
    expect(log.map((e) => e.action)).not.toContain('chain.deep_reorg');
    const apply = await cli(['withdraw', 'apply', '--uid', 'user-0', '--amount', '1', '--chain-id', '31337', '--token', await pc.usdt.getAddress(), '--to', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(await status(srv.url, o.id)).toBe('PAID');
    await ledgerCheck(db, chains);
  });

  it('a reorg deeper than the confirmations: reported in chains (table, --json), on stderr and in the audit; nobody un-credited; acknowledged with a reason', async () => {
    const { db, chains, o, cli, srv, tx } = await countedUnderServe();
    // Three blocks replaced, the payment's among them, after it was counted at 2 confirmations.
    await pc.chain.provider.send('anvil_reorg', [3, []]);
    await pc.chain.mine(2);
    await srv.waitFor(/chain 31337: DEEP REORG: 1 counted payment/);

    const table = await cli(['chains']);
    expect(table.code).toBe(0);
    // Without a terminal the table is tab-separated, one chain a line: its deep reorg column.
    const lines = table.stdout.split('\n');
    const row = lines.find((l) => l.startsWith('31337\t'))!.split('\t');
    expect(row[lines[0]!.split('\t').indexOf('deep reorg')]).toMatch(/^YES \d{4}-\d\d-\d\dT/);
    expect(table.stderr).toMatch(new RegExp(`chain 31337: DEEP REORG .*reorg deeper than 2 confirmations: 1 counted payment.*tx ${tx}`));
    expect(table.stderr).toContain('cryptopay chains --ack-reorg 31337 --reason');
    const json = await cli(['chains', '--json']);
    expect(JSON.parse(json.stdout).find((c: { chainId: string }) => c.chainId === '31337').watch.deepReorg).toMatch(/reorg deeper than 2 confirmations/);
    const log = JSON.parse((await cli(['log', '--order', o.id, '--json'])).stdout) as { action: string; actor: string; detail: { payments: { txHash: string }[] } }[];
    expect(log.find((e) => e.action === 'chain.deep_reorg')).toMatchObject({ actor: 'chain:31337', detail: { payments: [{ txHash: tx }] } });
    expect(await status(srv.url, o.id)).toBe('PAID');
    await withService(db, async (s) => expect(await s.balance('user-0')).toMatchObject({ available: '5' }));
    // Credited, but nothing leaves on it until it is checked: no withdrawal for its user, no refund of its order.
    const apply = ['withdraw', 'apply', '--uid', 'user-0', '--amount', '1', '--chain-id', '31337', '--token', await pc.usdt.getAddress(), '--to', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'];
    const held = await cli(apply);
    expect(held.code, held.stderr).toBe(1);
    expect(held.stderr).toContain(`user user-0 was credited by a payment that a reorg deeper than chain 31337's confirmations took off the chain (order ${o.id}, transaction ${tx}): nothing leaves for this user until the service's operator has checked it (cryptopay chains --ack-reorg 31337)`);
    const refund = await cli(['refund', '--id', o.id, '--amount', '1', '--yes']);
    expect(refund.code).toBe(1);
    expect(refund.stderr).toContain(`order ${o.id} was paid by a payment that a reorg deeper than chain 31337's confirmations took off the chain`);
    await withService(db, async (s) => expect(await s.balance('user-0')).toMatchObject({ available: '5', held: '0' }));

    // Acknowledged once checked: a reason is required; the warning goes, the audit keeps it.
    expect((await cli(['chains', '--ack-reorg', '31337'])).code).toBe(2);
    const ack = await cli(['chains', '--ack-reorg', '31337', '--reason', 'checked: the payer resent', '--operator', 'alice']);
    expect(ack.code, ack.stderr).toBe(0);
    const after = await cli(['chains', '--json']);
    expect(after.stderr).not.toMatch(/DEEP REORG/);
    expect(JSON.parse(after.stdout).find((c: { chainId: string }) => c.chainId === '31337').watch.deepReorg).toBeNull();
    const all = JSON.parse((await cli(['log', '--json'])).stdout) as { action: string; actor: string; detail: Record<string, unknown> }[];
    expect(all.find((e) => e.action === 'chain.deep_reorg_acknowledged')).toMatchObject({ actor: 'alice', detail: { chainId: '31337', reason: 'checked: the payer resent' } });
    const again = await cli(['chains', '--ack-reorg', '31337', '--reason', 'twice']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no deep reorg to acknowledge/);
    // Checked: the user's withdrawal is taken again.
    const applied = await cli(apply);
    expect(applied.code, applied.stderr).toBe(0);
    await withService(db, async (s) => expect(await s.balance('user-0')).toMatchObject({ available: '4', held: '1' }));
    await ledgerCheck(db, chains);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('a reorg that replaces a counted payment\'s block but mines the same transaction again at depth: no deep reorg alarm, credited once', async () => {
    const { db, chains, o, cli, srv, tx } = await countedUnderServe();
    const p = pc.chain.provider;
    const raw = (await p.send('eth_getRawTransactionByHash', [tx])) as string;
    const before = await p.send('eth_getTransactionReceipt', [tx]);
    // The payment's block and the one after it replaced; the same signed transaction is mined
    // again in the first of the new ones: the transfer is still on the chain, at depth.
    await p.send('anvil_reorg', [2, [[raw, 0]]]);
    const after = await p.send('eth_getTransactionReceipt', [tx]);
    expect(after.blockHash).not.toBe(before.blockHash);
    await pc.chain.mine(2);
    await srv.waitFor(/chain 31337: reorg/);
    await srv.waitFor(new RegExp(`mined again.*${tx}`));
    expect(srv.stderr()).not.toMatch(/DEEP REORG/);
    const json = await cli(['chains', '--json']);
    expect(json.stderr).not.toMatch(/DEEP REORG/);
    expect(JSON.parse(json.stdout).find((c: { chainId: string }) => c.chainId === '31337').watch.deepReorg).toBeNull();
    const log = JSON.parse((await cli(['log', '--order', o.id, '--json'])).stdout) as { action: string; detail: { payments: { txHash: string; blockNumber: number; nowInBlock: number }[] } }[];
    expect(log.map((e) => e.action)).not.toContain('chain.deep_reorg');
    expect(log.find((e) => e.action === 'chain.payment_mined_again')?.detail.payments).toEqual([
      expect.objectContaining({ txHash: tx, blockNumber: Number(before.blockNumber), nowInBlock: Number(after.blockNumber) }),
    ]);
    expect(await status(srv.url, o.id)).toBe('PAID');
    await withService(db, async (s) => {
      expect(await s.balance('user-0')).toMatchObject({ available: '5' });
      expect((await s.getOrder(o.id)).payments).toHaveLength(1);
    });
    await ledgerCheck(db, chains);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);
  });

  it('kill -9 in the middle of a range: the next serve resumes from the last stored range, missing and double-counting nothing', async () => {
    const db = newDb();
    const head = await pc.chain.provider.getBlockNumber();
    const amounts = ['1', '2', '3', '4', '5', '6'];
    const { orders } = await ledgerWithOrders(db, amounts);
    for (const [i, o] of orders.entries()) {
      await pay(pc.usdt, o.addresses.EVM!, BigInt(amounts[i]!) * 1_000_000n);
      await pc.chain.mine(30);
    }
    await pc.chain.mine(3);
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: proxy.url, confirmations: 3, pollInterval: 200, startBlock: head }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    proxy.maxRange = 10;
    // The 12th eth_getLogs is held unanswered: the process dies with that range in flight.
    let inFlight!: () => void;
    const held = new Promise<void>((r) => (inFlight = r));
    proxy.beforeLogs = (n) => (n >= 12 ? (inFlight(), new Promise<void>(() => {})) : Promise.resolve());
    const first = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await held;
    first.child.kill('SIGKILL');
    await first.exited;
    const midway = (await ledgerCheck(db, chains)).find((c) => c.chainId === '31337')!.watch;
    expect(midway.scannedTo as number).toBeGreaterThan(head);
    expect(midway.scannedTo as number).toBeLessThan(head + 180);
    proxy.beforeLogs = undefined;
    const second = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    for (const o of orders) await paid(second.url, o.id);
    await withService(db, async (s) => {
      for (const [i, o] of orders.entries()) {
        expect(await s.getOrder(o.id)).toMatchObject({ status: 'PAID', paidAmount: amounts[i] });
        expect(await s.balance(`user-${i}`)).toMatchObject({ available: amounts[i] });
      }
    });
    await ledgerCheck(db, chains);
    expect((await second.stop()).code, second.stderr()).toBe(0);
  });

  it('with no startBlock, a chain is scanned from the head when first watched, and from its cursor after a restart', async () => {
    const db = newDb();
    const { orders } = await ledgerWithOrders(db, ['1', '2', '3']);
    const [before, during, whileDown] = orders;
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: pc.chain.rpcUrl, confirmations: 2, pollInterval: 200 }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    const cli = (args: string[]) => runCliEnv([...args, '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
    // Paid before the ledger ever watched this chain: older than the start, never scanned.
    await pay(pc.usdt, before!.addresses.EVM!, 1_000_000n);
    await pc.chain.mine(2);
    const headAtStart = await pc.chain.provider.getBlockNumber();
    const srv = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await srv.waitFor(/watching chain 31337/);
    await until('the cursor made', async () => {
      const c = JSON.parse((await cli(['chains', '--json'])).stdout).find((x: { chainId: string }) => x.chainId === '31337');
      return c.watch.scannedTo !== null && c.watch.scannedTo >= headAtStart;
    });
    await pay(pc.usdt, during!.addresses.EVM!, 2_000_000n);
    await pc.chain.mine(1);
    await paid(srv.url, during!.id);
    expect((await srv.stop()).code, srv.stderr()).toBe(0);

    // Stopped: a payment and more blocks. The next start resumes from its cursor, not the new head.
    await pay(pc.usdt, whileDown!.addresses.EVM!, 3_000_000n);
    await pc.chain.mine(5);
    const again = await spawnServe(db, { CRYPTOPAY_CHAINS: chains });
    await paid(again.url, whileDown!.id);
    expect(await status(again.url, before!.id)).toBe('PENDING_PAY');
    expect(JSON.parse((await cli(['order', 'show', before!.id, '--json'])).stdout)).toMatchObject({ paidAmount: '0', onChain: [] });
    await ledgerCheck(db, chains);
    expect((await again.stop()).code, again.stderr()).toBe(0);
  });

  it('serve --no-watch does not watch', async () => {
    const db = newDb();
    const chains = await config();
    await ledgerWithOrders(db, ['1']);
    const { spawn } = await import('node:child_process');
    const { BIN, cliEnv } = await import('../../helpers/cli.js');
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-watch', '--db', db], { env: cliEnv({ CRYPTOPAY_CHAINS: chains }) });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await until('serving', async () => /cryptopay serving/.test(err));
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    expect(err).not.toMatch(/watching chain/);
  });
});

describe('cryptopay watch on a terminal', () => {
  it('draws a progress bar while it catches up, and clears it', async () => {
    const db = newDb();
    const head = await pc.chain.provider.getBlockNumber();
    await pc.chain.mine(600);
    await ledgerWithOrders(db, ['1']);
    const chains = writeChainsConfig(tmp.dir, {
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: proxy.url, confirmations: 3, pollInterval: 200, startBlock: head }],
      tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    // Small ranges, so that catching up takes many steps.
    proxy.maxRange = 4;
    const { spawn } = await import('node:child_process');
    const { BIN, cliEnv } = await import('../../helpers/cli.js');
    // script(1) gives the command a pseudo-terminal, as an operator's shell would.
    const child = spawn('script', ['-qfec', `${process.execPath} ${BIN} watch --db ${db}`, '/dev/null'], { env: cliEnv({ CRYPTOPAY_CHAINS: chains }) });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await until('caught up', async () => {
      const r = await runCliEnv(['chains', '--json', '--db', db], { env: { CRYPTOPAY_CHAINS: chains } });
      const c = (JSON.parse(r.stdout) as { chainId: string; watch: { lag: number | null } }[]).find((x) => x.chainId === '31337');
      return c?.watch.lag === 0;
    }, 60_000);
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    expect(out).toMatch(/chain 31337 \[#*\.*\] block \d+ of \d+/);
    expect(out).toContain('\x1b[2K');
  });
});
