// Memory aid, not a benchmark: one `serve` (no chain) under a sequence of wrk loads, its RSS and
// peak (VmHWM) after each; the sequence of bench/run.mjs by default (status, create, status, page).
//   node bench/rss-sequence.mjs [status,create,status,pay]     (npm run build first)
// SERVE_FLAGS="..." adds node flags to serve (e.g. --require a script that logs heap spaces).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '../dist/signing/index.js';
import { ensureWrk, memoryOf, runWrk, writeBodies, BROWSER_ACCEPT_ENCODING } from './wrk.mjs';
ensureWrk();
const dir = mkdtempSync(join(tmpdir(), 'cryptopay-mem-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(dir, 'l.db'), XDG_CONFIG_HOME: dir };
const BIN = new URL('../bin/cryptopay', import.meta.url).pathname;
const cli = (...a) => JSON.parse(spawnSync(process.execPath, [BIN, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
const m = cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
const flags = process.env.SERVE_FLAGS ? process.env.SERVE_FLAGS.split(' ') : [];
const child = spawn(process.execPath, [...flags, BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((res) => { let e = ''; child.stderr.on('data', (d) => { e += d; const x = /serving (http:\S+?)\/api/.exec(e); if (x) res(x[1]); }); });
let n = 0;
for (const what of (process.argv[2] ?? 'status,create,status,pay').split(',')) {
  let bodies;
  const seconds = what === 'create' ? 10 : 8;
  if (what === 'create') {
    bodies = join(dir, `bodies${n}.jsonl`);
    const now = Date.now();
    writeBodies(bodies, 16_000 * seconds, (i) => { const b = { mchId: m.mchId, oid: `p${n}-${i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${n}-${i}`, notifyUrl: 'http://127.0.0.1:9/cb' }; return JSON.stringify({ ...b, sign: sign(b, m.secret) }); });
    n++;
  }
  const path = { status: `/api/v1/order/${o.id}/status`, pay: `/pay/${o.id}`, create: '/api/v1/order' }[what];
  const r = await runWrk({ url, path, seconds, connections: 50, threads: 2, bodies, servers: [child.pid], headers: what === 'pay' ? { 'Accept-Encoding': BROWSER_ACCEPT_ENCODING } : {} });
  const mem = memoryOf(child.pid);
  console.log(`${what}: ${Math.round(r.rps)} rps, rss ${Math.round(mem.rss / 1e6)} peak ${Math.round(mem.peak / 1e6)}`);
}
child.kill('SIGTERM');
await new Promise((res) => child.once('exit', res));
rmSync(dir, { recursive: true, force: true });
