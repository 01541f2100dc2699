// A/B aid for the signed create order, not a benchmark of record: serve of two (or more) builds
// (ROOT/bin/cryptopay; each root must hold its dist/) under wrk's create-order load, alternating,
// and the node:http SHA-256 + insert (synchronous NORMAL) baseline in each round.
//   [PARALLEL=1] [PACE_MS=20] node bench/ab-create.mjs [rounds] [seconds] ROOT[::FLAGS]...  (npm run build first)
// ROOT::FLAGS runs that root's serve with those node flags (space-separated), so one build can be
// compared with itself under another setting: /work/main /work/main::--single-threaded-gc
// PACE_MS: each connection waits a random time of that mean (ms) before each request (wrk.lua's
// delay): a paced load below serve's most, for its latency there; the baseline is not paced.
// PARALLEL=1 runs the builds' serves at once, each under its own wrk: on a machine others load,
// both then share the same load, which alternating runs cannot promise.
// Each serve gets a fresh ledger (one merchant, rate limit 0; AB_ORDERS=N: N orders in it too), runs without the chain watcher,
// with --allow-private-callbacks and a notifyUrl in every body (as bench/run.mjs sends them),
// after a warm-up of 3 s. Per run: rps, p50/p99, and CPU per request in microseconds from
// /proc/PID/stat (utime + stime of every thread over the run, divided by the requests), the
// serving thread's alone ("main"), and the 1-minute load average.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '../dist/signing/index.js';
import { cpuSeconds, ensureWrk, runWrk, writeBodies } from './wrk.mjs';
import { fillLedger } from './bulk-ledger.mjs';

const [roundsArg = '3', secondsArg = '8', ...roots] = process.argv.slice(2);
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
if (roots.length === 0) roots.push(fileURLToPath(new URL('..', import.meta.url)));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
ensureWrk();

const threadCpu = (pid, tid) => {
  try {
    const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return 0;
  }
};
/** CPU seconds of each thread of a process, by thread id. */
const threads = (pid) => new Map(readdirSync(`/proc/${pid}/task`).map((t) => [t, threadCpu(pid, t)]));

function start(args, env, pattern) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let e = '';
    child.stderr.on('data', (d) => {
      e += d;
      const x = pattern.exec(e);
      if (x) resolve({ child, url: x[1] });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${e}`)));
  });
}
const stop = async (child) => {
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
};

/** A serve of `root` on a fresh ledger, warmed up; measure() runs one wrk load on it. */
async function serveOf(spec, label, dir, hook) {
  // ROOT::FLAGS (space-separated node flags for that serve alone): one build under two settings.
  const [root, flags = ''] = spec.split('::');
  const d = mkdtempSync(join(dir, 'r-'));
  const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(d, 'l.db'), XDG_CONFIG_HOME: d };
  delete env.CRYPTOPAY_CHAINS;
  delete env.CRYPTOPAY_REMOTE;
  const bin = join(root, 'bin', 'cryptopay');
  const cli = (...a) => JSON.parse(spawnSync(process.execPath, [bin, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
  let m;
  if (template) {
    // A copy of the ledger with AB_ORDERS orders, for each serve alike.
    copyFileSync(template.file, join(d, 'l.db'));
    m = template.merchant;
  } else m = cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
  const s = await start([...flags.split(' ').filter(Boolean), bin, 'serve', '--port', '0', '--no-watch', '--allow-private-callbacks'], env, /serving (http:\S+?)\/api/);
  const bodies = (n, tag) => {
    const file = join(d, `${tag}.jsonl`);
    const now = Date.now();
    writeBodies(file, n, (i) => {
      const b = { mchId: m.mchId, oid: `${tag}-${i}`, uid: `u${i % 1000}`, amount: '12.5', notifyUrl: hook, timestamp: now, nonce: `${tag}-${i}` };
      return JSON.stringify({ ...b, sign: sign(b, m.secret) });
    });
    return file;
  };
  return {
    warm: () => runWrk({ url: s.url, path: '/api/v1/order', seconds: 3, connections: 50, threads: 2, bodies: bodies(16_000 * 3, 'w') }),
    file: () => bodies(16_000 * seconds, 'm'),
    async measure(file) {
      const pid = s.child.pid;
      const t0 = threads(pid);
      const all0 = cpuSeconds(pid);
      const r = await runWrk({ url: s.url, path: '/api/v1/order', seconds, connections: 50, threads: 2, bodies: file, servers: [pid], delayMs: Number(process.env.PACE_MS) || undefined });
      const t1 = threads(pid);
      const all1 = cpuSeconds(pid);
      if (r.exhausted) throw new Error('bodies ran out');
      const us = (sec) => Math.round((sec * 1e6) / r.requests);
      const per = [...t1].map(([t, c]) => [t, c - (t0.get(t) ?? 0)]).sort((a, b) => b[1] - a[1]);
      const main = per.find(([t]) => t === String(pid))[1];
      const others = per.filter(([t]) => t !== String(pid)).map(([, c]) => us(c)).filter((x) => x > 0);
      return {
        label, rps: Math.round(r.rps), p50: r.p50, p99: r.p99, err: r.errors + r.non2xx,
        usAll: us(all1 - all0), usMain: us(main), others: others.join('+'),
        client: r.clientCpuShare.toFixed(2), load: loadavg()[0].toFixed(1),
      };
    },
    stop: () => stop(s.child),
  };
}

async function one(root, label, dir, hook) {
  const s = await serveOf(root, label, dir, hook);
  try {
    await s.warm();
    return await s.measure(s.file());
  } finally {
    await s.stop();
  }
}

/** PARALLEL=1: every build's serve under its own wrk at the same time, so all share the machine's load alike. */
async function together(dir, hook) {
  const ss = await Promise.all(roots.map((root) => serveOf(root, root, dir, hook)));
  try {
    await Promise.all(ss.map((s) => s.warm()));
    const files = ss.map((s) => s.file());
    return await Promise.all(ss.map((s, i) => s.measure(files[i])));
  } finally {
    await Promise.all(ss.map((s) => s.stop()));
  }
}

async function baseline(dir) {
  const s = await start([join(HERE, 'baseline-server.mjs'), 'insert', join(dir, `b-${Date.now()}.db`), 'normal'], process.env, /baseline serving (http:\S+)/);
  try {
    const now = Date.now();
    const file = join(dir, `base-${now}.jsonl`);
    writeBodies(file, 30_000 * seconds, (i) => JSON.stringify({ mchId: 'M1', oid: `b${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${i}`, sign: 'x'.repeat(64) }));
    await runWrk({ url: s.url, path: '/', seconds: 2, connections: 50, threads: 2, bodies: file });
    const pid = s.child.pid;
    const c0 = cpuSeconds(pid);
    const r = await runWrk({ url: s.url, path: '/', seconds, connections: 50, threads: 2, bodies: file, servers: [pid] });
    const c1 = cpuSeconds(pid);
    rmSync(file, { force: true });
    return { label: 'baseline NORMAL', rps: Math.round(r.rps), p50: r.p50, p99: r.p99, err: r.errors + r.non2xx, usAll: Math.round(((c1 - c0) * 1e6) / r.requests), usMain: '-', client: r.clientCpuShare.toFixed(2), load: loadavg()[0].toFixed(1) };
  } finally {
    await stop(s.child);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cryptopay-ab-'));
// AB_ORDERS=N: every serve starts on a copy of one ledger holding N orders (bench/bulk-ledger.mjs,
// made by this tree's build), as serve's ledger is late in bench/run.mjs (~340,000 orders): its
// indexes, the pages a create touches and the checkpoints' copying are then those of a large ledger.
const template = Number(process.env.AB_ORDERS) > 0
  ? { file: join(dir, 'template.db'), merchant: (await fillLedger(join(dir, 'template.db'), Number(process.env.AB_ORDERS))).merchant }
  : undefined;
const receiver = await start([join(HERE, 'baseline-server.mjs'), 'fixed'], process.env, /baseline serving (http:\S+)/);
const hook = `${receiver.url}/hook`;
const rows = [];
const print = (r) => console.log([r.label, `${r.rps} rps`, `p50 ${r.p50}`, `p99 ${r.p99}`, `err ${r.err}`, `cpu/req ${r.usAll} us (main ${r.usMain}; other threads ${r.others ?? '-'})`, `client ${r.client}`, `load ${r.load}`].join('  '));
try {
  for (let k = 0; k < rounds; k++) {
    const order = k % 2 ? [...roots].reverse() : roots;
    const b = await baseline(dir);
    print(b);
    rows.push(b);
    if (process.env.PARALLEL === '1') {
      for (const r of await together(dir, hook)) {
        print(r);
        rows.push(r);
      }
      continue;
    }
    for (const root of order) {
      const r = await one(root, root, dir, hook);
      print(r);
      rows.push(r);
    }
  }
} finally {
  await stop(receiver.child);
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log('\nmedians');
for (const label of ['baseline NORMAL', ...roots]) {
  const rs = rows.filter((r) => r.label === label);
  console.log(`${label}: ${median(rs.map((r) => r.rps))} rps, p99 ${median(rs.map((r) => r.p99))} ms, cpu/req ${median(rs.map((r) => r.usAll))} us, main ${label.startsWith('baseline') ? '-' : median(rs.map((r) => r.usMain))} us`);
}
