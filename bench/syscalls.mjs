// A/B aid, not a benchmark: system calls per status GET of a `serve` build, counted by strace -c -f
// on it during 4 s of wrk load (2 s of warm-up first).   node bench/syscalls.mjs DIR   (DIR with dist/ built)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runWrk } from './wrk.mjs';
const dir = resolve(process.argv[2]);
const tmp = mkdtempSync(join(tmpdir(), 'sc-'));
const env = { ...process.env, NO_COLOR: '1', CRYPTOPAY_DB: join(tmp, 'l.db'), XDG_CONFIG_HOME: tmp };
delete env.CRYPTOPAY_CHAINS;
const bin = join(dir, 'bin/cryptopay');
const cli = (...a) => JSON.parse(spawnSync(process.execPath, [bin, ...a, '--json'], { env, encoding: 'utf8' }).stdout);
cli('merchant', 'add', '--name', 'P', '--generate-wallet', '--rate-limit', '0');
const o = cli('order', 'create', '--oid', 'probe', '--uid', 'u', '--amount', '1');
const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-watch'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((res) => { let e = ''; child.stderr.on('data', (d) => { e += d; const x = /serving (http:\S+?)\/api/.exec(e); if (x) res(x[1]); }); });
await runWrk({ url, path: `/api/v1/order/${o.id}/status`, seconds: 2, connections: 50, threads: 2 });
const st = spawn('strace', ['-c', '-f', '-p', String(child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
let out = ''; st.stderr.on('data', (d) => (out += d));
await new Promise((r) => setTimeout(r, 500));
const r = await runWrk({ url, path: `/api/v1/order/${o.id}/status`, seconds: 4, connections: 50, threads: 2 });
st.kill('SIGINT'); await new Promise((r) => st.once('exit', r));
const n = r.rps * 4;
console.log(`${dir}: ${Math.round(n)} requests`);
for (const l of out.split('\n').filter((l) => /^\s*[\d.]+\s/.test(l))) { const f = l.trim().split(/\s+/); console.log(`  ${f[5] ?? f[4]} ${(Number(f[3]) / n).toFixed(2)} per request`); }
child.kill('SIGTERM');
