import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * serve's V8 heap policy (bench/CHANGES.md, third round: memory). By default V8 lets the young
 * generation of a busy process grow to two 16 MiB semi-spaces and the old generation grow to a
 * few times what is live before it collects: serve's peak RSS was mostly that headroom (a full
 * collection at the peak of a chain catch-up left 21 of 54 MiB of heap in use). A node flag
 * would need the launcher to re-exec node; these two flags are read by V8 while it runs, so
 * serve sets them itself:
 *
 * - the young generation grows (doubling, as V8 does) only while two doublings fit under
 *   `youngMiB`, so it settles at half of it or more and stays under it; a garbage-collection
 *   observer turns growth off and on again if V8 shrinks it while idle. Starting a worker
 *   thread resets V8's flags, so the observer sets the growth factor after every collection
 *   rather than once. Its events arrive between turns of the event loop: one long synchronous
 *   stretch can still grow the young generation past the size.
 * - the old generation's next collection is due when it has grown by `growingPercent` over
 *   what the last one left live (V8's own factor is 1.1-4 by how fast it collects).
 *
 * Neither changes what the program does, only when V8 collects garbage.
 */
export function holdServeHeap(o: { youngMiB: number; growingPercent: number }): () => void {
  const limit = o.youngMiB * 1024 * 1024;
  const decide = () => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
    // new_space is both semi-spaces; growth doubles it. It may grow only while two doublings
    // still fit: this decision reaches V8 a turn late, and V8 can double twice in between (seen
    // after it shrank the young generation while idle and grew it back), so with one doubling of
    // room it ended at twice the size now and then. Settled at half the size or more, never past
    // it. Both flags are set every time: a worker thread started since has put them back to V8's
    // defaults.
    setFlagsFromString(`--semi-space-growth-factor=${young * 4 > limit ? 1 : 2}`);
    setFlagsFromString(`--heap-growing-percent=${o.growingPercent}`);
  };
  decide();
  const observer = new PerformanceObserver(decide);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
