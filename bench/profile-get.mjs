// Profiling aid, not a benchmark: serve under GET /order/{id}/status load; profile in /tmp/profg.
// node bench/profile-get.mjs [seconds]; NOPROF=1 skips --cpu-prof. Needs `npm run build` first.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const env = { ...process.env, CRYPTOPAY_DB: join(dir, 'l.db'), XDG_CONFIG_HOME: dir };
const BIN = new URL('../bin/cryptopay', import.meta.url).pathname;
spawnSync('node', [BIN, 'merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0', '--json'], { env, encoding: 'utf8' });
const o = JSON.parse(spawnSync('node', [BIN, 'order', 'create', '--oid', 'x', '--uid', 'u', '--amount', '1', '--json'], { env, encoding: 'utf8' }).stdout);
const child = spawn('node', [...(process.env.NOPROF ? [] : ['--cpu-prof', '--cpu-prof-dir=/tmp/profg']), BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((res) => { let e = ''; child.stderr.on('data', (d) => { e += d; const x = /serving (http:\S+?)\/api/.exec(e); if (x) res(x[1]); }); });
const r = await autocannon({ url, connections: 50, duration: Number(process.argv[2] || 5), requests: [{ method: 'GET', path: `/api/v1/order/${o.id}/status` }] });
console.log('rps', r.requests.average, 'p99', r.latency.p99, 'non2xx', r.non2xx);
child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r));
