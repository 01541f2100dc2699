// The chain watcher's benchmarks (issue #11): scan rate against a plain eth_getLogs baseline,
// detection latency over HTTP, and serve's RSS with every ledger address watched. Run by
// bench/run.mjs (or alone: node bench/watch.mjs after npm run build); prints one JSON object on
// stdout with the rows for bench/RESULTS.md. BENCH_QUICK=1 (or BENCH_WATCH_BLOCKS,
// BENCH_WATCH_PER_BLOCK, BENCH_WATCH_ORDERS) for a smoke-sized run.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { HDNodeWallet, JsonRpcProvider, Network } from 'ethers';
import { startAnvil } from '../dist/chains/sandbox/anvil.js';
import { deployTestToken, testTokenArtifact, testTokenAt } from '../dist/chains/sandbox/test-token.js';
import { evmAddressOf } from '../dist/chains/encode.js';
import { createRegistry } from '../dist/chains/registry.js';
import { ChainWatcher } from '../dist/chains/watch/watcher.js';
import { TRANSFER_TOPIC, decodeTransfer } from '../dist/chains/watch/logs.js';
import { openLedger } from '../dist/store/db.js';
import { LocalPaymentService } from '../dist/store/local-service.js';
import { recordPayment } from '../dist/store/payments.js';

const QUICK = process.env.BENCH_QUICK === '1';
const BLOCKS = Number(process.env.BENCH_WATCH_BLOCKS ?? (QUICK ? 30 : 2000));
const PER_BLOCK = Number(process.env.BENCH_WATCH_PER_BLOCK ?? (QUICK ? 50 : 100));
const ORDERS = Number(process.env.BENCH_WATCH_ORDERS ?? (QUICK ? 20_000 : 1_000_000));
const REPEATS = QUICK ? 1 : 3;
const SAMPLES = QUICK ? 5 : 30;
const POLL_MS = 2000;
const SPAN = 500;

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'bin', 'cryptopay');
const log = (s) => process.stderr.write(`${s}\n`);
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-bench-watch-'));

/** 1 USDT orders whose addresses are random 20-byte keys: an index of ORDERS addresses to match against. */
async function buildLedger(file) {
  const ledger = openLedger(file);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' } });
  const m = (await service.addMerchant({ name: 'Bench', generateWallet: true, rateLimit: 0 })).merchant;
  const now = Date.now();
  const insOrder = ledger.sqlite.prepare("insert into orders (id, merchant_id, oid, uid, asset, amount, status, expired_at, created_at) values (?, ?, ?, ?, 'USDT', 1000000, 'PENDING_PAY', ?, ?)");
  const insAddr = ledger.sqlite.prepare("insert into order_addresses (order_id, chain_type, address, derivation_index) values (?, 'EVM', ?, ?)");
  const addresses = [];
  const ids = [];
  const chunk = ledger.sqlite.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const id = `ord_bench${i.toString().padStart(8, '0')}`;
      const address = evmAddressOf(randomBytes(20));
      insOrder.run(id, m.mchId, `b-${i}`, `u-${i}`, now + 6 * 86_400_000, now);
      insAddr.run(id, address, i);
      addresses.push(address);
      ids.push(id);
    }
  });
  for (let i = 0; i < ORDERS; i += 50_000) chunk(i, Math.min(ORDERS, i + 50_000));
  ledger.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  ledger.close();
  return { addresses, ids };
}

async function main() {
  const node = await startAnvil({ chainId: 31337, accounts: 2 });
  const network = Network.from(31337);
  const provider = new JsonRpcProvider(node.rpcUrl, network, { staticNetwork: network, pollingInterval: 50, cacheTimeout: -1 });
  const payer = HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/0").connect(provider);
  const results = {};
  try {
    const artifact = await testTokenArtifact();
    const tokenAddress = await deployTestToken(payer, { name: 'Bench USDT', symbol: 'USDT', decimals: 6 }, artifact);
    const token = testTokenAt(tokenAddress, payer, artifact);
    await (await token.getFunction('mint')(payer.address, 10n ** 30n)).wait();

    log(`watch bench: ledger with ${ORDERS} orders`);
    const template = join(dir, 'template.db');
    const { addresses, ids } = await buildLedger(template);

    // Every PER_BLOCK-th transfer of 100 pays an order (1%); the rest go to strangers.
    log(`watch bench: ${BLOCKS} blocks of ${PER_BLOCK} transfers`);
    const first = (await provider.getBlockNumber()) + 1;
    const paidIds = [];
    let nonce = await provider.getTransactionCount(payer.address, 'pending');
    let last;
    for (let b = 0; b < BLOCKS; b++) {
      const to = [];
      for (let i = 0; i < PER_BLOCK; i++) {
        const k = b * PER_BLOCK + i;
        if (k % 100 === 0 && paidIds.length < addresses.length) {
          to.push(addresses[paidIds.length]);
          paidIds.push(ids[paidIds.length]);
        } else to.push(evmAddressOf(randomBytes(20)));
      }
      last = await token.getFunction('transferBatch')(to, to.map(() => 1_000_000n), { nonce: nonce++, gasLimit: 29_000_000 });
      if (b % 100 === 99) await last.wait();
    }
    await last.wait();
    const end = await provider.getBlockNumber();
    const total = BLOCKS * PER_BLOCK;

    // Baseline: the same ranges, only fetched with eth_getLogs, parsed and decoded.
    const baseline = async () => {
      const t = performance.now();
      let n = 0;
      for (let from = first; from <= end; from += SPAN) {
        const r = await fetch(node.rpcUrl, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${Math.min(end, from + SPAN - 1).toString(16)}`, address: [tokenAddress.toLowerCase()], topics: [TRANSFER_TOPIC] }] }),
        });
        for (const l of JSON.parse(await r.text()).result) if (decodeTransfer(l)) n++;
      }
      if (n !== total) throw new Error(`baseline saw ${n} transfers, expected ${total}`);
      return total / ((performance.now() - t) / 1000);
    };
    const registry = createRegistry({
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: node.rpcUrl, confirmations: 1 }],
      tokens: [{ chainId: 31337, address: tokenAddress, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    const product = async (run) => {
      const file = join(dir, `scan-${run}.db`);
      copyFileSync(template, file);
      const ledger = openLedger(file);
      const { createRpcClient } = await import('../dist/chains/watch/rpc.js');
      const w = new ChainWatcher({
        chain: { ...registry.chain(31337), startBlock: first }, tokens: registry.tokens().filter((x) => x.chainId === '31337'),
        rpc: createRpcClient({ url: node.rpcUrl, timeoutMs: 60_000 }), ledger, record: recordPayment, holder: 'bench', now: Date.now, log: () => {},
        tickBudgetMs: 3_600_000, initialSpan: SPAN, maxSpan: SPAN, targetLogs: Number.MAX_SAFE_INTEGER,
      });
      const t = performance.now();
      let r;
      do r = await w.tick(); while (!r.caughtUp);
      const rate = total / ((performance.now() - t) / 1000);
      const paid = Number(ledger.sqlite.prepare("select count(*) as n from orders where status = 'PAID'").get().n);
      ledger.close();
      rmSync(file, { force: true });
      if (paid !== paidIds.length) throw new Error(`the watcher paid ${paid} orders, expected ${paidIds.length}`);
      return rate;
    };
    const base = [];
    const prod = [];
    for (let i = 0; i < REPEATS; i++) {
      base.push(await baseline());
      prod.push(await product(i));
      log(`watch bench: scan ${round(prod.at(-1), 0)} logs/s vs baseline ${round(base.at(-1), 0)} logs/s`);
    }
    results.scan = { product: median(prod), baseline: median(base), total, paid: paidIds.length, blocks: BLOCKS };
    // For profiling the scan alone (node --cpu-prof bench/watch.mjs).
    if (process.env.BENCH_WATCH_SCAN_ONLY) return;

    // Detection latency and RSS: a real serve on a copy of the ledger (all ORDERS addresses
    // watched) that first scans the whole history above, then sees new payments live.
    const file = join(dir, 'serve.db');
    copyFileSync(template, file);
    const chains = join(dir, 'chains.json');
    writeFileSync(chains, JSON.stringify({
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: node.rpcUrl, confirmations: 2, pollInterval: POLL_MS, startBlock: first }],
      tokens: [{ chainId: 31337, address: tokenAddress, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    }));
    const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_CHAINS: chains };
    delete env.CRYPTOPAY_REMOTE;
    const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', file], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    serve.stderr.on('data', (d) => (err += d));
    try {
      let url;
      for (let i = 0; i < 600 && !url; i++) {
        url = /cryptopay serving (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
        await sleep(50);
      }
      if (!url) throw new Error(`serve did not start: ${err}`);
      const status = async (id) => (await (await fetch(`${url}/api/v1/order/${id}/status`)).json()).data;
      // Caught up with the history: its last paid order is PAID (needs the 2nd confirmation block).
      await (await token.getFunction('transfer')(payer.address, 1n, { nonce: nonce++ })).wait();
      for (let i = 0; (await status(paidIds.at(-1))) !== 'PAID'; i++) {
        if (i > 36_000) throw new Error('serve never caught up');
        await sleep(50);
      }
      const latencies = [];
      for (let s = 0; s < SAMPLES; s++) {
        const id = ids[paidIds.length + s];
        await (await token.getFunction('transfer')(addresses[paidIds.length + s], 1_000_000n, { nonce: nonce++ })).wait();
        // A random phase against the poll, as payments arrive in production.
        await sleep(Math.random() * POLL_MS);
        await provider.send('evm_mine', []);
        const t = performance.now();
        while ((await status(id)) !== 'PAID') {
          if (performance.now() - t > 30_000) throw new Error(`order ${id} never PAID`);
          await sleep(5);
        }
        latencies.push(performance.now() - t);
      }
      latencies.sort((a, b) => a - b);
      results.latency = { p50: latencies[latencies.length >> 1], p99: latencies[Math.min(latencies.length - 1, Math.ceil(0.99 * latencies.length) - 1)], samples: SAMPLES, pollMs: POLL_MS };
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${serve.pid}/status`, 'utf8'));
      results.rss = { peak: hwm ? Number(hwm[1]) * 1024 : NaN, orders: ORDERS };
    } finally {
      serve.kill('SIGTERM');
      await new Promise((r) => serve.on('exit', r));
    }
  } finally {
    provider.destroy();
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  if (process.env.BENCH_WATCH_SCAN_ONLY) return;
  const { scan, latency, rss } = results;
  const rows = [
    ['watcher scan rate', `${round(scan.product, 0)} logs/s vs ${round(scan.baseline, 0)} logs/s`, `${round((100 * scan.product) / scan.baseline, 0)}%`, 'at least 70%', scan.product >= 0.7 * scan.baseline],
    ['payment detection latency (p99)', `${round(latency.p99, 0)} ms (p50 ${round(latency.p50, 0)} ms)`, '-', `at most ${POLL_MS + 200} ms`, latency.p99 <= POLL_MS + 200],
    [`\`serve\` RSS with ${ORDERS.toLocaleString('en')} watched addresses`, `${round(rss.peak / 1e6, 1)} MB`, '-', 'at most 200 MB', rss.peak <= 200e6],
  ];
  const notes = [
    `- Watcher scan rate: anvil chain of ${scan.blocks} blocks holding ${scan.total.toLocaleString('en')} Transfer logs of one registry token (${PER_BLOCK} per block, one transferBatch each), ${ORDERS.toLocaleString('en')} orders in the ledger, ${scan.paid} transfers (1%) paying them. Product: the ChainWatcher from the first block to the head (ranges of ${SPAN} blocks, confirmations 1, every payment counted in the ledger). Baseline in the same run: the same ranges fetched with eth_getLogs over fetch, parsed and decoded, nothing else. Median of ${REPEATS}.`,
    `- Detection latency: a \`serve\` process (poll interval ${POLL_MS} ms, confirmations 2) on that ledger; each of ${latency.samples} samples pays an order, waits a random part of the poll interval, mines the block that completes the confirmations, and times until \`GET /api/v1/order/{id}/status\` answers PAID (polled every 5 ms).`,
    `- \`serve\` RSS: VmHWM of that process after it scanned the whole history above and the latency samples, with ${ORDERS.toLocaleString('en')} order addresses in its ledger.`,
  ];
  process.stdout.write(`${JSON.stringify({ rows, notes })}\n`);
}

await main();
