// A/B aid, not a benchmark: system calls per request of a `serve` build, counted by strace -c -f
// on it during 4 s of wrk load (2 s of warm-up first).
//   node bench/syscalls.mjs status|create DIR      (DIR: a checkout with dist/ built)
// STRACE_MAIN=1: only serve's main thread (the event loop), not its worker and pool threads.
// PACE_MS=20: create order paced, each connection waiting a random time of that mean (ms) before each request.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runWrk, writeBodies } from './wrk.mjs';

const [what, dirArg] = process.argv.slice(2);
if (!dirArg || !['status', 'create'].includes(what)) throw new Error('usage: node bench/syscalls.mjs status|create DIR');
const dir = resolve(dirArg);
const tmp = mkdtempSync(join(tmpdir(), 'cryptopay-syscalls-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(tmp, 'l.db'), XDG_CONFIG_HOME: tmp };
delete env.CRYPTOPAY_CHAINS;
delete env.CRYPTOPAY_REMOTE;
const bin = join(dir, 'bin/cryptopay');
const cli = (...a) => JSON.parse(spawnSync(process.execPath, [bin, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
const m = cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
const { sign } = await import(join(dir, 'dist/signing/index.js'));
const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-watch'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((res, rej) => {
  let e = '';
  child.stderr.on('data', (d) => {
    e += d;
    const x = /serving (http:\S+?)\/api/.exec(e);
    if (x) res(x[1]);
  });
  child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${e}`)));
});
let next = 0;
/** Fresh signed create-order bodies for one wrk run (never one sent twice). */
const bodies = (n) => {
  const file = join(tmp, `bodies-${next}.jsonl`);
  const now = Date.now();
  const from = next;
  writeBodies(file, n, (i) => {
    const b = { mchId: m.mchId, oid: `s${from + i}`, uid: `u${i % 1000}`, amount: '12.5', timestamp: now, nonce: `n${from + i}` };
    return JSON.stringify({ ...b, sign: sign(b, m.secret) });
  });
  next += n;
  return file;
};
const load = (seconds) =>
  runWrk(what === 'status'
    ? { url, path: `/api/v1/order/${o.id}/status`, seconds, connections: 50, threads: 2 }
    : { url, path: '/api/v1/order', seconds, connections: 50, threads: 2, bodies: bodies(16_000 * seconds), delayMs: Number(process.env.PACE_MS) || undefined });
await load(2);
const st = spawn('strace', ['-c', ...(process.env.STRACE_MAIN ? [] : ['-f']), '-p', String(child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
let out = '';
st.stderr.on('data', (d) => (out += d));
await new Promise((r) => setTimeout(r, 500));
const r = await load(4);
st.kill('SIGINT');
await new Promise((r) => st.once('exit', r));
const n = r.rps * 4;
console.log(`${dir} ${what}: ${Math.round(n)} requests (${r.errors} errors, ${r.non2xx} non-2xx)`);
for (const l of out.split('\n').filter((l) => /^\s*[\d.]+\s/.test(l))) {
  const f = l.trim().split(/\s+/);
  console.log(`  ${f.at(-1)} ${(Number(f[3]) / n).toFixed(2)} per request`);
}
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(tmp, { recursive: true, force: true });
