import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const POLICY = new URL('../../dist/server/heap-policy.js', import.meta.url).href;

/** A node process (its work in small event loop turns) that keeps ~3 MB of recent objects alive while it allocates ~100 MB: V8 grows the young generation to its maximum. */
function youngPeak(policy: string): number {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { getHeapSpaceStatistics } from 'node:v8';
    import { holdServeHeap } from ${JSON.stringify(POLICY)};
    ${policy}
    // A worker started after the policy puts V8's flags back to their defaults.
    await new Promise((r) => new Worker('1', { eval: true }).on('exit', r));
    const keep = [];
    let max = 0;
    for (let r = 0; r < 800; r++) {
      const batch = [];
      for (let i = 0; i < 2000; i++) batch.push({ a: 'x'.repeat(20) + i, b: [i, i + 1] });
      keep.push(batch);
      if (keep.length > 30) keep.shift();
      max = Math.max(max, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
      // An event loop turn, as serve's work has: the policy acts on garbage-collection events.
      await new Promise((r) => setImmediate(r));
    }
    console.log(max);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return Number(r.stdout) / 1048576;
}

describe("serve's heap policy", () => {
  it('holds the young generation at its size, even after a worker thread resets V8 flags', () => {
    expect(youngPeak('')).toBeGreaterThan(16);
    expect(youngPeak('holdServeHeap({ youngMiB: 4, growingPercent: 50 });')).toBeLessThanOrEqual(4);
    expect(youngPeak('holdServeHeap({ youngMiB: 16, growingPercent: 50 });')).toBeLessThanOrEqual(16);
  });
});
