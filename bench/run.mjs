// npm run bench: every benchmark of the speed issue, each figure a median over repeated runs and
// a ratio against a baseline measured in the same run (the machine is shared and noisy).
// Rewrites bench/RESULTS.md. BENCH_QUICK=1 shortens every run, for trying the script itself.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDeriver, generateWallet, warmUpDerivation } from '../dist/chains/derive.js';
import { sign } from '../dist/signing/index.js';

const QUICK = process.env.BENCH_QUICK === '1';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'bin', 'cryptopay');
const NODE = process.execPath;
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-bench-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(dir, 'ledger.db'), XDG_CONFIG_HOME: join(dir, 'config') };
delete env.CRYPTOPAY_REMOTE;

const REPEATS = QUICK ? 1 : 3;
const STARTUP_RUNS = QUICK ? 5 : 31;
const POST_SECONDS = QUICK ? 3 : 20;
const GET_SECONDS = QUICK ? 3 : 10;
const CONNECTIONS = 50;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const log = (s) => process.stderr.write(`${s}\n`);

function cli(args) {
  const r = spawnSync(NODE, [BIN, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cryptopay ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function timed(args) {
  const t = performance.now();
  const r = spawnSync(NODE, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

/** Alternates baseline and product so both see the same machine. */
function startup(label, args) {
  const base = [];
  const prod = [];
  for (let i = 0; i < STARTUP_RUNS; i++) {
    base.push(timed(['-e', '']));
    prod.push(timed([BIN, ...args]));
  }
  const b = median(base);
  const p = median(prod);
  log(`${label}: ${round(p, 1)} ms vs node -e '' ${round(b, 1)} ms`);
  return { baseline: b, product: p, ratio: p / b };
}

function startServer(args, pattern) {
  const child = spawn(NODE, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = pattern.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

async function stop(child) {
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

function procStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) * 1024;
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the "pid (comm) " prefix.
  return { cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100, peakRss: hwm };
}

async function load(url, { path, method = 'GET', bodies, body, seconds }) {
  let next = 0;
  const request = { method, path };
  if (method === 'POST') request.headers = { 'content-type': 'application/json' };
  if (body) request.body = body;
  if (bodies) {
    request.setupRequest = (req) => {
      if (next >= bodies.length) throw new Error('ran out of pre-signed bodies');
      return { ...req, body: bodies[next++] };
    };
  }
  const requests = [request];
  const client0 = process.cpuUsage();
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, requests });
  const client = process.cpuUsage(client0);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
    clientCpuShare: (client.user + client.system) / 1e6 / seconds,
  };
}

function createOrderBodies(n, mchId, secret) {
  const now = Date.now();
  const bodies = new Array(n);
  for (let i = 0; i < n; i++) {
    const body = { mchId, oid: `bench-${now}-${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${now}-${i}` };
    bodies[i] = JSON.stringify({ ...body, sign: sign(body, secret) });
  }
  return bodies;
}

/** Product and baseline in turn, REPEATS times; figures are medians. */
async function throughput(label, product, baseline, run) {
  const p = [];
  const b = [];
  for (let r = 0; r < REPEATS; r++) {
    b.push(await run(baseline, 'baseline'));
    p.push(await run(product, 'product'));
    log(`${label} #${r + 1}: product ${round(p.at(-1).rps, 0)} rps (p99 ${p.at(-1).p99} ms), baseline ${round(b.at(-1).rps, 0)} rps`);
  }
  const pick = (xs, k) => median(xs.map((x) => x[k]));
  return {
    product: { rps: pick(p, 'rps'), p99: pick(p, 'p99'), clientCpuShare: pick(p, 'clientCpuShare'), serverCpuShare: pick(p, 'serverCpuShare'), errors: p.reduce((s, x) => s + x.errors + x.non2xx, 0) },
    baseline: { rps: pick(b, 'rps'), p99: pick(b, 'p99'), clientCpuShare: pick(b, 'clientCpuShare'), serverCpuShare: pick(b, 'serverCpuShare'), errors: b.reduce((s, x) => s + x.errors + x.non2xx, 0) },
  };
}

function derivation() {
  warmUpDerivation();
  const rates = [];
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
  }
  log(`derivation: ${round(median(rates), 0)} addresses/s`);
  return { rate: median(rates), n: N };
}

async function main() {
  const started = new Date();
  log(`bench in ${dir}`);

  const help = startup('cryptopay --help', ['--help']);
  const merchant = JSON.parse(cli(['merchant', 'add', '--name', 'Bench', '--generate-wallet', '--rate-limit', '0', '--json']));
  const order = JSON.parse(cli(['order', 'create', '--oid', 'status-probe', '--uid', 'u1', '--amount', '1', '--json']));
  const status = startup('cryptopay order status', ['order', 'status', order.id]);

  const serve = await startServer([BIN, 'serve', '--port', '0'], /serving (http:\/\/127\.0\.0\.1:\d+)/);
  const insertBase = await startServer([join(HERE, 'baseline-server.mjs'), 'insert', join(dir, 'baseline.db')], /baseline serving (http:\S+)/);
  const fixedBase = await startServer([join(HERE, 'baseline-server.mjs'), 'fixed'], /baseline serving (http:\S+)/);

  const runPost = async (server, kind) => {
    // Fresh bodies for every product request (a reused nonce is refused); the baseline takes one.
    const bodies = createOrderBodies(kind === 'product' ? 200_000 : 1, merchant.mchId, merchant.secret);
    const before = procStat(server.child.pid);
    const res = await load(server.url, {
      path: '/api/v1/order',
      method: 'POST',
      seconds: POST_SECONDS,
      ...(kind === 'product' ? { bodies } : { body: bodies[0] }),
    });
    const after = procStat(server.child.pid);
    return { ...res, serverCpuShare: (after.cpuSeconds - before.cpuSeconds) / POST_SECONDS };
  };
  const post = await throughput('POST /order', serve, insertBase, runPost);
  const servePeakRss = procStat(serve.child.pid).peakRss;

  const runGet = async (server, kind) => {
    const before = procStat(server.child.pid);
    const res = await load(server.url, { path: kind === 'product' ? `/api/v1/order/${order.id}/status` : '/', seconds: GET_SECONDS });
    const after = procStat(server.child.pid);
    return { ...res, serverCpuShare: (after.cpuSeconds - before.cpuSeconds) / GET_SECONDS };
  };
  const get = await throughput('GET /order/{id}/status', serve, fixedBase, runGet);

  for (const s of [serve, insertBase, fixedBase]) await stop(s.child);
  const check = spawnSync(NODE, [BIN, 'ledger', 'check'], { env, encoding: 'utf8' });
  const derive = derivation();
  // The chain watcher's figures (bench/watch.mjs): its own anvil, ledger and serve.
  const watchRun = spawnSync(NODE, [join(HERE, 'watch.mjs')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  if (watchRun.status !== 0) throw new Error('bench/watch.mjs failed');
  const watch = JSON.parse(watchRun.stdout);
  // Callbacks (bench/callbacks.mjs): its own ledgers, receivers and serve.
  const callbacksRun = spawnSync(NODE, [join(HERE, 'callbacks.mjs')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  if (callbacksRun.status !== 0) throw new Error('bench/callbacks.mjs failed');
  const callbacks = JSON.parse(callbacksRun.stdout);

  const targets = [
    ['`cryptopay --help` wall time', `${round(help.product, 1)} ms vs ${round(help.baseline, 1)} ms`, `${round(help.ratio)}x`, 'at most 1.5x', help.ratio <= 1.5],
    ['`cryptopay order status <id>` (local ledger)', `${round(status.product, 1)} ms vs ${round(status.baseline, 1)} ms`, `${round(status.ratio)}x`, 'at most 2x', status.ratio <= 2],
    ['`serve`: signed `POST /order`', `${round(post.product.rps, 0)} rps vs ${round(post.baseline.rps, 0)} rps`, `${round((100 * post.product.rps) / post.baseline.rps, 0)}%`, 'at least 40%', post.product.rps >= 0.4 * post.baseline.rps],
    ['`serve`: `POST /order` p99 latency', `${post.product.p99} ms`, '-', 'at most 25 ms', post.product.p99 <= 25],
    ['`serve`: `GET /order/{id}/status`', `${round(get.product.rps, 0)} rps vs ${round(get.baseline.rps, 0)} rps`, `${round((100 * get.product.rps) / get.baseline.rps, 0)}%`, 'at least 60%', get.product.rps >= 0.6 * get.baseline.rps],
    ['address derivation, EVM + TRON, one core', `${round(derive.rate, 0)} addresses/s`, '-', 'at least 5,000/s', derive.rate >= 5000],
    ['`serve` peak memory under the create-order load', `${round(servePeakRss / 1e6, 1)} MB RSS`, '-', 'at most 150 MB', servePeakRss <= 150e6],
    ...watch.rows,
    ...callbacks.rows,
  ];
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run.mjs) on ${started.toISOString()}${QUICK ? ' (BENCH_QUICK: short runs, not for the record)' : ''}.`,
    `Machine: ${cpus().length} cores (${cpu}), Node ${process.version}. Every figure is a median of repeated runs; ratios are against a baseline measured in the same run, alternating with the product.`,
    '',
    '| benchmark | measured | ratio | target | result |',
    '|---|---|---|---|---|',
    ...targets.map(([name, measured, ratio, target, ok]) => `| ${name} | ${measured} | ${ratio} | ${target} | ${ok ? 'pass' : '**miss**'} |`),
    '',
    '## How each figure was taken',
    '',
    `- Start-up: \`node bin/cryptopay --help\` and \`node bin/cryptopay order status <id>\` (ledger with one merchant and one order) against \`node -e ''\`, ${STARTUP_RUNS} runs each, alternating; median wall time of the spawned process.`,
    `- \`POST /api/v1/order\`: autocannon in this process, ${CONNECTIONS} connections, ${POST_SECONDS} s, ${REPEATS} runs each, alternating with the baseline. 200,000 bodies are signed ahead of each product run (distinct oid and nonce each; merchant rate limit 0). Baseline: \`bench/baseline-server.mjs insert\`, a node:http server doing one SHA-256 and one SQLite insert per request on a WAL file with synchronous=FULL, as the ledger. Product errors or non-2xx answers: ${post.product.errors}; baseline: ${post.baseline.errors}.`,
    `- CPU shares (seconds of CPU per second of run; 1.0 = one core): POST product server ${round(post.product.serverCpuShare)}, client ${round(post.product.clientCpuShare)}; baseline server ${round(post.baseline.serverCpuShare)}, client ${round(post.baseline.clientCpuShare)}. GET product server ${round(get.product.serverCpuShare)}, client ${round(get.product.clientCpuShare)}; baseline server ${round(get.baseline.serverCpuShare)}, client ${round(get.baseline.clientCpuShare)}. The machine has ${cpus().length} cores, shared by client and server.`,
    `- \`GET /api/v1/order/{id}/status\`: the same way, ${GET_SECONDS} s runs, against \`bench/baseline-server.mjs fixed\` answering a fixed JSON. p99: product ${get.product.p99} ms, baseline ${get.baseline.p99} ms.`,
    `- Derivation: ${derive.n} EVM and ${derive.n} TRON addresses from a fresh wallet's account xpubs, indices in order, in this process (one core) after \`warmUpDerivation()\` as \`serve\` does.`,
    `- Peak memory: VmHWM of the \`serve\` process after all POST runs.`,
    `- Ledger check after the load: ${check.status === 0 ? 'ok' : `FAILED: ${check.stderr.trim()}`}.`,
    ...watch.notes,
    ...callbacks.notes,
    '',
    readFileSync(join(HERE, 'CHANGES.md'), 'utf8').trim(),
    '',
  ];
  writeFileSync(join(HERE, 'RESULTS.md'), lines.join('\n'));
  log(lines.slice(5, 5 + targets.length + 2).join('\n'));
  rmSync(dir, { recursive: true, force: true });
}

await main();
