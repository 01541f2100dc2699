// Memory aid, not one of npm run bench's figures: serve's RSS peak (VmHWM) under a sequence of
// wrk loads on one serve, as issue #16's "serve RSS, whole load" takes it (status GET, payment
// page, signed create order, twice), without the chain and the callback receiver.
//   node bench/rss-http.mjs [seconds per load]          (npm run build first)
// RSS_BIN=path/to/bin/cryptopay runs another build's serve (e.g. main's); SERVE_FLAGS="..." adds
// node flags; SERVE_PROBE=file.mjs is --import'ed into serve (a memory probe).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '../dist/signing/index.js';
import { ensureWrk, memoryOf, runWrk, writeBodies } from './wrk.mjs';

const seconds = Number(process.argv[2] ?? '5');
ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-rss-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(dir, 'l.db'), XDG_CONFIG_HOME: dir };
delete env.CRYPTOPAY_CHAINS;
delete env.CRYPTOPAY_REMOTE;
const BIN = process.env.RSS_BIN ?? new URL('../bin/cryptopay', import.meta.url).pathname;
const cli = (...a) => JSON.parse(spawnSync(process.execPath, [BIN, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
const m = cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
const flags = [...(process.env.SERVE_FLAGS ? process.env.SERVE_FLAGS.split(' ') : []), ...(process.env.SERVE_PROBE ? ['--import', process.env.SERVE_PROBE] : [])];
const child = spawn(process.execPath, [...flags, BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((res) => {
  let e = '';
  child.stderr.on('data', (d) => {
    e += d;
    const x = /serving (http:\S+?)\/api/.exec(e);
    if (x) res(x[1]);
  });
});
await new Promise((r) => setTimeout(r, 1000));
const mb = (x) => Math.round(x / 1e6);
const out = [`start ${mb(memoryOf(child.pid).rss)} MB`];
let n = 0;
for (const what of ['status', 'pay', 'create', 'status', 'pay', 'create']) {
  let bodies;
  if (what === 'create') {
    bodies = join(dir, `bodies-${n}.jsonl`);
    const now = Date.now();
    writeBodies(bodies, 16_000 * seconds, (i) => {
      const b = { mchId: m.mchId, oid: `p${n}-${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${n}-${i}` };
      return JSON.stringify({ ...b, sign: sign(b, m.secret) });
    });
    n++;
  }
  const path = { status: `/api/v1/order/${o.id}/status`, pay: `/pay/${o.id}`, create: '/api/v1/order' }[what];
  const r = await runWrk({ url, path, seconds, connections: 50, threads: 2, bodies, servers: [child.pid] });
  const mem = memoryOf(child.pid);
  out.push(`${what} ${Math.round(r.rps)} rps p99 ${r.p99} ms cpu ${r.serverCpuShares[0].toFixed(2)} (errors ${r.errors + r.non2xx}): rss ${mb(mem.rss)} peak ${mb(mem.peak)} MB`);
}
const peak = memoryOf(child.pid).peak;
const rollup = readFileSync(`/proc/${child.pid}/smaps_rollup`, 'utf8');
child.kill('SIGTERM');
await new Promise((res) => child.once('exit', res));
rmSync(dir, { recursive: true, force: true });
console.log(`${out.join('\n')}\nVmHWM ${mb(peak)} MB (load ${loadavg()[0].toFixed(1)}); at the end: ${rollup.split('\n').filter((l) => /^(Rss|Anonymous):/.test(l)).map((l) => l.replace(/\s+/g, ' ')).join('; ')}`);
