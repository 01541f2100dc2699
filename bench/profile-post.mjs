// Profiling aid, not a benchmark: serve under signed POST /order load (autocannon, 50 connections).
// node bench/profile-post.mjs [seconds]; NOPROF=1 skips --cpu-prof (profile lands in /tmp/prof3);
// SERVE_FLAGS="..." passes node flags to serve; TRACEGC=1 writes --trace-gc-nvp to /tmp/gc.log.
// Prints rps, p99, RSS once a second and the peak (VmHWM). Needs `npm run build` first.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '../dist/signing/index.js';
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const env = { ...process.env, CRYPTOPAY_DB: join(dir, 'l.db'), XDG_CONFIG_HOME: dir };
const BIN = new URL('../bin/cryptopay', import.meta.url).pathname;
const m = JSON.parse(spawnSync('node', [BIN, 'merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0', '--json'], { env, encoding: 'utf8' }).stdout);
const child = spawn('node', [...(process.env.TRACEGC ? ['--trace-gc-nvp'] : []), ...(process.env.SERVE_FLAGS ? process.env.SERVE_FLAGS.split(' ') : []), ...(process.env.NOPROF ? [] : ['--cpu-prof', '--cpu-prof-dir=/tmp/prof3']), BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', process.env.TRACEGC ? openSync('/tmp/gc.log', 'w') : 'ignore', 'pipe'] });
const url = await new Promise((res) => { let e = ''; child.stderr.on('data', (d) => { e += d; const x = /serving (http:\S+?)\/api/.exec(e); if (x) res(x[1]); }); });
const now = Date.now(); const bodies = [];
for (let i = 0; i < 60000; i++) { const b = { mchId: m.mchId, oid: `p${i}`, uid: 'u1', amount: '1', timestamp: now, nonce: `n${i}` }; bodies.push(JSON.stringify({ ...b, sign: sign(b, m.secret) })); }
let k = 0;
const rss = () => /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1] / 1024 | 0;
const samples = [rss()]; const iv = setInterval(() => samples.push(rss()), 1000);
const r = await autocannon({ url, connections: 50, duration: Number(process.argv[2] || 10), requests: [{ method: 'POST', path: '/api/v1/order', headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: bodies[k++] }) }] });
clearInterval(iv); if (process.env.SNAP) { child.kill('SIGUSR2'); await new Promise((r) => setTimeout(r, 4000)); } console.log('rss MB over time', samples.join(' '));
console.log('rps', r.requests.average, 'p99', r.latency.p99, 'non2xx', r.non2xx);
const st = readFileSync(`/proc/${child.pid}/status`, 'utf8'); console.log(/VmHWM.*/.exec(st)[0]);
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r));
