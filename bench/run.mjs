// npm run bench: the benchmarks of issue #16 (and the watcher's and callbacks'), each figure a
// median of repeated runs and each ratio against a baseline measured in the same run,
// alternating with the product (the machine is shared and noisy). HTTP load comes from wrk
// (bench/wrk.mjs, bench/wrk.lua); `serve` runs as in production while it is measured: its chain
// watcher scans a local anvil producing a block a second, orders are paid on that chain all
// along, and their callbacks are delivered to a local receiver.
// Rewrites bench/RESULTS.md (the table, how each figure was taken, then bench/CHANGES.md).
// BENCH_QUICK=1 shortens every run, for trying the script itself; BENCH_FULL=1 runs watch.mjs
// and callbacks.mjs at their full sizes (by default here they run at the sizes given below).
// BENCH_GETS_ONLY=1 runs only the three GET runs of each repeat (fixed JSON, status, the payment
// page) with serve as in production, prints their figures and serve's peak RSS, and writes
// nothing (for working on the GET figures; not for the record).
// BENCH_STARTUP_ONLY=1 measures the two start-up figures only (31 pairs each; BENCH_STARTUP_RUNS
// changes that), prints them and writes nothing: for working on the start-up of the CLI.
import { spawn, spawnSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HDNodeWallet, JsonRpcProvider, Network } from 'ethers';
import { hashRange } from '../dist/chains/ckd.js';
import { createDeriver, generateWallet, warmUpDerivation } from '../dist/chains/derive.js';
import { formatAddress } from '../dist/chains/encode.js';
import { startAnvil } from '../dist/chains/sandbox/anvil.js';
import { deployTestToken, testTokenArtifact, testTokenAt } from '../dist/chains/sandbox/test-token.js';
import { openLedger } from '../dist/store/db.js';
import { LocalPaymentService } from '../dist/store/local-service.js';
import { sign } from '../dist/signing/index.js';
import { cpuSeconds, ensureWrk, memoryOf, runWrk, writeBodies, BROWSER_ACCEPT_ENCODING } from './wrk.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const FULL = process.env.BENCH_FULL === '1';
const GETS_ONLY = process.env.BENCH_GETS_ONLY === '1';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'bin', 'cryptopay');
const NODE = process.execPath;
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-bench-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(dir, 'ledger.db'), XDG_CONFIG_HOME: join(dir, 'config') };
delete env.CRYPTOPAY_REMOTE;
delete env.CRYPTOPAY_CHAINS;

// Five by default: a GET ratio moved by 20 points from one repeat to the next on this shared
// machine, and the median of three is then one repeat's luck (BENCH_REPEATS=3 is the least).
const REPEATS = QUICK ? 1 : Math.max(3, Number(process.env.BENCH_REPEATS ?? 5));
const STARTUP_ONLY = process.env.BENCH_STARTUP_ONLY === '1';
const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? (QUICK ? 5 : 31));
const GET_SECONDS = QUICK ? 3 : 8;
const POST_SECONDS = QUICK ? 3 : 10;
const WARMUP_SECONDS = QUICK ? 1 : 2;
const CONNECTIONS = 50;
/** wrk threads: one per core of this 2-core machine; the client's CPU share is recorded. */
const THREADS = 2;
/** Bodies signed ahead per second of a product POST run: above any rate seen, so none is used twice. */
const POOL_RATE = Number(process.env.BENCH_POOL_RATE ?? 48_000);
/** Orders paid on the chain per block (a block a second) while the HTTP load runs. */
const PAID_PER_BLOCK = 5;
const BLOCK_SECONDS = 1;
const POLL_MS = 1000;
/** The paced create order offers this share of what serve sustained in the same repeat. */
const PACED_SHARE = 0.5;

const median = (xs) => {
  const s = [...xs].filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const fmt = (x) => Math.round(x).toLocaleString('en');
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load1 = () => round(loadavg()[0], 1);

function cli(args, extraEnv = {}) {
  const r = spawnSync(NODE, [BIN, ...args], { env: { ...env, ...extraEnv }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cryptopay ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Wall time of a whole process, from spawn to exit. */
/**
 * Start-up is timed without NODE_EXTRA_CA_CERTS: where it is set (this machine sets it), Node 20
 * reads and parses those certificates at every start, ~40 ms that make `node -e ''` three times
 * slower and every ratio against it look better than on a machine without it. Both sides of the
 * ratio run without it; the figures with it are recorded beside them.
 */
const startupEnv = { ...env };
delete startupEnv.NODE_EXTRA_CA_CERTS;

function timed(args, withEnv = startupEnv) {
  const t = performance.now();
  const r = spawnSync(NODE, args, { env: withEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

/** Alternates baseline and product so both see the same machine; the ratio is the median of the pairs'. */
function startup(label, args) {
  const measure = (withEnv) => {
    const base = [];
    const prod = [];
    const ratios = [];
    const loads = [load1()];
    timed(['-e', ''], withEnv);
    timed([BIN, ...args], withEnv);
    for (let i = 0; i < STARTUP_RUNS; i++) {
      base.push(timed(['-e', ''], withEnv));
      prod.push(timed([BIN, ...args], withEnv));
      ratios.push(prod.at(-1) / base.at(-1));
    }
    loads.push(load1());
    return { baseline: median(base), product: median(prod), ratio: median(ratios), loads };
  };
  const r = measure(startupEnv);
  // As this machine's environment has it, when it sets NODE_EXTRA_CA_CERTS: recorded, not judged.
  if (env.NODE_EXTRA_CA_CERTS) r.withCerts = measure(env);
  log(`${label}: ${round(r.product, 1)} ms vs node -e '' ${round(r.baseline, 1)} ms (${round(r.ratio)}x), load ${r.loads.join('-')}${r.withCerts ? `; with NODE_EXTRA_CA_CERTS ${round(r.withCerts.product, 1)} vs ${round(r.withCerts.baseline, 1)} ms (${round(r.withCerts.ratio)}x)` : ''}`);
  return r;
}

function startServer(args, pattern, extraEnv = {}) {
  const child = spawn(NODE, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    let found;
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-20_000);
      const m = !found && pattern.exec(err);
      if (m) {
        found = { child, url: m[1], stderr: () => err };
        resolve(found);
      }
    });
    child.on('exit', (code) => {
      if (!found) reject(new Error(`${args.join(' ')} exited ${code}: ${err}`));
    });
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

/** /proc/stat: CPU seconds the whole machine has been busy. */
function machineBusy() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  return (f.reduce((a, b) => a + b, 0) - idle) / 100;
}

/** One wrk run, with the load average and the CPU the rest of the machine used meanwhile. */
const mb = (bytes) => round(bytes / 1e6, 1);

/** Every process's CPU ticks (utime + stime, /proc/PID/stat) and name: who the "others" were. */
function processTicks() {
  const out = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const f = stat.slice(close + 2).split(' ');
      out.set(pid, { name: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The three busiest processes of a run besides its client and server, as "name pid cores". */
function busiestOthers(before, after, wall, exclude) {
  return [...after]
    .filter(([pid]) => !exclude.has(pid))
    .map(([pid, a]) => [pid, a.name, (a.ticks - (before.get(pid)?.ticks ?? 0)) / 100 / wall])
    .filter(([, , cores]) => cores >= 0.02)
    .sort((x, y) => y[2] - x[2])
    .slice(0, 3)
    .map(([pid, name, cores]) => `${name} ${pid} ${round(cores)}`);
}

async function measure(label, o) {
  const procs0 = processTicks();
  const busy0 = machineBusy();
  const t0 = performance.now();
  const l0 = loadavg()[0];
  const r = await runWrk({ connections: CONNECTIONS, threads: THREADS, ...o });
  const wall = (performance.now() - t0) / 1000;
  r.load = Math.max(l0, loadavg()[0]);
  // Busy cores beyond this run's client and server: other processes (and the chain, the payer
  // and the watcher's node, which run the same way for the product and the baselines).
  r.othersCpu = (machineBusy() - busy0) / wall - r.clientCpuShare - (r.serverCpuShares[0] ?? 0);
  // wrk is the client (its pid is not returned); the server is o.servers[0].
  const procs1 = processTicks();
  r.othersTop = busiestOthers(procs0, procs1, wall, new Set([String(o.servers?.[0] ?? ''), ...[...procs1].filter(([, p]) => p.name === 'wrk').map(([pid]) => pid)]));
  r.serverCpuShare = r.serverCpuShares[0];
  // The server's resident memory after the run, and its peak so far (VmHWM): where serve's peak is reached.
  r.serverMemory = o.servers?.[0] ? memoryOf(o.servers[0]) : undefined;
  if (r.exhausted) throw new Error(`${label}: wrk ran out of pre-signed bodies (${r.pool}); raise BENCH_POOL_RATE`);
  log(`${label}: ${fmt(r.rps)} rps, p50 ${round(r.p50)} ms, p99 ${round(r.p99)} ms, errors ${r.errors}, non-2xx ${r.non2xx}, client CPU ${round(r.clientCpuShare)}, server CPU ${round(r.serverCpuShare)}, others ${round(r.othersCpu)}${r.othersTop.length ? ` (${r.othersTop.join(', ')})` : ''}, load ${round(r.load, 1)}${r.serverMemory ? `, server RSS ${mb(r.serverMemory.rss)} MB (peak so far ${mb(r.serverMemory.peak)})` : ''}`);
  return r;
}

function derivation() {
  warmUpDerivation();
  const rates = [];
  const rangeRates = [];
  const N = QUICK ? 1000 : 5000;
  for (let r = 0; r < REPEATS; r++) {
    const w = generateWallet();
    const evm = createDeriver(w.evmXpub);
    const tron = createDeriver(w.tronXpub);
    const t = performance.now();
    for (let i = 0; i < N; i++) {
      evm.evm(i);
      tron.tron(i);
    }
    rates.push((2 * N) / ((performance.now() - t) / 1000));
    // As serve's address pool derives ahead (src/chains/derive-ranges.ts): ranges of 64 indices,
    // each address then written out, on one thread.
    const t2 = performance.now();
    let derived = 0;
    for (let i = 0; i < N; i += RANGE) {
      derived += 2 * RANGE;
      const a = hashRange(evm.change, i, RANGE);
      const b = hashRange(tron.change, i, RANGE);
      for (let k = 0; k < RANGE; k++) {
        formatAddress('EVM', a.subarray(20 * k, 20 * k + 20));
        formatAddress('TRON', b.subarray(20 * k, 20 * k + 20));
      }
    }
    rangeRates.push(derived / ((performance.now() - t2) / 1000));
  }
  log(`derivation: ${round(median(rates), 0)} addresses/s one by one, ${round(median(rangeRates), 0)} in ranges of ${RANGE}`);
  return { rate: median(rates), rangeRate: median(rangeRates), n: N };
}
/** Indices a range of the address pool's derivation holds (as bench/baseline-server.mjs's derive). */
const RANGE = 64;

/**
 * A local chain producing a block a second with a test USDT, and orders paid on it while the
 * load runs: every block pays PAID_PER_BLOCK orders, which serve's watcher finds and whose
 * callbacks its sender delivers.
 */
async function startChain() {
  const node = await startAnvil({ chainId: 31337, blockTime: BLOCK_SECONDS, accounts: 2 });
  const network = Network.from(31337);
  const provider = new JsonRpcProvider(node.rpcUrl, network, { staticNetwork: network, pollingInterval: 200, cacheTimeout: -1 });
  const payer = HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/0").connect(provider);
  const artifact = await testTokenArtifact();
  const tokenAddress = await deployTestToken(payer, { name: 'Bench USDT', symbol: 'USDT', decimals: 6 }, artifact);
  const token = testTokenAt(tokenAddress, payer, artifact);
  await (await token.getFunction('mint')(payer.address, 10n ** 30n)).wait();
  const startBlock = await provider.getBlockNumber();
  let paying;
  let sent = 0;
  let failures = 0;
  return {
    node, tokenAddress, startBlock,
    /** Pays `addresses` (1 USDT each, the orders' amount), PAID_PER_BLOCK a block, until stopPaying(). */
    async startPaying(addresses) {
      let nonce = await provider.getTransactionCount(payer.address, 'pending');
      let stopped = false;
      const loop = (async () => {
        while (!stopped && sent < addresses.length) {
          const to = addresses.slice(sent, sent + PAID_PER_BLOCK);
          try {
            await token.getFunction('transferBatch')(to, to.map(() => 1_000_000n), { nonce, gasLimit: 2_000_000 });
            nonce++;
            sent += to.length;
          } catch (e) {
            failures++;
            nonce = await provider.getTransactionCount(payer.address, 'pending').catch(() => nonce);
          }
          await sleep(BLOCK_SECONDS * 1000);
        }
      })();
      paying = async () => {
        stopped = true;
        await loop;
      };
    },
    async stopPaying() {
      await paying?.();
      return { sent, failures };
    },
    async stop() {
      provider.destroy();
      await node.stop();
    },
  };
}

/** Orders (1 USDT, with a notifyUrl) for the chain to pay during the load; their EVM addresses. */
async function ordersToPay(n, mchId, notifyUrl) {
  const ledger = openLedger(env.CRYPTOPAY_DB);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' }, allowPrivateCallbacks: true });
  const out = [];
  for (let i = 0; i < n; i += 250) {
    const batch = await Promise.all(Array.from({ length: Math.min(250, n - i) }, (_, k) =>
      service.createOrder({ mchId, oid: `paid-${i + k}`, uid: `payer-${(i + k) % 50}`, amount: '1', notifyUrl })));
    out.push(...batch);
  }
  ledger.close();
  return out;
}

/** What serve's watcher and sender did during the load, read from the ledger afterwards. */
function sideWork(ids) {
  const ledger = openLedger(env.CRYPTOPAY_DB);
  try {
    const status = ledger.sqlite.prepare('select status from orders where id = ?');
    const paid = ids.filter((id) => status.get(id)?.status === 'PAID').length;
    const cb = ledger.sqlite.prepare("select status, count(*) as n from callbacks where event = 'order.paid' group by status").all();
    const by = Object.fromEntries(cb.map((r) => [r.status, Number(r.n)]));
    const orders = Number(ledger.sqlite.prepare('select count(*) as n from orders').get().n);
    return { paid, delivered: by.delivered ?? 0, pending: by.pending ?? 0, failed: by.failed ?? 0, orders };
  } finally {
    ledger.close();
  }
}

async function main() {
  const started = new Date();
  const loadAtStart = loadavg().map((x) => round(x, 1));
  log(`bench in ${dir}; load average ${loadAtStart.join(' ')}`);
  const wrkVersion = STARTUP_ONLY ? undefined : ensureWrk(log);

  // Start-up, before anything else runs.
  const help = GETS_ONLY ? undefined : startup('cryptopay --help', ['--help']);
  const merchant = JSON.parse(cli(['merchant', 'add', '--name', 'Bench', '--generate-wallet', '--rate-limit', '0', '--json']));
  const probe = JSON.parse(cli(['order', 'create', '--oid', 'status-probe', '--uid', 'u1', '--amount', '1', '--json']));
  const status = GETS_ONLY ? undefined : startup('cryptopay order status', ['order', 'status', probe.id]);
  if (STARTUP_ONLY) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }

  // serve as in production: a chain to watch, orders paid on it, callbacks to a receiver.
  const chain = await startChain();
  const receiver = await startServer([join(HERE, 'baseline-server.mjs'), 'fixed'], /baseline serving (http:\S+)/);
  const hook = `${receiver.url}/hook`;
  const httpSeconds = REPEATS * (3 * GET_SECONDS + 6 * POST_SECONDS + 20) + 14 * WARMUP_SECONDS + 30;
  const toPay = await ordersToPay(Math.ceil((httpSeconds * PAID_PER_BLOCK) / BLOCK_SECONDS), merchant.mchId, hook);
  const chainsFile = join(dir, 'chains.json');
  writeFileSync(chainsFile, JSON.stringify({
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Bench anvil', rpcUrl: chain.node.rpcUrl, confirmations: 1, pollInterval: POLL_MS, startBlock: chain.startBlock }],
    tokens: [{ chainId: 31337, address: chain.tokenAddress, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
  }));
  const serve = await startServer([BIN, 'serve', '--port', '0', '--allow-private-callbacks'], /serving (http:\/\/127\.0\.0\.1:\d+)/, { CRYPTOPAY_CHAINS: chainsFile });
  const deadline = performance.now() + 20_000;
  while (!/watching chain 31337/.test(serve.stderr())) {
    if (performance.now() > deadline) throw new Error(`serve does not watch the bench chain: ${serve.stderr()}`);
    await sleep(50);
  }
  const normalBase = await startServer([join(HERE, 'baseline-server.mjs'), 'insert', join(dir, 'baseline-normal.db'), 'normal'], /baseline serving (http:\S+)/);
  const fullBase = await startServer([join(HERE, 'baseline-server.mjs'), 'insert', join(dir, 'baseline-full.db'), 'full'], /baseline serving (http:\S+)/);
  const fixedBase = await startServer([join(HERE, 'baseline-server.mjs'), 'fixed'], /baseline serving (http:\S+)/);
  // The least a correct create order is (the two addresses derived), for the record: not a target.
  const wallet = JSON.parse(cli(['merchant', 'show', merchant.mchId, '--json']));
  const deriveBase = await startServer([join(HERE, 'baseline-server.mjs'), 'derive', join(dir, 'baseline-derive.db'), wallet.evmXpub, wallet.tronXpub], /baseline serving (http:\S+)/);
  await chain.startPaying(toPay.map((o) => o.addresses.EVM));

  let bodyRun = 0;
  /** Fresh bodies for every product run: each signed with its own nonce and oid, as a merchant sends them. */
  const signBodies = (seconds, perSecond = POOL_RATE) => {
    const file = join(dir, `bodies-${bodyRun}.jsonl`);
    const now = Date.now();
    const tag = `${now.toString(36)}-${bodyRun++}`;
    writeBodies(file, Math.ceil(perSecond * seconds), (i) => {
      const b = { mchId: merchant.mchId, oid: `b-${tag}-${i}`, uid: `u${i % 1000}`, amount: '12.5', notifyUrl: hook, timestamp: now, nonce: `n-${tag}-${i}` };
      return JSON.stringify({ ...b, sign: sign(b, merchant.secret) });
    });
    return file;
  };
  const statusPath = `/api/v1/order/${probe.id}/status`;
  const payPath = `/pay/${probe.id}`;
  const get = (s, path, seconds = GET_SECONDS, headers = {}) => ({ url: s.url, path, seconds, servers: [s.child.pid], headers });
  // The page as a payer's browser asks for it (it takes gzip); the status GET as a merchant's
  // server does with curl or a plain HTTP client (nothing: its answer is not compressed anyway).
  const asBrowser = { 'Accept-Encoding': BROWSER_ACCEPT_ENCODING };
  const post = (s, bodies, seconds = POST_SECONDS) => ({ url: s.url, path: '/api/v1/order', seconds, bodies, servers: [s.child.pid] });

  // Warm-up: every server's code paths compiled before anything counts.
  log('warm-up');
  {
    const bodies = signBodies(WARMUP_SECONDS);
    await measure('warm-up fixed', get(fixedBase, '/', WARMUP_SECONDS));
    await measure('warm-up status', get(serve, statusPath, WARMUP_SECONDS));
    await measure('warm-up pay page', get(serve, payPath, WARMUP_SECONDS, asBrowser));
    if (!GETS_ONLY) {
      await measure('warm-up normal', post(normalBase, bodies, WARMUP_SECONDS));
      await measure('warm-up full', post(fullBase, bodies, WARMUP_SECONDS));
      await measure('warm-up create', post(serve, bodies, WARMUP_SECONDS));
      await measure('warm-up derive', post(deriveBase, bodies, WARMUP_SECONDS));
    }
  }

  const runs = [];
  for (let r = 0; r < REPEATS; r++) {
    const fixed = await measure(`#${r + 1} GET fixed JSON (node:http)`, get(fixedBase, '/'));
    const st = await measure(`#${r + 1} GET /order/{id}/status`, get(serve, statusPath));
    const page = await measure(`#${r + 1} GET /pay/{id}`, get(serve, payPath, GET_SECONDS, asBrowser));
    if (GETS_ONLY) {
      runs.push({ fixed, status: st, page });
      log(`#${r + 1}: status ${round((100 * st.rps) / fixed.rps, 0)}% of fixed; pay page ${round((100 * page.rps) / st.rps, 0)}% of status`);
      continue;
    }
    const bodies = signBodies(POST_SECONDS);
    const normal = await measure(`#${r + 1} POST node:http SHA-256 + insert, synchronous NORMAL`, post(normalBase, bodies));
    const create = await measure(`#${r + 1} POST /order (serve, durable)`, post(serve, bodies));
    const full = await measure(`#${r + 1} POST node:http SHA-256 + insert, synchronous FULL`, post(fullBase, bodies));
    const derived = await measure(`#${r + 1} POST node:http SHA-256 + 2 addresses derived + insert, FULL`, post(deriveBase, bodies));
    rmSync(bodies, { force: true });
    // The latency a merchant meets under a heavy load that is not the most serve can take: the
    // same 50 connections, each pausing between its requests so that together they offer half
    // of what serve sustained just above (at that most, every request queues behind the other
    // 49: p50 is 50 / rps by Little's law, whatever the server does). The FULL baseline under
    // the very same pacing, for comparison.
    const paceMs = Math.max(1, Math.round((1000 * CONNECTIONS) / (PACED_SHARE * create.rps)));
    // Twice what the pacing offers: a run that used more would say so (wrk.lua) and stop the bench.
    const pacedBodies = signBodies(POST_SECONDS, 2 * PACED_SHARE * create.rps);
    const paced = await measure(`#${r + 1} POST /order (serve, durable), paced: ${paceMs} ms a connection`, { ...post(serve, pacedBodies), delayMs: paceMs });
    const pacedFull = await measure(`#${r + 1} POST node:http SHA-256 + insert, FULL, paced the same`, { ...post(fullBase, pacedBodies), delayMs: paceMs });
    rmSync(pacedBodies, { force: true });
    runs.push({ fixed, status: st, page, normal, create, full, derived, paced, pacedFull });
    log(`#${r + 1}: status ${round((100 * st.rps) / fixed.rps, 0)}% of fixed; pay page ${round((100 * page.rps) / st.rps, 0)}% of status; create ${round((100 * create.rps) / normal.rps, 0)}% of NORMAL, ${round((100 * create.rps) / full.rps, 0)}% of FULL, ${round((100 * create.rps) / derived.rps, 0)}% of derive + FULL, p99 ${round(create.p99, 1)} ms`);
  }
  const paying = await chain.stopPaying();
  // The last payments' blocks, their detection and callbacks.
  await sleep(3 * Math.max(POLL_MS, BLOCK_SECONDS * 1000) + 1000);
  const serveMemory = memoryOf(serve.child.pid);
  const serveCpu = cpuSeconds(serve.child.pid);
  for (const s of [serve, normalBase, fullBase, fixedBase, deriveBase, receiver]) await stop(s.child);
  await chain.stop();
  if (GETS_ONLY) {
    const ratio = (a, b) => median(runs.map((x) => x[a].rps / x[b].rps));
    log(`GETs only, ${REPEATS} repeats (medians): status ${fmt(median(runs.map((x) => x.status.rps)))} rps, ${round(100 * ratio('status', 'fixed'), 0)}% of fixed JSON (${fmt(median(runs.map((x) => x.fixed.rps)))} rps); pay page ${fmt(median(runs.map((x) => x.page.rps)))} rps, ${round(100 * ratio('page', 'status'), 0)}% of status; load ${round(Math.min(...runs.flatMap((x) => [x.fixed.load, x.status.load, x.page.load])), 1)}-${round(Math.max(...runs.flatMap((x) => [x.fixed.load, x.status.load, x.page.load])), 1)}; serve peak RSS ${round(serveMemory.peak / 1e6, 1)} MB`);
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  const side = sideWork(toPay.map((o) => o.id));
  const check = spawnSync(NODE, [BIN, 'ledger', 'check'], { env, encoding: 'utf8' });
  log(`serve peak RSS ${round(serveMemory.peak / 1e6, 1)} MB; chain paid ${paying.sent} orders (${paying.failures} failed sends), ledger PAID ${side.paid}, order.paid callbacks delivered ${side.delivered}, pending ${side.pending}, failed ${side.failed}`);

  const derive = derivation();
  // The chain watcher's figures (bench/watch.mjs): its own anvil, ledger and serve.
  const sized = FULL || QUICK ? {} : { BENCH_WATCH_BLOCKS: '300', BENCH_WATCH_PER_BLOCK: '100', BENCH_WATCH_ORDERS: '200000', CALLBACKS_N: '2000', CALLBACKS_SAMPLES: '100', CALLBACKS_LOAD_SECONDS: '10' };
  const sub = (file) => {
    const t = performance.now();
    const l = load1();
    const r = spawnSync(NODE, [join(HERE, file)], { env: { ...env, ...sized }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
    if (r.status !== 0) throw new Error(`bench/${file} failed`);
    const out = JSON.parse(r.stdout);
    out.seconds = (performance.now() - t) / 1000;
    out.loads = [l, load1()];
    return out;
  };
  // BENCH_HTTP_ONLY=1 skips them, for working on the HTTP figures (not for the record).
  const skipped = { rows: [], notes: ['- bench/watch.mjs and bench/callbacks.mjs were skipped (BENCH_HTTP_ONLY).'], seconds: 0, loads: [] };
  const httpOnly = process.env.BENCH_HTTP_ONLY === '1';
  const watch = httpOnly ? skipped : sub('watch.mjs');
  const callbacks = httpOnly ? { ...skipped, notes: [] } : sub('callbacks.mjs');

  // Figures: medians over the repeats; ratios are the medians of each repeat's own ratio.
  const pick = (k, f) => median(runs.map((x) => f(x[k])));
  const ratio = (a, b) => median(runs.map((x) => x[a].rps / x[b].rps));
  const loads = (...ks) => {
    const ls = runs.flatMap((x) => ks.map((k) => x[k].load));
    return `${round(Math.min(...ls), 1)}-${round(Math.max(...ls), 1)}`;
  };
  const cpuPair = (a, b) => `${round(pick(a, (x) => x.clientCpuShare))} / ${round(pick(b, (x) => x.clientCpuShare))}`;
  const rps = (k) => fmt(pick(k, (x) => x.rps));
  const statusRatio = ratio('status', 'fixed');
  const createRatio = ratio('create', 'normal');
  const createFullRatio = ratio('create', 'full');
  const pageRatio = ratio('page', 'status');
  const createP99 = pick('create', (x) => x.p99);
  const pacedP99 = pick('paced', (x) => x.p99);
  // The least CPU a create order can take here, per repeat: what the NORMAL baseline itself
  // spends on a request (HTTP, the body, one SHA-256, one insert, no fsync) plus the two
  // addresses its answer carries, derived as serve's pool derives them; wrk's own CPU a POST
  // beside it. On every core doing nothing else, that is the most creates a second there can be.
  const cores = cpus().length;
  const perRequest = (x, share) => (1e6 * x[share]) / x.rps;
  const addressesUs = 2e6 / derive.rangeRate;
  const normalUs = median(runs.map((x) => perRequest(x.normal, 'serverCpuShare')));
  const wrkUs = median(runs.map((x) => perRequest(x.normal, 'clientCpuShare')));
  const floorUs = normalUs + addressesUs;
  const ceilings = runs.map((x) => (1e6 * cores) / (perRequest(x.normal, 'serverCpuShare') + addressesUs + perRequest(x.normal, 'clientCpuShare')));
  const ceiling = median(ceilings);
  const ceilingRatio = median(runs.map((x, i) => ceilings[i] / x.normal.rps));
  const pct = (x) => `${round(100 * x, 0)}%`;
  const span = (ls) => (ls.length ? `${round(Math.min(...ls), 1)}-${round(Math.max(...ls), 1)}` : '-');
  const targets = [
    ['`GET /api/v1/order/{id}/status`', `${rps('status')} rps vs ${rps('fixed')} rps (node:http, fixed JSON)`, pct(statusRatio), cpuPair('status', 'fixed'), loads('status', 'fixed'), 'at least 70%', statusRatio >= 0.7],
    ['signed `POST /api/v1/order`, durable', `${rps('create')} rps vs ${rps('normal')} rps (node:http, SHA-256 + insert, synchronous NORMAL)`, pct(createRatio), cpuPair('create', 'normal'), loads('create', 'normal'), 'at least 75% (issue #16)', createRatio >= 0.75 ? true : ceilingRatio < 0.75 ? 'cannot' : false],
    ['the most any create order could do against that baseline here', `${round(floorUs, 0)} µs of CPU a create at the least (the NORMAL baseline's own ${round(normalUs, 0)} µs a request + ${round(addressesUs, 0)} µs for the two addresses) + wrk's ${round(wrkUs, 1)} µs: at most ${fmt(ceiling)} creates/s on ${cores} cores`, pct(ceilingRatio), '-', loads('normal'), 'none (recorded): under 75%, the row above cannot be met', undefined],
    ['signed `POST /api/v1/order` vs the durable baseline', `${rps('create')} rps vs ${rps('full')} rps (node:http, SHA-256 + insert, synchronous FULL)`, pct(createFullRatio), cpuPair('create', 'full'), loads('create', 'full'), 'at least 75% (in place of the NORMAL one)', createFullRatio >= 0.75],
    ['signed `POST /api/v1/order`: p99 latency, 50 connections, as fast as they go', `${round(createP99, 1)} ms (p50 ${round(pick('create', (x) => x.p50), 1)} ms; the FULL baseline ${round(pick('full', (x) => x.p99), 1)} ms)`, '-', cpuPair('create', 'full'), loads('create', 'full'), 'at most 15 ms (issue #16)', createP99 <= 15],
    ['signed `POST /api/v1/order`: p99 latency, 50 connections offering half of that rate', `${round(pacedP99, 1)} ms (p50 ${round(pick('paced', (x) => x.p50), 1)} ms) at ${rps('paced')} rps; the FULL baseline paced the same: ${round(pick('pacedFull', (x) => x.p99), 1)} ms at ${rps('pacedFull')} rps`, '-', cpuPair('paced', 'pacedFull'), loads('paced', 'pacedFull'), 'at most 15 ms (in place of the row above)', pacedP99 <= 15],
    ['`GET /pay/{id}` (the payment page)', `${rps('page')} rps vs ${rps('status')} rps (the status GET above)`, pct(pageRatio), cpuPair('page', 'status'), loads('page', 'status'), 'at least 50%', pageRatio >= 0.5],
    ['`cryptopay --help` wall time', `${round(help.product, 1)} ms vs ${round(help.baseline, 1)} ms (\`node -e ''\`)`, `${round(help.ratio)}x`, '-', span(help.loads), 'at most 1.4x', help.ratio <= 1.4],
    ['`cryptopay order status <id>` (local ledger)', `${round(status.product, 1)} ms vs ${round(status.baseline, 1)} ms (\`node -e ''\`)`, `${round(status.ratio)}x`, '-', span(status.loads), 'at most 1.7x', status.ratio <= 1.7],
    ...[['`cryptopay --help`', help], ['`cryptopay order status <id>`', status]].filter(([, x]) => x.withCerts).map(([name, x]) => [
      `${name} with this machine's NODE_EXTRA_CA_CERTS set`, `${round(x.withCerts.product, 1)} ms vs ${round(x.withCerts.baseline, 1)} ms (\`node -e ''\`)`, `${round(x.withCerts.ratio)}x`, '-', span(x.withCerts.loads), 'none (recorded)', undefined,
    ]),
    ['`serve` RSS over the whole load (peak)', `${round(serveMemory.peak / 1e6, 1)} MB`, '-', '-', loads('status', 'page', 'create'), 'at most 150 MB', serveMemory.peak <= 150e6],
    ['signed `POST /api/v1/order` vs the least a correct create is', `${rps('create')} rps vs ${rps('derived')} rps (node:http, SHA-256 + the order's EVM and TRON addresses derived + insert, synchronous FULL)`, pct(ratio('create', 'derived')), cpuPair('create', 'derived'), loads('create', 'derived'), 'none (recorded)', undefined],
    ['address derivation, EVM + TRON, one core', `${fmt(derive.rate)} addresses/s`, '-', '-', '-', 'at least 5,000/s', derive.rate >= 5000],
    ...watch.rows.map(([a, b, c, d, e]) => [a, b, c, '-', span(watch.loads), d, e]),
    ...callbacks.rows.map(([a, b, c, d, e]) => [a, b, c, '-', span(callbacks.loads), d, e]),
  ];
  const verdict = (ok) => (ok === undefined ? '-' : ok === 'cannot' ? '**cannot be met here**' : ok ? 'pass' : '**miss**');
  const runRow = (r, name, x) => `| ${r + 1} | ${name} | ${fmt(x.rps)} | ${round(x.p50, 2)} | ${round(x.p99, 2)} | ${x.errors + x.non2xx} | ${round(x.clientCpuShare)} | ${round(x.serverCpuShare)} | ${round(x.othersCpu)} | ${round(x.load, 1)} | ${x.serverMemory ? `${mb(x.serverMemory.rss)} / ${mb(x.serverMemory.peak)}` : '-'} |`;
  const names = { fixed: 'GET fixed JSON, node:http', status: 'GET /order/{id}/status', page: 'GET /pay/{id}', normal: 'POST SHA-256 + insert, NORMAL', create: 'POST /order, serve', full: 'POST SHA-256 + insert, FULL', derived: 'POST SHA-256 + 2 addresses derived + insert, FULL', paced: 'POST /order, serve, paced (half its rate)', pacedFull: 'POST SHA-256 + insert, FULL, paced the same' };
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run.mjs) on ${started.toISOString()}${QUICK ? ' (BENCH_QUICK: short runs, not for the record)' : ''}, in ${round((Date.now() - started.getTime()) / 60_000, 1)} minutes.`,
    `Machine: ${cpus().length} cores (${cpu}), Node ${process.version}, ${wrkVersion.split(' [')[0]}. Load average (1, 5, 15 min) at the start: ${loadAtStart.join(', ')}; at the end: ${loadavg().map((x) => round(x, 1)).join(', ')}. ${cpus().length} cores: a load average above ~2.5 during a run (this bench's own client and server count for ~2) means other work shared the machine, and the absolute figures are low; the ratios, taken alternating in one run, suffer less.`,
    '',
    'Every figure is a median of repeated runs; a ratio is the median of the ratios of each repeat, product and baseline measured one after the other. "client CPU" is the load generator\'s CPU share (seconds of CPU per second of run, 1.0 = one core), product / baseline; "load" is the 1-minute load average during those runs (lowest-highest).',
    '',
    '| benchmark | measured | ratio | client CPU | load | target | result |',
    '|---|---|---|---|---|---|---|',
    ...targets.map(([name, measured, r, client, l, target, ok]) => `| ${name} | ${measured} | ${r} | ${client} | ${l} | ${target} | ${verdict(ok)} |`),
    '',
    '## How each figure was taken',
    '',
    `- HTTP load: wrk (${wrkVersion.split(' [')[0]}, from Debian's packages; installed by the bench with apt-get when missing), ${THREADS} threads, ${CONNECTIONS} connections, keep-alive, script \`bench/wrk.lua\`. Every run of every server in turn, ${REPEATS} repeats: GET fixed JSON (baseline), GET status, GET /pay/{id}, then POST baseline synchronous NORMAL, POST /order, POST baseline synchronous FULL, POST baseline deriving the addresses, then POST /order and the FULL baseline paced; GETs ${GET_SECONDS} s, POSTs ${POST_SECONDS} s, after a ${WARMUP_SECONDS} s warm-up of each. Ratios are taken per repeat, then the median.`,
    `- Paced create order: the same 50 connections, each waiting before each request for a random time (exponential, mean ${round(median(runs.map((x) => (1000 * CONNECTIONS) / (PACED_SHARE * x.create.rps))), 1)} ms, wrk.lua's \`delay\`) so that together they would offer ${round(100 * PACED_SHARE, 0)}% of the creates a second serve sustained in the same repeat (a connection waits for its answer as well as its pause: the rate offered is somewhat less, the one measured is in the row), with fresh bodies of their own (twice what the pacing offers); the FULL baseline gets the same bodies and the same pacing. As fast as 50 connections go, a request waits behind the other 49 (Little's law: mean latency = 50 / rps), so that p99 says how many creates a second there are, not how long one takes; paced below that, p99 is what one create costs a merchant under a heavy load.`,
    `- The most a create order could do against the NORMAL baseline: per repeat, the NORMAL baseline's server CPU a request (its CPU share / its rps) plus the CPU of two addresses derived as serve's address pool derives them (${fmt(derive.rangeRate)} addresses/s on one core, ranges of ${RANGE}, each written out), and wrk's CPU a POST in that run; ${cores} cores divided by their sum is the most creates a second a server could answer if it did nothing else: no nonce, no address rows, no validation, no fsync. Median of the repeats' ratios to the NORMAL baseline.`,
    `- While every run (product and baselines alike) goes on, \`serve\` runs as in production: its chain watcher polls (every ${POLL_MS} ms, confirmations 1) a local anvil mining a block every ${BLOCK_SECONDS} s, in which the bench pays ${PAID_PER_BLOCK} orders (a \`transferBatch\` of the test USDT), and its callback sender delivers their order.paid events to a local receiver (\`bench/baseline-server.mjs fixed\`, its own process). Over the runs the chain paid ${fmt(paying.sent)} orders (${paying.failures} sends failed); the watcher recorded ${fmt(side.paid)} of them PAID and ${fmt(side.delivered)} order.paid callbacks were delivered (${side.pending} pending, ${side.failed} failed at the end). \`serve --allow-private-callbacks\` (the receiver is on 127.0.0.1).`,
    `- Signed \`POST /api/v1/order\`: each product run as fast as it goes gets ${fmt(POOL_RATE * POST_SECONDS)} bodies signed just before it (${fmt(POOL_RATE)} per second of run, more than any run used: wrk.lua reports a pool run past, and the bench would stop), each with its own oid and nonce and a notifyUrl; \`bench/wrk.lua\` hands thread k of n the lines k, k+n, ...: no body is sent twice. The baselines take the same bodies. Merchant rate limit 0. Errors or non-2xx answers, product: ${runs.reduce((s, x) => s + x.create.errors + x.create.non2xx, 0)}; baselines: ${runs.reduce((s, x) => s + x.normal.errors + x.normal.non2xx + x.full.errors + x.full.non2xx, 0)}.`,
    `- Baselines (\`bench/baseline-server.mjs\`): \`fixed\`, node:http answering a fixed JSON; \`insert ... normal\`, node:http reading the body, one SHA-256 of it and one SQLite insert on a WAL file with synchronous NORMAL (no fsync per commit: not durable); \`insert ... full\`, the same with synchronous FULL, as the ledger (an fsync per request); \`derive\`, the FULL one that also derives the order's EVM and TRON addresses (the next index of the bench merchant's two account xpubs, serve's own derivation code, on its one thread) and inserts them with the row: the least a create order the spec allows can be (its answer carries both addresses), done the plainest way. It is not a target of issue #16; it is recorded to show how much of a create is that work.`,
    '- `GET /pay/{id}` and the status GET ask for the same order (PENDING_PAY, with an EVM and a TRON address: the page draws two QR codes). The page is asked for as a browser does, with `Accept-Encoding: ${BROWSER_ACCEPT_ENCODING}`, and is answered gzip-coded (~6 KB instead of ~16 KB); the status GET is sent without it (a merchant\'s curl or plain client), and its small JSON is never compressed.',
    `- Start-up: \`node bin/cryptopay --help\` and \`node bin/cryptopay order status <id>\` (ledger with one merchant and one order) against \`node -e ''\`, ${STARTUP_RUNS} runs each after one warm-up, alternating; wall time of the whole spawned process; the ratio is the median of the pairs' ratios. Both run without NODE_EXTRA_CA_CERTS: Node 20 loads those certificates at every start (~40 ms here), which inflates the baseline; where the environment sets it, the ratios with it are recorded in rows of their own.`,
    `- RSS: VmHWM of the \`serve\` process after every HTTP run above (and its watcher's and sender's work), ${fmt(side.orders)} orders in its ledger by then. serve used ${round(serveCpu, 0)} s of CPU in all.`,
    `- Derivation: ${derive.n} EVM and ${derive.n} TRON addresses from a fresh wallet's account xpubs, indices in order, in this process (one core) after \`warmUpDerivation()\` as \`serve\` does, one by one (the figure in the table: ${fmt(derive.rate)} addresses/s) and in ranges of ${RANGE} as serve's address pool derives them (${fmt(derive.rangeRate)} addresses/s).`,
    `- Ledger check after the load: ${check.status === 0 ? 'ok' : `FAILED: ${check.stderr.trim()}`}.`,
    `- bench/watch.mjs (${round(watch.seconds, 0)} s) and bench/callbacks.mjs (${round(callbacks.seconds, 0)} s) ran after the HTTP runs${FULL || QUICK ? '' : ', at the sizes `npm run bench` gives them (BENCH_FULL=1 for their full sizes): ' + Object.entries(sized).map(([k, v]) => `${k}=${v}`).join(', ')}.`,
    ...watch.notes,
    ...callbacks.notes,
    '',
    '### Every HTTP run',
    '',
    'rps, latency (ms) and errors as wrk counts them; CPU in cores: client (wrk), server (the process under load, all its threads), others (the rest of the machine: other users, the chain, the payer, the receiver); server RSS after the run, and its peak (VmHWM) so far.',
    '',
    '| repeat | run | rps | p50 | p99 | errors + non-2xx | client CPU | server CPU | others CPU | load | server RSS MB: after / peak so far |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.flatMap((x, r) => Object.keys(names).map((k) => runRow(r, names[k], x[k]))),
    '',
    readFileSync(join(HERE, 'CHANGES.md'), 'utf8').trim(),
    '',
  ];
  writeFileSync(join(HERE, 'RESULTS.md'), lines.join('\n'));
  log(lines.slice(7, 9 + targets.length).join('\n'));
  rmSync(dir, { recursive: true, force: true });
}

await main();
