// Profiling aid, not a benchmark: one `serve` under wrk load, with a CPU profile of it.
//   node bench/profile.mjs status|pay|create[,...] [seconds]      (npm run build first)
// status: GET /api/v1/order/{id}/status; pay: GET /pay/{id}; create: signed POST /api/v1/order.
// Several, comma-separated, run one after the other on the same serve (status,create,status,pay
// is bench/run.mjs's order: where serve's peak RSS is reached).
// The profile lands in /tmp/cryptopay-prof (NOPROF=1: none); SERVE_FLAGS="..." adds node flags.
// PACE_MS=20: each connection waits a random time of that mean (ms) before each request (wrk.lua's
// delay): a paced load below serve's most.
// Prints wrk's figures and serve's RSS once a second and its peak after each run; then
// `node bench/flame.mjs FILE` sums the profile by function.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '../dist/signing/index.js';
import { ensureWrk, memoryOf, runWrk, writeBodies, BROWSER_ACCEPT_ENCODING } from './wrk.mjs';

const [what = 'status', secondsArg = '8'] = process.argv.slice(2);
const seconds = Number(secondsArg);
ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-prof-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(dir, 'l.db'), XDG_CONFIG_HOME: dir };
delete env.CRYPTOPAY_CHAINS;
delete env.CRYPTOPAY_REMOTE;
const BIN = new URL('../bin/cryptopay', import.meta.url).pathname;
const cli = (...a) => JSON.parse(spawnSync(process.execPath, [BIN, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
const m = cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
const flags = [...(process.env.SERVE_FLAGS ? process.env.SERVE_FLAGS.split(' ') : []), ...(process.env.NOPROF ? [] : ['--cpu-prof', '--cpu-prof-dir=/tmp/cryptopay-prof'])];
// SERVE_STDOUT=FILE: serve's standard output (a --trace-gc log, say) goes to that file.
const out = process.env.SERVE_STDOUT ? openSync(process.env.SERVE_STDOUT, 'w') : 'ignore';
const child = spawn(process.execPath, [...flags, BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', out, 'pipe'] });
const url = await new Promise((res) => {
  let e = '';
  child.stderr.on('data', (d) => {
    e += d;
    const x = /serving (http:\S+?)\/api/.exec(e);
    if (x) res(x[1]);
  });
});
const threadsBefore = threadTimes(child.pid);
let batch = 0;
const kinds = what.split(',');
for (const kind of kinds) {
  let bodies;
  if (kind === 'create') {
    bodies = join(dir, `bodies-${batch}.jsonl`);
    const now = Date.now();
    writeBodies(bodies, 16_000 * seconds, (i) => {
      const b = { mchId: m.mchId, oid: `p${batch}-${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${batch}-${i}` };
      return JSON.stringify({ ...b, sign: sign(b, m.secret) });
    });
    batch++;
  }
  const path = { status: `/api/v1/order/${o.id}/status`, pay: `/pay/${o.id}`, create: '/api/v1/order' }[kind];
  if (!path) throw new Error(`unknown load ${kind}: status, pay or create`);
  const rss = [];
  const iv = setInterval(() => rss.push(Math.round(memoryOf(child.pid).rss / 1e6)), 1000);
  // The page as a browser asks for it (gzip taken), as bench/run.mjs does.
  const headers = kind === 'pay' ? { 'Accept-Encoding': BROWSER_ACCEPT_ENCODING } : {};
  const r = await runWrk({ url, path, seconds, connections: 50, threads: 2, bodies, servers: [child.pid], headers, delayMs: Number(process.env.PACE_MS) || undefined });
  clearInterval(iv);
  console.log(`${kind}: ${Math.round(r.rps)} rps, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}, non-2xx ${r.non2xx}, client CPU ${r.clientCpuShare.toFixed(2)}, serve CPU ${r.serverCpuShares[0].toFixed(2)}`);
  console.log(`serve RSS MB each second: ${rss.join(' ')}; peak so far ${Math.round(memoryOf(child.pid).peak / 1e6)} MB`);
}
const threadsAfter = threadTimes(child.pid);
// serve's CPU by thread over all the runs (main, libuv pool, V8's GC helpers, the worker
// threads): what the machine's two cores spent besides the event loop.
const perThread = new Map();
for (const [tid, t] of threadsAfter) {
  const d = t.ticks - (threadsBefore.get(tid)?.ticks ?? 0);
  const name = tid === String(child.pid) ? 'main' : `${t.name}:${tid}`;
  if (d > 0) perThread.set(name, d);
}
console.log(`serve CPU by thread (cores): ${[...perThread].sort((a, b) => b[1] - a[1]).map(([n, d]) => `${n} ${(d / 100 / (seconds * kinds.length)).toFixed(3)}`).join(', ')}`);
// Where the resident memory is at the end: file-backed (code), anonymous (heaps), shared.
const rollup = readFileSync(`/proc/${child.pid}/smaps_rollup`, 'utf8');
console.log(rollup.split('\n').filter((l) => /^(Rss|Pss_Anon|Pss_File|Anonymous|Shared_Clean|Private_Clean|Private_Dirty):/.test(l)).map((l) => l.replace(/\s+/g, ' ')).join('; '));
child.kill('SIGTERM');
await new Promise((res) => child.once('exit', res));
rmSync(dir, { recursive: true, force: true });

/** utime+stime (clock ticks) and name of each thread of a process. */
function threadTimes(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // The thread ended.
    }
  }
  return out;
}
