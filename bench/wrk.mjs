// wrk (C, from Debian's packages) as the load generator of the benchmarks: it needs a fraction of
// a core where autocannon needed a whole one, so on this 2-core machine the baselines are not
// capped by the client. Installed with apt-get when missing; driven with bench/wrk.lua, which
// cycles through pre-signed bodies and reports wrk's figures and its own CPU time as JSON.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LUA = fileURLToPath(new URL('./wrk.lua', import.meta.url));
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** wrk on PATH, or Debian's package installed now (apt-get update first); the version line. */
export function ensureWrk(log = () => {}) {
  const probe = () => spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  let v = probe();
  if (v.error?.code === 'ENOENT') {
    log('bench: wrk is missing; installing Debian\'s package: apt-get update && apt-get install -y wrk');
    const asRoot = process.getuid?.() === 0;
    for (const args of [['apt-get', 'update'], ['apt-get', 'install', '-y', '--no-install-recommends', 'wrk']]) {
      const [cmd, ...rest] = asRoot ? args : ['sudo', '-n', ...args];
      const r = spawnSync(cmd, rest, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
      if (r.status !== 0) throw new Error(`${[cmd, ...rest].join(' ')} failed (exit ${r.status ?? r.error?.message}): install wrk by hand`);
    }
    v = probe();
  }
  if (v.error) throw v.error;
  // wrk --version prints its banner and exits 1.
  return `${v.stdout}${v.stderr}`.split('\n')[0].trim();
}

/** CPU seconds (user + system, every thread) a process has used so far. */
export function cpuSeconds(pid) {
  return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

function cpuOfStat(stat) {
  // utime and stime are fields 14 and 15; the command name (field 2) may hold spaces.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** VmRSS and VmHWM (peak) of a process, bytes. */
export function memoryOf(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Writes one body a line (a body must not hold a newline: JSON.stringify never writes one). */
export function writeBodies(file, n, make) {
  const fd = openSync(file, 'w');
  try {
    let chunk = [];
    for (let i = 0; i < n; i++) {
      chunk.push(make(i));
      if (chunk.length === 10_000 || i === n - 1) {
        writeSync(fd, `${chunk.join('\n')}\n`);
        chunk = [];
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * One wrk run against `url + path`. With `bodies` (a file from writeBodies) every request is a
 * POST of the next body; otherwise a GET. CPU shares are seconds of CPU per second of the run
 * (1.0 = one core): wrk's own, read by wrk.lua from /proc/self/stat at the end, and each of
 * `servers`' (pids), both from the moment wrk says it is running (its bodies are loaded).
 * `headers` are added to every request. `delayMs`: each connection waits a random time of that
 * mean before each request (wrk.lua's delay): a paced load, not the most the server can do.
 */
export function runWrk({ url, path, seconds, connections, threads, bodies, servers = [], headers = {}, delayMs }) {
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s', '-s', LUA];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(`${url}${path}`);
  const env = { ...process.env, WRK_THREADS: String(threads) };
  if (bodies) env.WRK_BODIES = bodies;
  else delete env.WRK_BODIES;
  if (delayMs) env.WRK_DELAY_MS = String(delayMs);
  else delete env.WRK_DELAY_MS;
  // Line-buffered, so "Running" (printed once every thread's bodies are loaded) arrives at once.
  const child = spawn('stdbuf', ['-oL', 'wrk', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    let start;
    child.stdout.on('data', (d) => {
      out += d;
      if (!start && out.includes('Running')) {
        start = { at: performance.now(), servers: servers.map(cpuSeconds) };
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wall = (performance.now() - (start?.at ?? 0)) / 1000;
      const line = /WRKJSON (\{.*\})/.exec(out);
      if (code !== 0 || !line || !start) {
        reject(new Error(`wrk ${args.join(' ')} failed (exit ${code}): ${err}${out}`));
        return;
      }
      const j = JSON.parse(line[1]);
      const runSeconds = j.durationUs / 1e6;
      resolve({
        rps: j.requests / runSeconds,
        requests: j.requests,
        p50: j.p50 / 1000,
        p90: j.p90 / 1000,
        p99: j.p99 / 1000,
        max: j.max / 1000,
        /** Connection errors and timeouts. */
        errors: j.connect + j.read + j.write + j.timeout,
        /** Answers that were not 2xx or 3xx. */
        non2xx: j.status,
        exhausted: j.exhausted,
        pool: j.pool,
        clientCpuShare: j.cpuTicks / TICKS / runSeconds,
        serverCpuShares: servers.map((pid, i) => {
          try {
            return (cpuSeconds(pid) - start.servers[i]) / wall;
          } catch {
            return NaN;
          }
        }),
      });
    });
  });
}

/**
 * What a browser sends a page over http:// (Chromium and Firefox: `gzip, deflate`; br and zstd
 * only over https): the payment page is asked for with it, as a payer's browser does.
 */
export const BROWSER_ACCEPT_ENCODING = 'gzip, deflate';
