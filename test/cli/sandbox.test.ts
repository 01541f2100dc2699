import { execFileSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { Contract, Interface, JsonRpcProvider, Network } from 'ethers';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_WALLET, TEST_EVM_0 } from '../helpers/service.js';
import { BIN, definedEnv } from '../helpers/cli.js';
import { killAll, spawnServe, type Spawned } from '../server/helpers.js';
import { CLEAN_ENV, sandbox, SLOW, type Sandbox } from './_support.js';

/**
 * `serve --dev` and `dev pay` end to end: the real binary (dist/, `npm run build` first), a real
 * anvil from the npm package, real ledger files. Every serve is stopped by the test; anvil must
 * stop with it.
 */

const ERC20 = ['function balanceOf(address) view returns (uint256)', 'event Transfer(address indexed from, address indexed to, uint256 value)'];

afterEach(() => killAll());

function serveEnv(s: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { XDG_DATA_HOME: `${s.dir}/xdg`, XDG_CONFIG_HOME: `${s.dir}/config`, ...extra };
}

async function serveDev(s: Sandbox, extra: Record<string, string> = {}, args: string[] = []): Promise<Spawned> {
  const srv = await spawnServe(s.db, serveEnv(s, extra), ['--dev', ...args]);
  // The last lines of the announcement, with or without a merchant created.
  await srv.waitFor(/Sign your own bodies:\n.*\n\n|sign requests with a merchant's secret: .*\n/, 'stderr', 60_000);
  return srv;
}

interface Announced {
  rpcUrl: string;
  token: string;
}

function announced(srv: Spawned): Announced {
  const err = srv.stderr();
  const chain = /^ {2}chain {3}31337 \(development, anvil\) at (http:\/\/127\.0\.0\.1:\d+)$/m.exec(err);
  const token = /^ {2}token {3}test USDT (0x[0-9a-fA-F]{40}) /m.exec(err);
  expect(chain, err).not.toBeNull();
  expect(token, err).not.toBeNull();
  return { rpcUrl: chain![1]!, token: token![1]! };
}

function provider(rpcUrl: string): JsonRpcProvider {
  const network = Network.from(31337);
  return new JsonRpcProvider(rpcUrl, network, { staticNetwork: network, cacheTimeout: -1 });
}

async function tokenBalance(a: Announced, holder: string): Promise<bigint> {
  const p = provider(a.rpcUrl);
  try {
    return (await new Contract(a.token, ERC20, p).getFunction('balanceOf')(holder)) as bigint;
  } finally {
    p.destroy();
  }
}

/** The ledger's invariants hold after what the sandbox did (decisions: `ledger check` after each chain test). */
async function ledgerCheck(s: Sandbox): Promise<void> {
  const r = await s.run(['ledger', 'check']);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

async function until(probe: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True once nothing listens at rpcUrl any more. */
async function refuses(rpcUrl: string, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    try {
      await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', signal: AbortSignal.timeout(1000) });
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('serve --dev', () => {
  it(
    'creates the public test merchant, a chain and a token; the printed curl creates an order and dev pay pays it; the chain survives a restart',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const err = srv.stderr();
      const a = announced(srv);

      // The wallet is named, never spelled out (decisions §10).
      expect(err).toContain('the public anvil test mnemonic: PUBLIC AND UNSAFE');
      expect(err).not.toMatch(/test test|junk/);
      // How to sign is shown without the secret on the command line, where the shell's history
      // would keep it (an outside review): a hidden read into the environment.
      expect(err).toMatch(/^ {2}read -rs CRYPTOPAY_SECRET && export CRYPTOPAY_SECRET && \S+ sign --fill --mch-id M\d+ /m);
      expect(err).not.toContain('CRYPTOPAY_SECRET=');
      const mchId = /^ {2}mchId {3}(M\d+)$/m.exec(err)?.[1];
      const secret = /^ {2}secret {2}(sk_\S+)$/m.exec(err)?.[1];
      expect(mchId, err).toBeDefined();
      expect(secret, err).toBeDefined();
      const merchant = await s.json(['merchant', 'show', mchId!]);
      expect(merchant).toMatchObject({ evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });

      // The signed curl it printed, sent as printed.
      const curl = /^ {2}curl -s -X POST (\S+) -H 'Content-Type: application\/json' -d '(.+)'$/m.exec(err);
      expect(curl, err).not.toBeNull();
      const res = await fetch(curl![1]!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: curl![2]! });
      const created = (await res.json()) as { code: number; data: { id: string; oid: string; amount: string; addresses: { EVM: string } } };
      expect(created).toMatchObject({ code: 1, data: { amount: '12.5', addresses: { EVM: TEST_EVM_0 } } });
      const order = created.data;

      // The page a payer gets: test money only, and only the development chain. It listed
      // Ethereum, BNB Smart Chain and Polygon with their real USDT contracts, for an address whose
      // key anyone has (found by an attacker review).
      const pageText = await (await fetch(`${curl![1]!.replace(/\/api\/v1\/order$/, '')}/pay/${order.id}`)).text();
      expect(pageText).toContain('Test money only');
      expect(pageText).toContain('Development (anvil)');
      expect(pageText).toContain(a.token);
      for (const real of ['Ethereum', 'BNB Smart Chain', 'Polygon', '0xdAC17F958D2ee523a2206206994597C13D831ec7', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t']) expect(pageText).not.toContain(real);
      // As it was run (from the checkout here): a line to paste, not `cryptopay`, which npm ci puts on no PATH.
      expect(err).toContain(`  ./bin/cryptopay --db ${s.db} dev pay <order id> [--amount A]`);

      // The registry of that ledger, as every other command sees it.
      const chains = await s.json<{ chainId: string; development?: boolean; rpcUrl?: string; watch: { rpc: string | null }; confirmations: number; tokens: { address: string; decimals: number }[] }[]>(['chains']);
      expect(chains.find((c) => c.chainId === '31337')).toMatchObject({ development: true, watch: { rpc: a.rpcUrl }, confirmations: 1, tokens: [{ address: a.token, decimals: 6 }] });
      // Only the redacted form: an rpcUrl often holds the node provider's key (an attacker review found it whole here).
      expect(chains.every((c) => !('rpcUrl' in c))).toBe(true);
      expect(chains.filter((c) => c.development).map((c) => c.chainId)).toEqual(['31337']);
      expect(await s.ok(['chains'])).toMatch(/^31337\tEVM\tDevelopment \(anvil\) \[development: test money only\]\t1\t.*\tUSDT 0x/m);

      // dev pay: what the order lacks, by default; then an extra amount from another account.
      expect(await tokenBalance(a, order.addresses.EVM)).toBe(0n);
      const paid = await s.json(['dev', 'pay', order.id]);
      expect(paid).toMatchObject({ order: order.id, chainId: '31337', token: a.token, to: order.addresses.EVM, amount: '12.5', asset: 'USDT' });
      expect(paid.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await tokenBalance(a, order.addresses.EVM)).toBe(12_500_000n);
      const p = provider(a.rpcUrl);
      const receipt = await p.getTransactionReceipt(paid.txHash);
      p.destroy();
      const iface = new Interface(ERC20);
      const transfers = receipt!.logs.map((l) => iface.parseLog(l)!).map((l) => [l.args[0], l.args[1], l.args[2]]);
      expect(transfers).toEqual([[paid.from, order.addresses.EVM, 12_500_000n]]);
      // The payer is never an address the ledger hands out to orders.
      expect(paid.from).not.toBe(order.addresses.EVM);

      // By its oid, as order show takes it (a new user's `dev pay A-1` was "Order not found").
      const more = await s.json(['dev', 'pay', order.oid, '--amount', '0.75', '--from', '2']);
      expect(more.from).not.toBe(paid.from);
      expect(await tokenBalance(a, order.addresses.EVM)).toBe(13_250_000n);

      // An expired order: sent anyway, said first, and counted late.
      const lateOrder = await s.json<{ id: string; expiredAt: number }>(['order', 'create', '--oid', 'LATE-1', '--uid', 'user-2', '--amount', '2', '--expired-at', '1s']);
      await new Promise((r) => setTimeout(r, Math.max(0, lateOrder.expiredAt - Date.now() + 1100)));
      const late = await s.run(['dev', 'pay', lateOrder.id, '--wait', '30', '--json']);
      expect(late.code, late.stderr).toBe(0);
      expect(late.stderr).toBe(`order ${lateOrder.id} expired at ${new Date(lateOrder.expiredAt).toISOString()}: this payment arrives late; the watcher counts it as late (late: true in order show and in the order.paid callback)\n`);
      expect(await s.json(['order', 'show', lateOrder.id])).toMatchObject({ status: 'PAID', late: true });
      const onTime = await s.json<{ id: string }>(['order', 'create', '--oid', 'ONTIME-1', '--uid', 'user-2', '--amount', '1']);
      expect(await s.run(['dev', 'pay', onTime.id, '--json'])).toMatchObject({ code: 0, stderr: '' });

      // Withdrawals on the dev chain pass the registry's checks like any chain's.
      await s.json(['balance', 'adjust', 'user-1', '--amount', '+3', '--reason', 'test', '--yes']);
      // Not to the order's own address (the dev wallet's index 0, TEST_EVM_0): the watcher would
      // count the payout as a payment to that order, so apply refuses it.
      expect(order.addresses.EVM).toBe(TEST_EVM_0);
      const own = await s.run(['withdraw', 'apply', '--uid', 'user-1', '--amount', '1.5', '--to', TEST_EVM_0, '--chain-type', 'EVM', '--chain-id', '31337', '--token', a.token]);
      expect(own.code).toBe(1);
      expect(own.stderr).toContain('to is a payment address this service gave out for an order');
      const wd = await s.json(['withdraw', 'apply', '--uid', 'user-1', '--amount', '1.5', '--to', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '--chain-type', 'EVM', '--chain-id', '31337', '--token', a.token]);
      expect(wd).toMatchObject({ status: 'PENDING', chainId: '31337', token: a.token });

      // Stopping serve stops anvil, which writes its state beside the ledger.
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
      expect(await refuses(a.rpcUrl)).toBe(true);
      expect(existsSync(`${s.db}.anvil-state.json`)).toBe(true);
      // Beside a 0600 ledger, readable by its owner alone, as the ledger (an attacker review found it 0644).
      expect(statSync(`${s.db}.anvil-state.json`).mode & 0o777).toBe(0o600);

      // With serve stopped, dev pay says the chain does not answer and changes nothing.
      const down = await s.run(['dev', 'pay', order.id, '--amount', '1']);
      expect(down.code, down.stderr).toBe(3);
      expect(down.stderr).toContain(`the development chain at ${a.rpcUrl} does not answer`);

      // Restarted: the same merchant (no new secret printed), the same token, the same balances.
      // Another merchant was added meanwhile: the printed way to create an order names the
      // development merchant, and works as printed (it had failed with "--mch-id is required").
      const other = await s.json(['merchant', 'add', '--name', 'Other', '--generate-wallet']);
      const again = await serveDev(s);
      const hint = /Create an order:\n {2}\S+ (.*)\n/.exec(again.stderr())?.[1];
      expect(hint).toMatch(new RegExp(`^--db \\S+ --mch-id ${mchId} order create --oid demo-\\d+ --uid user-1 --amount 12\\.5$`));
      const byHint = await s.bare([...hint!.split(' '), '--json']);
      expect(byHint.code, byHint.stderr).toBe(0);
      expect(JSON.parse(byHint.stdout)).toMatchObject({ uid: 'user-1', amount: '12.5', status: 'PENDING_PAY' });
      expect(other.mchId).not.toBe(mchId);
      const b = announced(again);
      expect(b.token).toBe(a.token);
      expect(again.stderr()).not.toContain(secret);
      expect(again.stderr()).not.toMatch(/test test|junk/);
      expect(again.stderr()).toContain('development mode: the ledger already has a merchant, so none was created');
      expect(await tokenBalance(b, order.addresses.EVM)).toBe(13_250_000n);
      expect(await s.json(['merchant', 'list'])).toHaveLength(2);
      const third = await s.json(['dev', 'pay', order.id, '--amount', '0.25']);
      expect(third.blockNumber).toBeGreaterThan(more.blockNumber);
      expect(await tokenBalance(b, order.addresses.EVM)).toBe(13_500_000n);
      expect((await again.stop()).code, again.stderr()).toBe(0);
      expect(await refuses(b.rpcUrl)).toBe(true);
    },
    SLOW,
  );

  it(
    'does not leave anvil behind when serve is killed',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const a = announced(srv);
      srv.child.kill('SIGKILL');
      await srv.exited;
      expect(await refuses(a.rpcUrl)).toBe(true);
    },
    SLOW,
  );

  it(
    'starts without a chain, and says so, where anvil cannot run',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s, { CRYPTOPAY_ANVIL: `${s.dir}/no-such-anvil` });
      const err = srv.stderr();
      expect(err).toContain(`chain   none: anvil binary ${s.dir}/no-such-anvil (from CRYPTOPAY_ANVIL) does not exist`);
      expect(err).toContain('serving without a development chain');
      expect(err).not.toContain('dev pay');
      // The merchant and the API work all the same.
      const curl = /^ {2}curl -s -X POST (\S+) -H 'Content-Type: application\/json' -d '(.+)'$/m.exec(err);
      const res = await fetch(curl![1]!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: curl![2]! });
      const order = ((await res.json()) as { data: { id: string } }).data;
      expect(order.id).toMatch(/^ord_/);
      expect((await s.json<{ chainId: string }[]>(['chains'])).map((c) => c.chainId)).not.toContain('31337');
      const pay = await s.run(['dev', 'pay', order.id]);
      expect(pay.code).toBe(1);
      expect(pay.stderr).toContain('this ledger has no development chain: start cryptopay serve --dev on it first');
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );

  it(
    'refuses a second serve --dev on a ledger another serve --dev runs, and changes nothing of the first',
    async () => {
      // A new-user trial: the second started an anvil of its own on the same state file and
      // recorded its address as the chain's; once it ended, dev pay found nothing there while the
      // first serve still ran.
      const s = sandbox();
      const first = await serveDev(s);
      const a = announced(first);
      const before = await s.json<unknown>(['chains']);
      const second = await spawnServe(s.db, serveEnv(s), ['--dev']).then(
        async (srv) => (await srv.stop(), { started: true, stderr: srv.stderr() }),
        (e: Error) => ({ started: false, stderr: e.message }),
      );
      expect(second.started, second.stderr).toBe(false);
      expect(second.stderr).toContain(`error: serve --dev already runs on this ledger: its development chain answers at ${a.rpcUrl}.`);
      expect(second.stderr).toContain('Nothing was changed');
      expect(second.stderr).not.toContain('development chain 31337');
      expect(await s.json<unknown>(['chains'])).toEqual(before);
      // The first serve's chain still pays, and its watcher still sees it.
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'A-2', '--uid', 'u1', '--amount', '2']);
      const pay = await s.run(['dev', 'pay', o.id, '--wait', '30']);
      expect(pay.code, pay.stdout + pay.stderr).toBe(0);
      expect((await s.json<{ status: string }>(['order', 'status', o.id])).status).toBe('PAID');
      // A plain serve beside it is still allowed: it serves the same ledger and chain.
      const plain = await spawnServe(s.db, serveEnv(s), ['--no-watch']);
      await plain.waitFor(/cryptopay serving /);
      expect((await plain.stop()).code, plain.stderr()).toBe(0);
      await ledgerCheck(s);
      expect((await first.stop()).code, first.stderr()).toBe(0);
    },
    SLOW,
  );

  it(
    'keeps the chain of an earlier run without its RPC address when anvil cannot run any more',
    async () => {
      const s = sandbox();
      const first = await serveDev(s);
      const a = announced(first);
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '5']);
      await s.json(['dev', 'pay', o.id]);
      expect((await first.stop()).code, first.stderr()).toBe(0);

      const second = await serveDev(s, { CRYPTOPAY_ANVIL: `${s.dir}/no-such-anvil` });
      expect(second.stderr()).toContain('serving without a development chain');
      const dev = (await s.json<{ chainId: string; watch: { rpc: string | null }; development?: boolean; tokens: { address: string }[] }[]>(['chains'])).find((c) => c.chainId === '31337');
      expect(dev).toMatchObject({ development: true, tokens: [{ address: a.token }] });
      expect(dev!.watch.rpc).toBeNull();
      const pay = await s.run(['dev', 'pay', o.id, '--amount', '1']);
      expect(pay.code).toBe(3);
      expect(pay.stderr).toContain('the development chain 31337 is not running: start cryptopay serve --dev on this ledger');
      await ledgerCheck(s);
      expect((await second.stop()).code, second.stderr()).toBe(0);
    },
    SLOW,
  );
});

describe('the sandbox with its chain watcher', () => {
  it(
    'turns an order paid with dev pay PAID on its own and credits the user what arrived',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '12.5']);
      // Underpaid first: --wait returns once this payment is counted (it waited for PAID, the
      // whole time given, and blamed the watcher: an integrator review), and says what is due.
      const part = await s.run(['dev', 'pay', o.id, '--amount', '5', '--wait', '30']);
      expect(part.code, part.stderr).toBe(0);
      expect(part.stdout).toMatch(/^status +PENDING_PAY$/m);
      expect(part.stderr).toBe('counted: 5 of 12.5 USDT paid, 7.5 still due\n');
      const rest = await s.json(['dev', 'pay', o.id, '--wait', '30']);
      expect(rest).toMatchObject({ amount: '7.5', status: 'PAID' });
      const shown = await s.json<{ status: string; paidAmount: string; payments: { txHash: string; amount: string; source: string; chainId: string | null }[] }>(['order', 'show', o.id]);
      expect(shown).toMatchObject({ status: 'PAID', paidAmount: '12.5' });
      expect(shown.payments.map((p) => [p.source, p.chainId, p.amount])).toEqual([
        ['chain', '31337', '5'],
        ['chain', '31337', '7.5'],
      ]);
      expect(shown.payments[1]!.txHash).toBe(rest.txHash);
      expect(await s.json(['balance', 'u1'])).toMatchObject({ available: '12.5' });

      // Without --wait, the table shows the status before the transfer and stderr says what comes next.
      const extra = await s.run(['dev', 'pay', o.id, '--amount', '1']);
      expect(extra.code, extra.stderr).toBe(0);
      expect(extra.stdout).toMatch(/^sent +1 USDT \(test token\)$/m);
      expect(extra.stdout).toMatch(/^status +PAID$/m);
      expect(extra.stderr).toBe("serve --dev's chain watcher credits it after 1 confirmation; add --wait to wait until the order reads PAID\n");
      await until(async () => (await s.json<{ available: string }>(['balance', 'u1'])).available === '13.5');

      // A real merchant's order: refused before anything is sent (the watcher would refuse the
      // test money; dev pay said it would be credited: two outside reviews).
      const real = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Real shop', '--generate-wallet']);
      const theirs = await s.json<{ id: string; addresses: { EVM: string } }>(['order', 'create', '--oid', 'R-1', '--uid', 'u2', '--amount', '3', '--mch-id', real.mchId]);
      const refusedPay = await s.run(['dev', 'pay', theirs.id, '--wait', '5']);
      expect(refusedPay.code).toBe(1);
      expect(refusedPay.stderr).toContain(`order ${theirs.id} is merchant ${real.mchId}'s, whose EVM wallet is not the public test wallet`);
      expect(refusedPay.stderr).toContain('nothing was sent');
      expect(refusedPay.stdout).toBe('');
      expect(await tokenBalance(announced(srv), theirs.addresses.EVM)).toBe(0n);
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );
});

// A new-user trial (session 21) found no way to make the transaction that confirms a sandbox
// withdrawal short of writing an ethers script against anvil.
describe('dev pay-out', () => {
  it(
    "sends a withdrawal's payout on the development chain and prints the confirm that records it; the withdrawal stays PENDING until then",
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const a = announced(srv);
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'W-1', '--uid', 'wu', '--amount', '9']);
      await s.json(['dev', 'pay', o.id, '--wait', '30']);
      const to = '0x000000000000000000000000000000000000dEaD';
      const w = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'wu', '--amount', '2.5', '--to', to, '--chain-id', '31337']);
      const out = await s.run(['dev', 'pay-out', w.id]);
      expect(out.code, out.stderr).toBe(0);
      const tx = /^tx hash +(0x[0-9a-f]{64})$/m.exec(out.stdout)?.[1];
      const block = /^block +(\d+)$/m.exec(out.stdout)?.[1];
      expect(tx && block, out.stdout).toBeTruthy();
      expect(out.stdout).toMatch(/^sent +2\.5 USDT \(test token\)$/m);
      // The command to record it, as serve --dev prints its own: this CLI, on this ledger (a new-user
      // trial pasted a bare `cryptopay …`, not on its PATH, on the default ledger); the block is read.
      const printed = /^sent, not recorded: the withdrawal is still PENDING; record the payout with\n {2}(.*)\n$/.exec(out.stderr)?.[1];
      expect(printed, out.stderr).toMatch(new RegExp(`^\\S+ --db ${s.db} withdraw confirm ${w.id} --tx-hash ${tx}$`));
      expect(await tokenBalance(a, to)).toBe(2_500_000n);
      expect(await s.json(['withdraw', 'show', w.id])).toMatchObject({ status: 'PENDING', txHash: null });
      // Sent once (a new-user trial clicked twice and paid twice): run again, it names the payout and sends nothing.
      const twice = await s.run(['dev', 'pay-out', w.id]);
      expect(twice.code).toBe(1);
      expect(twice.stderr).toBe(`error: withdrawal ${w.id} is paid out already: transaction ${tx} (block ${block}) moved 2.5 USDT to ${to} after it was requested; nothing was sent. Record the payout with\n  ${printed}\n`);
      expect(await tokenBalance(a, to)).toBe(2_500_000n);
      // Nor is it rejected: the hold would go back to the user on top of the payout.
      const rejected = await s.run(['withdraw', 'reject', w.id, '--yes']);
      expect(rejected.code).toBe(1);
      expect(rejected.stderr).toContain(`error: withdrawal ${w.id} looks paid out already: on chain 31337 (Development (anvil)), transaction ${tx} (block ${block}`);
      expect(await s.json(['withdraw', 'show', w.id])).toMatchObject({ status: 'PENDING' });
      // withdraw verify, with no transaction recorded yet, names the payout the chain shows.
      const verify = await s.run(['withdraw', 'verify', w.id]);
      expect(verify.code).toBe(1);
      expect(verify.stderr).toContain(`chain 31337 shows transaction ${tx} (block ${block}: 2.5 USDT from `);
      // The printed command, run as printed by a shell (with --yes: no terminal here), confirms it, verified on chain.
      const confirmed = JSON.parse(execFileSync('sh', ['-c', `${printed} --yes --json`], { env: { PATH: process.env.PATH, HOME: s.dir }, encoding: 'utf8' }));
      expect(confirmed).toMatchObject({ status: 'CONFIRMED', txHash: tx, blockNumber: Number(block) });
      expect(await s.json(['withdraw', 'show', w.id])).toMatchObject({ verification: 'verified' });
      // Nothing more to pay out: refused, nothing sent.
      const again = await s.run(['dev', 'pay-out', w.id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe(`error: withdrawal ${w.id} is CONFIRMED with transaction ${tx}: nothing to pay out; nothing was sent\n`);
      expect(await tokenBalance(a, to)).toBe(2_500_000n);
      // A real merchant's withdrawal on a real chain: dev pay-out sends test money only.
      const real = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Real shop', '--generate-wallet']);
      await s.json(['balance', 'adjust', 'ru', '--amount', '+3', '--reason', 'seed', '--yes', '--mch-id', real.mchId]);
      const rw = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'ru', '--amount', '1', '--to', to, '--chain-id', '1', '--mch-id', real.mchId]);
      const realOut = await s.run(['dev', 'pay-out', rw.id]);
      expect(realOut.code).toBe(1);
      expect(realOut.stderr).toBe(`error: withdrawal ${rw.id} pays out on chain 1 (Ethereum), not on a development chain: dev pay-out sends test money only; pay it from the merchant's wallet and record it with cryptopay withdraw confirm; nothing was sent\n`);
      expect(await tokenBalance(a, to)).toBe(2_500_000n);
      // A withdrawal nothing paid: rejected, and the log says which blocks were searched (a new-user trial read [object Object]).
      const devMch = (await s.json<{ mchId: string }>(['withdraw', 'show', w.id])).mchId;
      const none = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'wu', '--amount', '1', '--to', to, '--chain-id', '31337', '--mch-id', devMch]);
      expect((await s.run(['withdraw', 'reject', none.id, '--yes'])).code).toBe(0);
      expect(await s.ok(['log', '--withdrawal', none.id])).toMatch(/\twithdrawal\.rejected\t.*payoutSearched=\{"chainId":"31337","fromBlock":\d+,"toBlock":\d+,"found":0\}/);
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );
});

describe('withdraw confirm of a twin', () => {
  // An operator trial: a user applied twice for the same 10 to the same address, 29 s apart; the
  // first was paid out, and its transaction confirmed the second (mined 8 s before it was asked
  // for: the clocks are allowed 5 minutes). The first then read unpaid, and was paid out again.
  it(
    'refuses a payout mined before the withdrawal was requested while an older twin it can pay is PENDING, naming that one',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'TW-1', '--uid', 'tu', '--amount', '9']);
      await s.json(['dev', 'pay', o.id, '--wait', '30']);
      const to = '0x000000000000000000000000000000000000dEaD';
      const first = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'tu', '--amount', '2', '--to', to, '--chain-id', '31337']);
      const out = await s.run(['dev', 'pay-out', first.id]);
      expect(out.code, out.stderr).toBe(0);
      const tx = /^tx hash +(0x[0-9a-f]{64})$/m.exec(out.stdout)![1]!;
      // Block times are whole seconds: the twin is asked for well after the payout's block.
      await new Promise((r) => setTimeout(r, 2_100));
      const twin = await s.json<{ id: string }>(['withdraw', 'apply', '--uid', 'tu', '--amount', '2', '--to', to, '--chain-id', '31337']);
      const wrong = await s.run(['withdraw', 'confirm', twin.id, '--tx-hash', tx, '--yes']);
      expect([wrong.code, wrong.stdout]).toEqual([1, '']);
      expect(wrong.stderr).toMatch(new RegExp(
        `^error: transaction ${tx} was mined at \\S+, \\d+ s before withdrawal ${twin.id} was requested, and withdrawal ${first.id} of the same 2 USDT to ${to}, requested before it was mined, is still PENDING: it is that one's payout; confirm ${first.id} with it \\(nothing was changed\\)\\n$`,
      ));
      expect(await s.json(['withdraw', 'show', twin.id])).toMatchObject({ status: 'PENDING', txHash: null });
      // The one it pays takes it; the twin is left to be paid or rejected on its own.
      expect(await s.json(['withdraw', 'confirm', first.id, '--tx-hash', tx, '--yes'])).toMatchObject({ status: 'CONFIRMED', txHash: tx });
      expect(await s.json(['withdraw', 'show', twin.id])).toMatchObject({ status: 'PENDING' });
      // The hash taken, confirm says so before any question (it had shown "matches" on a terminal
      // and refused after the y): here in a pipe, the refusal itself, not "--yes is needed".
      const taken = await s.run(['withdraw', 'confirm', twin.id, '--tx-hash', tx]);
      expect([taken.code, taken.stdout]).toEqual([1, '']);
      expect(taken.stderr).toContain(`it confirms withdrawal ${first.id}, and a transaction confirms at most one withdrawal`);
      expect(await s.json(['balance', 'tu'])).toMatchObject({ available: '5', held: '2' });
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );
});

describe('serve --dev, again', () => {
  it(
    'moves to another port when the last one is taken, and every command follows it through the ledger',
    async () => {
      const s = sandbox();
      const first = await serveDev(s);
      const a = announced(first);
      const o = await s.json<{ id: string; addresses: { EVM: string } }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '2']);
      expect((await first.stop()).code, first.stderr()).toBe(0);

      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(Number(new URL(a.rpcUrl).port), '127.0.0.1', resolve));
      try {
        const second = await serveDev(s);
        const b = announced(second);
        expect(b.rpcUrl).not.toBe(a.rpcUrl);
        expect(b.token).toBe(a.token);
        const chains = await s.json<{ chainId: string; watch: { rpc: string | null } }[]>(['chains']);
        expect(chains.find((c) => c.chainId === '31337')?.watch.rpc).toBe(b.rpcUrl);
        await s.json(['dev', 'pay', o.id]);
        expect(await tokenBalance(b, o.addresses.EVM)).toBe(2_000_000n);
        await ledgerCheck(s);
        expect((await second.stop()).code, second.stderr()).toBe(0);
      } finally {
        squatter.close();
      }
    },
    SLOW,
  );

  it(
    'dev pay --wait returns once the order reads PAID (whoever paid it), and fails saying so when its payment is not counted in time',
    async () => {
      const s = sandbox();
      // No watcher: the operator records the payment by hand, and nothing else may.
      const srv = await serveDev(s, {}, ['--no-watch']);
      expect(srv.stderr()).not.toContain('watching chain');
      // Its banner does not promise what it will not do (a new-user trial).
      expect(srv.stderr()).not.toContain('turns PAID on its own');
      expect(srv.stderr()).toMatch(/this serve does not watch the chain \(--no-watch\), so the order turns PAID once \S+ --db \S+ watch runs beside it \(or by order mark-paid\):/);
      const a = announced(srv);
      const o = await s.json<{ id: string; addresses: { EVM: string } }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '3']);

      // Whoever records the payment (here an operator by hand, normally the chain watcher), the
      // waiting dev pay sees the order turn PAID.
      const env = definedEnv({ ...process.env, ...CLEAN_ENV, XDG_DATA_HOME: `${s.dir}/xdg`, XDG_CONFIG_HOME: `${s.dir}/config` });
      const child = spawn(process.execPath, [BIN, '--db', s.db, '--json', 'dev', 'pay', o.id, '--wait', '30'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
      const deadline = Date.now() + 20_000;
      while ((await tokenBalance(a, o.addresses.EVM)) === 0n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await tokenBalance(a, o.addresses.EVM)).toBe(3_000_000n);
      const txHash = `0x${'cd'.repeat(32)}`;
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', txHash, '--unverified', '--reason', 'recorded by hand', '--yes']);
      expect(await done).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ order: o.id, amount: '3', status: 'PAID' });

      // Paid in full on chain, but with no watcher and no operator nothing credits it.
      const late = await s.json<{ id: string }>(['order', 'create', '--oid', 'A-2', '--uid', 'u1', '--amount', '1']);
      const r = await s.run(['dev', 'pay', late.id, '--wait', '2']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`but its payment was not counted within 2 s (order ${late.id} is PENDING_PAY)`);
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );
});

describe('dev pay refuses', () => {
  it(
    'without a development chain, an unknown order, a paid order, a bad --from or --wait, changing nothing',
    async () => {
      const s = sandbox();
      await s.json(['merchant', 'add', '--name', 'Shop', '--generate-wallet']);
      const o = await s.json<{ id: string }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '5']);
      const none = await s.run(['dev', 'pay', o.id]);
      expect({ code: none.code, err: none.stderr }).toEqual({ code: 1, err: 'error: this ledger has no development chain: start cryptopay serve --dev on it first (dev pay never sends on a real chain)\n' });
      expect((await s.run(['dev', 'pay', o.id, '--from', '12'])).code).toBe(2);
      expect((await s.run(['dev', 'pay', o.id, '--wait', 'soon'])).code).toBe(2);
      expect((await s.run(['dev', 'pay'])).code).toBe(2);
    },
    SLOW,
  );

  it(
    'an order with nothing left to pay, unless --amount says how much, and an unknown order',
    async () => {
      const s = sandbox();
      const srv = await serveDev(s);
      const a = announced(srv);
      const o = await s.json<{ id: string; addresses: { EVM: string } }>(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '5']);
      // An operator trial: a made-up hash recorded under --yes without --chain-id on a ledger that
      // watches a chain was credited, the real transfer counted on top, and both withdrawn. Under
      // --yes (no question to show "not checked") it is refused now, saying how to go on.
      const unchecked = await s.run(['order', 'mark-paid', o.id, '--tx-hash', `0x${'ab'.repeat(32)}`, '--yes']);
      expect([unchecked.code, unchecked.stdout]).toEqual([2, '']);
      expect(unchecked.stderr).toMatch(
        /^error: order mark-paid --yes without --chain-id would record a transaction nobody read, while the watcher reads chain 31337 \(Development \(anvil\)\): give --chain-id 31337 to read it there first \(or the chain it was paid on\), or --unverified --reason TEXT to record it unread; nothing was changed\n$/,
      );
      expect(await s.json(['order', 'show', o.id])).toMatchObject({ status: 'PENDING_PAY', paidAmount: '0' });
      expect(await s.json(['balance', 'u1'])).toMatchObject({ available: '0' });
      await s.json(['order', 'mark-paid', o.id, '--tx-hash', `0x${'ab'.repeat(32)}`, '--unverified', '--reason', 'paid by bank transfer', '--yes']);
      const r = await s.run(['dev', 'pay', o.id]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`order ${o.id} is PAID: nothing left to pay (give --amount to send more anyway)`);
      expect(await tokenBalance(a, o.addresses.EVM)).toBe(0n);
      await s.json(['dev', 'pay', o.id, '--amount', '1']);
      expect(await tokenBalance(a, o.addresses.EVM)).toBe(1_000_000n);
      const unknown = await s.run(['dev', 'pay', 'ord_nope']);
      expect(unknown.code).toBe(1);
      expect(await tokenBalance(a, o.addresses.EVM)).toBe(1_000_000n);
      await ledgerCheck(s);
      expect((await srv.stop()).code, srv.stderr()).toBe(0);
    },
    SLOW,
  );
});
