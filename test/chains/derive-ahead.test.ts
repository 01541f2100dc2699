/**
 * The address pool of `cryptopay serve`: a real worker thread (the shipped bundle's
 * dist/bundle/derive-worker.js, built by `npm test` before the tests run).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { HDNodeWallet } from 'ethers';
import { afterEach, describe, expect, it } from 'vitest';
import { startDerivationWorker, type AheadPool } from '../../src/chains/derive-ahead.js';
import type { RangeReply } from '../../src/chains/derive-ranges.js';
import { createDeriver } from '../../src/chains/deriver.js';
import { deriveAddress, walletFromMnemonic } from '../../src/chains/derive.js';
import { endWorker } from '../../src/core/end-worker.js';

const WORKER = new URL('../../dist/bundle/derive-worker.js', import.meta.url);
const wallet = walletFromMnemonic('legal winner thank year wave sausage worth useful legal winner thank yellow');

let pool: AheadPool | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A worker file of the test's own (removed after the test). */
function threadFile(name: string, source: string): URL {
  scratch ??= mkdtempSync(join(tmpdir(), 'cryptopay-derive-'));
  const file = join(scratch, name);
  writeFileSync(file, source);
  return pathToFileURL(file);
}

/**
 * A thread that counts the ranges it is asked for (`asked()`), and answers each at once that it
 * could not (`answers`) or never answers (as if busy with the first).
 */
function countingThread(answers: boolean): { url: URL; asked: () => number } {
  const log = threadFile('asked.txt', '');
  const reply = answers ? `parentPort.postMessage({ chain: m.chain, xpub: m.xpub, start: m.start, count: m.count, error: 'no' });` : '';
  const url = threadFile(
    'counting.mjs',
    `import { appendFileSync } from 'node:fs';\nimport { parentPort } from 'node:worker_threads';\nparentPort.on('message', (m) => { if (m === 'close') return parentPort.close(); appendFileSync(new URL(${JSON.stringify(log.href)}), 'range\\n'); ${reply} });\n`,
  );
  return { url, asked: () => readFileSync(log, 'utf8').split('\n').filter((l) => l === 'range').length };
}

/** Account xpubs of `n` fresh wallets (other merchants). */
const freshXpubs = (n: number) => Array.from({ length: n }, () => HDNodeWallet.fromSeed(randomBytes(32)).derivePath("m/44'/60'/0'").neuter().extendedKey);

/** Calls take until it answers (the worker has delivered) or a few seconds pass. */
/**
 * The address at `index` once the pool has it, polled every 20 ms for up to 30 s: the derivation
 * thread runs at the lowest priority, and with three test files at once on two cores it waited
 * more than the 4 s this allowed before (a CI run of 2026-12-02).
 */
async function ready(p: AheadPool, chain: 'EVM' | 'TRON', xpub: string, index: number): Promise<string | undefined> {
  for (let i = 0; i < 1500; i++) {
    const hit = p.take(chain, xpub, index);
    if (hit !== undefined) return hit;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

/**
 * Waits until `done`; fails, saying what it waited for, after 30 s (the derivation thread runs at
 * the lowest priority, slow on a busy machine), before vitest's own 60 s.
 */
async function until(done: () => boolean): Promise<void> {
  for (const t0 = Date.now(); !done(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() - t0 > 30_000) throw new Error(`not so after 30 s: ${done}`);
  }
}

describe('address pool on a worker thread', () => {
  it('the shipped worker file exists (npm test builds it first)', () => {
    expect(existsSync(WORKER)).toBe(true);
  });

  it('first asks, then hands out the very addresses the main thread would derive, on both chains', async () => {
    const errors: string[] = [];
    pool = startDerivationWorker({ workerUrl: WORKER, onError: (m) => errors.push(m) });
    // The first index of a wallet is derived on demand; the pool starts after it.
    expect(pool.take('EVM', wallet.evmXpub, 0)).toBeUndefined();
    expect(pool.take('TRON', wallet.tronXpub, 0)).toBeUndefined();
    expect(await ready(pool, 'EVM', wallet.evmXpub, 1)).toBe(deriveAddress('EVM', wallet.evmXpub, 1));
    expect(await ready(pool, 'TRON', wallet.tronXpub, 1)).toBe(deriveAddress('TRON', wallet.tronXpub, 1));
    for (let i = 2; i < 900; i++) {
      expect(pool.take('EVM', wallet.evmXpub, i), `EVM ${i}`).toBe(deriveAddress('EVM', wallet.evmXpub, i));
      expect(pool.take('TRON', wallet.tronXpub, i), `TRON ${i}`).toBe(deriveAddress('TRON', wallet.tronXpub, i));
    }
    expect(errors).toEqual([]);
  });

  it('primed at a wallet\'s next index (serve\'s start), has that very index ready before any order asks, and two chunks ahead', async () => {
    pool = startDerivationWorker({ workerUrl: WORKER });
    pool.prime('TRON', wallet.tronXpub, 700);
    pool.prime('EVM', wallet.evmXpub, 0);
    // Wait for the priming to deliver without taking anything (a take would itself ask). The
    // wait is bounded by the test's time-out, not by a guess at how busy the machine is.
    await until(() => pool!.readyUntil('TRON', wallet.tronXpub) > 700 && pool!.readyUntil('EVM', wallet.evmXpub) > 0);
    expect(pool.take('TRON', wallet.tronXpub, 700)).toBe(deriveAddress('TRON', wallet.tronXpub, 700));
    expect(pool.take('EVM', wallet.evmXpub, 0)).toBe(deriveAddress('EVM', wallet.evmXpub, 0));
    // Before: never handed out; far enough ahead (two chunks) for a burst of orders.
    expect(pool.take('TRON', wallet.tronXpub, 699)).toBeUndefined();
    await until(() => pool!.readyUntil('EVM', wallet.evmXpub) > 2047);
    expect(pool.take('EVM', wallet.evmXpub, 2047)).toBe(deriveAddress('EVM', wallet.evmXpub, 2047));
  }, 30_000);

  it('keeps up past its first range, and after a jump (orders made by another process) starts again from there', async () => {
    pool = startDerivationWorker({ workerUrl: WORKER });
    pool.take('EVM', wallet.evmXpub, 0);
    await ready(pool, 'EVM', wallet.evmXpub, 1);
    let misses = 0;
    for (let i = 1; i < 3000; i++) {
      let hit = pool.take('EVM', wallet.evmXpub, i);
      if (hit === undefined) {
        misses++;
        hit = await ready(pool, 'EVM', wallet.evmXpub, i);
      }
      expect(hit, `EVM ${i}`).toBe(deriveAddress('EVM', wallet.evmXpub, i));
    }
    expect(misses).toBeLessThan(5);
    // Far ahead: nothing ready there yet; as orders go on from there, the pool follows.
    expect(pool.take('EVM', wallet.evmXpub, 50_000)).toBeUndefined();
    let index = 50_001;
    let hit: string | undefined;
    for (; index < 50_200 && hit === undefined; index++) {
      hit = pool.take('EVM', wallet.evmXpub, index);
      if (hit === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    expect(hit).toBe(deriveAddress('EVM', wallet.evmXpub, index - 1));
    expect(pool.take('EVM', wallet.evmXpub, index)).toBe(deriveAddress('EVM', wallet.evmXpub, index));
    // Behind the pool (an index it has dropped): not handed out from the pool.
    expect(pool.take('EVM', wallet.evmXpub, 10)).toBeUndefined();
  });

  it('closed in the middle of a range, ends its thread on its own', async () => {
    pool = startDerivationWorker({ workerUrl: WORKER });
    pool.prime('EVM', wallet.evmXpub, 0);
    await until(() => pool!.readyUntil('EVM', wallet.evmXpub) > 0);
    // Two chunks ahead are asked for as soon as one is delivered: close while they are derived.
    pool.take('EVM', wallet.evmXpub, pool.readyUntil('EVM', wallet.evmXpub) - 1);
    const p = pool;
    pool = undefined;
    expect(await p.close()).toBe('finished');
  });

  it('asked to end in the middle of a long range, returns after the slice it is on: never terminated inside a call into libsecp256k1', async () => {
    // Worker.terminate() during a range could land between two calls into the addon; the next
    // call then throws a C++ exception nothing catches and the whole process aborts (seen as
    // serve exiting on SIGABRT when stopped right after an order, under load).
    const worker = new Worker(WORKER);
    let exited = false;
    worker.once('exit', () => (exited = true));
    const node = createDeriver(wallet.evmXpub).change;
    const replies: RangeReply[] = [];
    const first = new Promise<void>((resolve) => worker.on('message', (r: RangeReply) => (replies.push(r), resolve())));
    worker.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 0, count: 256 });
    // Minutes of work at 30-100 µs an address: the thread is surely inside it when asked to end.
    worker.postMessage({ chain: 'EVM', xpub: wallet.evmXpub, node, start: 256, count: 2_000_000 });
    await first;
    await new Promise((r) => setTimeout(r, 50));
    expect(await endWorker(worker, () => exited, () => worker.postMessage('close'))).toBe('finished');
    expect(replies.map((r) => ('addresses' in r ? r.addresses.length : r.error))).toEqual([256]);
  });

  it('a thread that does not end when asked is terminated after the grace period, and says so', async () => {
    // serve waits 10 s (the default grace) and then reports 'terminated'; a stuck thread here
    // spins on the event loop, never reading the request to close.
    const worker = new Worker(threadFile('stuck.mjs', `import { parentPort } from 'node:worker_threads';
parentPort.once('message', () => { for (;;) {} });
parentPort.postMessage('started');`));
    let exited = false;
    worker.once('exit', () => (exited = true));
    await new Promise((resolve) => worker.once('message', resolve));
    worker.postMessage('spin');
    const asked = Date.now();
    expect(await endWorker(worker, () => exited, () => worker.postMessage('close'), 300)).toBe('terminated');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(290);
    expect(exited).toBe(true);
  });

  it.runIf(process.platform === 'linux')('runs at the lowest priority on its own thread; the thread that started it keeps its own', async () => {
    const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    const tasks = () => new Set(readdirSync('/proc/self/task'));
    const before = tasks();
    pool = startDerivationWorker({ workerUrl: WORKER });
    pool.prime('EVM', wallet.evmXpub, 0);
    await until(() => pool!.readyUntil('EVM', wallet.evmXpub) > 0);
    const started = [...tasks()].filter((t) => !before.has(t));
    const nices = started.map((t) => niceOf(readFileSync(`/proc/self/task/${t}/stat`, 'utf8')));
    expect(nices.filter((n) => n === 19)).toHaveLength(1);
    expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(0);
    expect(niceOf(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'))).toBe(0);
  });

  it('asks for at most 16 ranges at a time, however many wallets come and go', async () => {
    const thread = countingThread(false);
    pool = startDerivationWorker({ workerUrl: thread.url });
    // 40 merchants' wallets, each primed and taken from: more than the pool follows (64 keys).
    const xpubs = freshXpubs(40);
    for (const round of [0, 1]) {
      for (const x of xpubs) {
        pool.prime('EVM', x, round * 10);
        pool.prime('TRON', x, round * 10);
        expect(pool.take('EVM', x, round * 10)).toBeUndefined();
      }
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(thread.asked()).toBe(16);
  });

  it('asks again once its ranges are answered', async () => {
    const thread = countingThread(true);
    const errors: string[] = [];
    pool = startDerivationWorker({ workerUrl: thread.url, onError: (m) => errors.push(m) });
    const xpubs = freshXpubs(20);
    for (const x of xpubs) pool.prime('EVM', x, 0);
    await until(() => errors.length === 16);
    expect(thread.asked()).toBe(16);
    // Answered: the wallets not asked for yet are, at their next take.
    for (const x of xpubs) expect(pool.take('EVM', x, 0)).toBeUndefined();
    await until(() => errors.length === 32);
    expect(thread.asked()).toBe(32);
  });

  it('a thread that ends without an error is reported once, and takes derive on demand', async () => {
    const errors: string[] = [];
    pool = startDerivationWorker({ workerUrl: threadFile('exits.mjs', 'process.exit(3);\n'), onError: (m) => errors.push(m) });
    await until(() => errors.length > 0);
    expect(errors).toEqual(['the address derivation thread stopped (exit 3); deriving on demand']);
    expect(pool.take('EVM', wallet.evmXpub, 0)).toBeUndefined();
  });

  it('a worker that cannot start is reported once and never breaks a take', async () => {
    const errors: string[] = [];
    pool = startDerivationWorker({ workerUrl: new URL('./no-such-worker.js', WORKER), onError: (m) => errors.push(m) });
    expect(pool.take('EVM', wallet.evmXpub, 0)).toBeUndefined();
    for (let i = 0; i < 50 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    // Reported once, though the thread both failed and exited.
    await new Promise((r) => setTimeout(r, 100));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/derivation thread stopped.*deriving on demand/);
    expect(pool.take('EVM', wallet.evmXpub, 1)).toBeUndefined();
  });
});
