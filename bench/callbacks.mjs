// Callbacks (issue #13), run by bench/run.mjs or alone (`npm run build && node bench/callbacks.mjs`):
//   1. deliveries per second from the outbox's sender to a local receiver, against a bare loop of
//      signed POSTs with Node's own http client to the same receiver, alternating, in this run;
//   2. the first attempt after the committing change (a refund through the API) under the
//      create-order load of bench/run.mjs (wrk): p99 of the time from sending the refund to the
//      callback's arrival.
// Prints {rows, notes} as JSON on stdout (run.mjs adds them to RESULTS.md); progress on stderr.
// Sizes: BENCH_QUICK=1 (smoke), or CALLBACKS_N, CALLBACKS_SAMPLES, CALLBACKS_LOAD_SECONDS,
// CALLBACKS_REPEATS. CALLBACKS_PARTS=rate (or latency) runs one part alone. A/B of the sender:
// CALLBACKS_AB=DIR_A,DIR_B (checkouts with dist/ built, e.g. a `git archive` of main) runs the
// product part with each build's CallbackWorker in turn (the ledgers are made by this tree's);
// every run prints this process's CPU per delivery (the sender, or the bare loop), which the
// other work on the machine distorts far less than the rate. CALLBACKS_CPU_PROF=FILE writes a
// V8 CPU profile of the first product run alone (read it with bench/flame.mjs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '../dist/signing/index.js';
import { openLedger } from '../dist/store/db.js';
import { LocalPaymentService } from '../dist/store/local-service.js';
import { ensureWrk, runWrk, writeBodies } from './wrk.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.CALLBACKS_N ?? (QUICK ? 500 : 5000));
const SAMPLES = Number(process.env.CALLBACKS_SAMPLES ?? (QUICK ? 50 : 300));
const LOAD_SECONDS = Number(process.env.CALLBACKS_LOAD_SECONDS ?? (QUICK ? 5 : 20));
const REPEATS = Number(process.env.CALLBACKS_REPEATS ?? (QUICK ? 1 : 3));
const PARTS = (process.env.CALLBACKS_PARTS ?? 'rate,latency').split(',');
/** In flight at once: the sender's per-host bound, and the baseline's loops. */
const CONCURRENCY = 16;
const CONNECTIONS = 50;

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'bin', 'cryptopay');
const NODE = process.execPath;
/** The builds whose sender is measured: this tree's, or CALLBACKS_AB's. */
const BUILDS = await Promise.all((process.env.CALLBACKS_AB ? process.env.CALLBACKS_AB.split(',') : [join(HERE, '..')]).map(async (d) => ({
  name: d,
  ...(await import(join(d, 'dist', 'callbacks', 'worker.js'))),
})));
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-bench-callbacks-'));
const log = (s) => process.stderr.write(`${s}\n`);
const round = (x, d = 0) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};

function startProcess(args, pattern, env = process.env) {
  const child = spawn(NODE, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = pattern.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}
async function stop(child) {
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

/** A ledger with one merchant and `n` paid orders whose order.paid events wait in the outbox. */
async function ledgerWithEvents(file, n, notifyUrl) {
  const ledger = openLedger(file);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' }, allowPrivateCallbacks: true });
  const m = await service.addMerchant({ name: 'Bench', generateWallet: true, rateLimit: 0 });
  const ids = [];
  for (let i = 0; i < n; i += 200) {
    const batch = await Promise.all(Array.from({ length: Math.min(200, n - i) }, (_, k) =>
      service.createOrder({ mchId: m.merchant.mchId, oid: `cb-${i + k}`, uid: `u${(i + k) % 100}`, amount: '10', notifyUrl })));
    await Promise.all(batch.map((o) => service.markPaid({ id: o.id, txHash: `0x${randomBytes(32).toString('hex')}` })));
    ids.push(...batch.map((o) => o.id));
  }
  return { ledger, service, mchId: m.merchant.mchId, secret: m.secret, ids };
}

let profiled = false;
async function startProfile() {
  profiled = true;
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((res, rej) => session.post(method, params, (e, r) => (e ? rej(e) : res(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

async function productRun(receiverUrl, round_, build = BUILDS[0]) {
  const { CallbackWorker, openSenderLedger } = build;
  const file = join(dir, `product-${round_}-${BUILDS.indexOf(build)}.db`);
  const { ledger: setupLedger, mchId } = await ledgerWithEvents(file, N, receiverUrl);
  setupLedger.close();
  // As serve runs it: a connection of its own, committing without fsync.
  const ledger = openSenderLedger(file);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' } });
  let delivered = 0;
  let failed = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  // serve's limits (in flight 128 in all, 16 to one host): with one receiver, 16 at once.
  const worker = new CallbackWorker({
    ledger, now: Date.now, allowPrivate: true, pollMs: 50, perHost: CONCURRENCY,
    onAttempt: (_row, _r, status) => {
      if (status === 'delivered') delivered++;
      else failed++;
      if (delivered + failed === N) resolveDone();
    },
  });
  const profile = process.env.CALLBACKS_CPU_PROF && !profiled ? await startProfile() : undefined;
  const t = performance.now();
  const cpu = process.cpuUsage();
  worker.start();
  await done;
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  if (profile) await profile.stop(process.env.CALLBACKS_CPU_PROF);
  await worker.stop();
  const left = (await service.listCallbacks({ status: 'pending', mchId, limit: 10 })).length;
  ledger.close();
  return { rate: N / seconds, failed, left, cpuUs: (used.user + used.system) / N };
}

async function baselineRun(receiverUrl) {
  const secret = randomBytes(24).toString('base64url');
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const u = new URL(receiverUrl);
  let next = 0;
  let failed = 0;
  const post = (body) => new Promise((resolve) => {
    const bytes = Buffer.from(body);
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.end(bytes);
  });
  const loop = async () => {
    while (next < N) {
      const i = next++;
      const body = { event: 'order.paid', eventId: `evt_${i}`, id: `ord_${i}`, oid: `cb-${i}`, uid: 'u1', amount: '10', paidAmount: '10', status: 'PAID', mchId: 'M100001', timestamp: Date.now(), nonce: randomBytes(12).toString('hex') };
      const status = await post(JSON.stringify({ ...body, sign: sign(body, secret) }));
      if (status < 200 || status >= 300) failed++;
    }
  };
  const t = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  return { rate: N / seconds, failed, cpuUs: (used.user + used.system) / N };
}

/** Part 2: refunds through serve's API while wrk creates orders; each refund's callback timed. */
async function latencyUnderLoad() {
  const arrivals = new Map();
  const receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d)).on('end', () => {
      const at = Date.now();
      try {
        const body = JSON.parse(raw);
        // From the refund's own time (taken by serve before its transaction) to the arrival here.
        if (body.event === 'order.refunded') arrivals.set(body.id, at - body.refundTime);
      } catch {}
      res.writeHead(200).end('{}');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${receiver.address().port}/hook`;
  const file = join(dir, 'serve.db');
  const { ledger, mchId, secret, ids } = await ledgerWithEvents(file, SAMPLES, hook);
  ledger.close();
  const env = { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: join(dir, 'config') };
  delete env.CRYPTOPAY_REMOTE;
  const serve = await startProcess([BIN, 'serve', '--port', '0', '--db', file, '--allow-private-callbacks'], /serving (http:\/\/127\.0\.0\.1:\d+)/, env);
  try {
    // The order.paid events of the setup go out first, before the clock starts.
    await sleep(1500);
    const now = Date.now();
    // The create-order load of bench/run.mjs: wrk, one pre-signed body per request.
    const bodies = join(dir, 'bodies.jsonl');
    writeBodies(bodies, 16_000 * LOAD_SECONDS, (i) => {
      const b = { mchId, oid: `load-${now}-${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${now}-${i}` };
      return JSON.stringify({ ...b, sign: sign(b, secret) });
    });
    const load = runWrk({ url: serve.url, path: '/api/v1/order', seconds: LOAD_SECONDS, connections: CONNECTIONS, threads: 2, bodies, servers: [serve.child.pid] });
    await sleep(1000);
    const gap = Math.max(5, ((LOAD_SECONDS - 2) * 1000) / SAMPLES);
    for (const id of ids) {
      const b = { mchId, id, amount: '1', timestamp: Date.now(), nonce: randomBytes(12).toString('hex') };
      const r = await fetch(`${serve.url}/api/v1/refund`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...b, sign: sign(b, secret) }) });
      const j = await r.json();
      if (j.code !== 1) throw new Error(`refund refused: ${j.msg}`);
      await sleep(gap);
    }
    const result = await load;
    const end = performance.now() + 15_000;
    while (arrivals.size < ids.length && performance.now() < end) await sleep(20);
    const latencies = ids.filter((id) => arrivals.has(id)).map((id) => arrivals.get(id));
    if (result.exhausted) throw new Error('wrk ran out of pre-signed bodies');
    return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), samples: latencies.length, missing: ids.length - latencies.length, loadRps: result.rps, loadP99: result.p99, loadClientCpu: result.clientCpuShare };
  } finally {
    await stop(serve.child);
    receiver.close();
  }
}

async function rateRuns() {
  const receiver = await startProcess([join(HERE, 'baseline-server.mjs'), 'fixed'], /baseline serving (http:\S+)/);
  const products = BUILDS.map(() => []);
  const baselines = [];
  try {
    // One round of each first, not counted: the first bare loop of a process ran at a third of
    // the later ones (cold JIT, the receiver's first connections), which made its repeat's
    // ratio 100-109% and pulled the medians apart.
    await baselineRun(`${receiver.url}/hook`);
    for (const b of BUILDS) await productRun(`${receiver.url}/hook`, 'warm', b);
    for (let r = 0; r < REPEATS; r++) {
      baselines.push(await baselineRun(`${receiver.url}/hook`));
      log(`callbacks #${r + 1}: bare loop ${round(baselines.at(-1).rate)}/s, ${round(baselines.at(-1).cpuUs, 1)} µs CPU each (load ${loadavg()[0].toFixed(2)})`);
      // A/B: the builds' order turns every round, so neither always runs right after the baseline.
      const order = BUILDS.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order) {
        const p = await productRun(`${receiver.url}/hook`, r, BUILDS[i]);
        products[i].push(p);
        log(`callbacks #${r + 1}: sender ${BUILDS.length > 1 ? `${BUILDS[i].name} ` : ''}${round(p.rate)}/s (${round((100 * p.rate) / baselines.at(-1).rate)}% of the loop), ${round(p.cpuUs, 1)} µs CPU each (load ${loadavg()[0].toFixed(2)})`);
      }
    }
  } finally {
    await stop(receiver.child);
  }
  for (const [i, b] of BUILDS.entries()) {
    if (BUILDS.length > 1) log(`callbacks: ${b.name}: median ${round(median(products[i].map((p) => p.rate)))}/s, ${round(median(products[i].map((p) => p.cpuUs)), 1)} µs CPU per delivery`);
  }
  log(`callbacks: bare loop median ${round(median(baselines.map((b) => b.rate)))}/s, ${round(median(baselines.map((b) => b.cpuUs)), 1)} µs CPU per POST`);
  return { products: products[0], baselines };
}

async function main() {
  ensureWrk(log);
  const rows = [];
  const notes = [];
  if (PARTS.includes('rate')) {
    const { products, baselines } = await rateRuns();
    const product = median(products.map((p) => p.rate));
    const baseline = median(baselines.map((b) => b.rate));
    // Each repeat's ratio (its product run against the baseline run just before it), then their
    // median, as every other ratio of RESULTS.md.
    const ratio = median(products.map((p, i) => p.rate / baselines[i].rate));
    rows.push(['callbacks delivered per second, local receiver', `${round(product)}/s vs ${round(baseline)}/s`, `${round(100 * ratio)}%`, 'at least 50%', ratio >= 0.5]);
    notes.push(`- Callbacks delivered per second: ${N.toLocaleString('en')} order.paid events waiting in a fresh ledger's outbox, sent by the CallbackWorker of serve (in this process, with serve's limits: ${CONCURRENCY} in flight to the one receiver, of 128 in all; each attempt leased, signed and recorded in the ledger) to \`bench/baseline-server.mjs fixed\` on 127.0.0.1. Baseline in the same run, alternating, after one uncounted round of each: ${CONCURRENCY} loops of signed POSTs of the same shape with Node's http client (keep-alive) to the same receiver, nothing recorded. Failed attempts: product ${products.reduce((s, p) => s + p.failed, 0)}, baseline ${baselines.reduce((s, b) => s + b.failed, 0)}. CPU of this process per delivery (median): product ${round(median(products.map((p) => p.cpuUs)), 1)} µs, baseline ${round(median(baselines.map((b) => b.cpuUs)), 1)} µs. Median of ${REPEATS} (ratios ${products.map((p, i) => `${round((100 * p.rate) / baselines[i].rate)}%`).join(', ')}).`);
  }
  if (PARTS.includes('latency')) {
    const latency = await latencyUnderLoad();
    log(`callbacks: first attempt p99 ${round(latency.p99, 1)} ms (p50 ${round(latency.p50, 1)} ms) over ${latency.samples} refunds under ${round(latency.loadRps)} rps of create order`);
    rows.push(['callback first attempt after the commit (p99, under create-order load)', `${round(latency.p99, 1)} ms (p50 ${round(latency.p50, 1)} ms)`, '-', 'at most 100 ms', latency.p99 <= 100 && latency.missing === 0]);
    notes.push(`- First attempt after the commit: a \`serve --allow-private-callbacks\` process under wrk's create-order load (${CONNECTIONS} connections, ${LOAD_SECONDS} s, ${round(latency.loadRps)} rps, p99 ${round(latency.loadP99, 1)} ms, client CPU ${round(latency.loadClientCpu, 2)}); ${SAMPLES} refunds sent one at a time through \`POST /api/v1/refund\` during it, each timed from the refund's own time (its \`refundTime\`, taken by serve before the refund's transaction) to its order.refunded reaching a receiver in the bench process, in milliseconds of the same clock (an upper bound of commit to first attempt: it includes the refund's transaction and its wait for a group commit). Missing callbacks: ${latency.missing}. Commits by another process (a CLI \`order mark-paid\`) are found by the sender's poll, every 500 ms, and are not in this figure.`);
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ rows, notes })}\n`);
}

await main();
