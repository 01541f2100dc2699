// A/B aid, not a benchmark: the CPU each request costs `serve` of two (or more) builds, alternating.
//   AB_ROUNDS=5 AB_SECONDS=6 node bench/ab.mjs status|pay|state[,...] DIR_A [DIR_B ...]
// The DIRs are checkouts with dist/ built (e.g. a `git archive` of the commit before a
// change, and this tree). Each gets its own ledger (one merchant with a generated wallet, one
// order) and its own `serve --no-watch`; then, AB_ROUNDS times, wrk (2 threads, 50 connections)
// runs AB_SECONDS against each in turn, then the bare node:http fixed-JSON server. Per run: rps and
// serve's CPU (every thread, /proc/PID/stat) per request in µs, which is far less sensitive than
// rps to the other work sharing the machine. Prints every run and the medians.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureWrk, runWrk } from './wrk.mjs';

const [what = 'status', ...dirs] = process.argv.slice(2);
if (dirs.length < 1) throw new Error('usage: AB_ROUNDS=5 AB_SECONDS=6 node bench/ab.mjs status|pay|state[,...] DIR_A [DIR_B ...]');
const whats = what.split(',');
const rounds = Number(process.env.AB_ROUNDS ?? 5);
const seconds = Number(process.env.AB_SECONDS ?? 6);
ensureWrk();

const waitFor = (child, re) =>
  new Promise((res, rej) => {
    let e = '';
    child.stderr.on('data', (d) => {
      e += d;
      const x = re.exec(e);
      if (x) res(x[1]);
    });
    child.once('exit', (code) => rej(new Error(`exited ${code}: ${e}`)));
  });

async function start(dir) {
  const tmp = mkdtempSync(join(tmpdir(), 'cryptopay-ab-'));
  const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(tmp, 'l.db'), XDG_CONFIG_HOME: tmp };
  delete env.CRYPTOPAY_CHAINS;
  delete env.CRYPTOPAY_REMOTE;
  const bin = join(resolve(dir), 'bin/cryptopay');
  const cli = (...a) => JSON.parse(spawnSync(process.execPath, [bin, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
  cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
  const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-watch'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await waitFor(child, /serving (http:\S+?)\/api/);
  const paths = { status: `/api/v1/order/${o.id}/status`, pay: `/pay/${o.id}`, state: `/pay/${o.id}/state` };
  return whats.map((w) => ({ name: `${dir} ${w}`, child, url, path: paths[w], tmp }));
}

const servers = [];
for (const dir of dirs) servers.push(...(await start(dir)));
const bare = spawn(process.execPath, [new URL('./baseline-server.mjs', import.meta.url).pathname, 'fixed'], { stdio: ['ignore', 'ignore', 'pipe'] });
const bareUrl = await waitFor(bare, /serving (http:\S+)\n/);
const targets = [...servers, { name: 'bare node:http fixed JSON', child: bare, url: bareUrl, path: '/' }];
// Warm-up: JIT and caches of each.
for (const t of targets) await runWrk({ url: t.url, path: t.path, seconds: 2, connections: 50, threads: 2 });

const runs = targets.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (const [i, t] of targets.entries()) {
    const x = await runWrk({ url: t.url, path: t.path, seconds, connections: 50, threads: 2, servers: [t.child.pid] });
    if (x.errors || x.non2xx) throw new Error(`${t.name}: ${x.errors} errors, ${x.non2xx} non-2xx`);
    const us = (x.serverCpuShares[0] * 1e6) / x.rps;
    runs[i].push({ rps: x.rps, us, cpu: x.serverCpuShares[0], client: x.clientCpuShare, load: loadavg()[0] });
    console.log(`round ${r + 1} ${t.name}: ${Math.round(x.rps)} rps, ${us.toFixed(1)} µs CPU/request (serve ${x.serverCpuShares[0].toFixed(2)} cores, wrk ${x.clientCpuShare.toFixed(2)}), p99 ${x.p99} ms, load ${loadavg()[0].toFixed(1)}`);
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`\n${what}, ${rounds} rounds of ${seconds} s, medians:`);
for (const [i, t] of targets.entries()) {
  const loads = runs[i].map((x) => x.load);
  console.log(`  ${t.name}: ${Math.round(median(runs[i].map((x) => x.rps)))} rps, ${median(runs[i].map((x) => x.us)).toFixed(1)} µs CPU/request, load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
}
// Per-round ratios against the first build (CPU per request, rps) and against the bare server (rps), medians.
const ratio = (a, b, f) => median(runs[a].map((x, k) => f(runs[b][k]) / f(x)));
const bareAt = targets.length - 1;
for (let i = 1; i < servers.length; i++) console.log(`  ${servers[i].name} / ${servers[0].name}: CPU/request ${ratio(0, i, (x) => x.us).toFixed(3)}, rps ${ratio(0, i, (x) => x.rps).toFixed(3)}`);
for (let i = 0; i < servers.length; i++) console.log(`  ${servers[i].name} rps / bare rps: ${ratio(bareAt, i, (x) => x.rps).toFixed(3)}`);

for (const t of new Set(targets.map((x) => x.child))) t.kill('SIGTERM');
await Promise.all([...new Set(targets.map((x) => x.child))].map((c) => new Promise((res) => (c.exitCode !== null ? res() : c.once('exit', res)))));
for (const s of new Set(servers.map((x) => x.tmp))) rmSync(s, { recursive: true, force: true });
