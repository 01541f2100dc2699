import { Worker } from 'node:worker_threads';
import type { ChainType } from '../core/types.js';
import { createDeriver } from './deriver.js';
import { endWorker, type ThreadEnd } from '../core/end-worker.js';
import type { RangeMessage, RangeReply, RangeRequest } from './derive-ranges.js';

/**
 * An address pool refilled ahead of demand, on a worker thread (`cryptopay serve`). Creating an
 * order takes its addresses from here when they are ready and derives them itself otherwise, so
 * the pool only ever saves time: an address is a pure function of (xpub, index), and the index
 * is still allocated inside the order's transaction. Ranges are asked for per (chain, xpub) as
 * orders use them up; indices skipped (another process created orders) are simply dropped.
 */
export interface AheadPool {
  /** The address at `index` if it is ready; asks for more when running low. */
  take(chain: ChainType, xpub: string, index: number): string | undefined;
  /** Starts deriving a wallet's addresses from `next` on, before any order asks (serve's start). */
  prime(chain: ChainType, xpub: string, next: number): void;
  /** How far ahead the pool reaches for a wallet: one past the last ready index (0 if none). Asks for nothing. */
  readyUntil(chain: ChainType, xpub: string): number;
  /** Stops asking; the thread is asked to end and awaited (how it ended is returned). */
  close(): Promise<ThreadEnd>;
}

/** Each request derives this many. */
const CHUNK = 1024;
/**
 * A new request goes out when fewer than this are left ahead: two chunks, so that a wallet's
 * next chunk is ready even while the thread works on the other chain's (measured with one
 * chunk: ~5% of takes missed under the create-order load, each miss deriving on the serving thread).
 */
const LOW_WATER = 2 * CHUNK;
/** Wallets followed at once; the least recently used is forgotten beyond that. */
const MAX_WALLETS = 64;
/**
 * Ranges asked for and not yet answered, at most: serve primes 8 merchants' two wallets at
 * start. With more wallets in use than MAX_WALLETS, a forgotten wallet asks again when it comes
 * back, and without a bound those requests would queue on the thread for as long as the churn
 * lasted (an outside review); beyond it, takes derive on the spot, as on any miss.
 */
const MAX_OUTSTANDING = 16;

interface Entry {
  /** The index of addresses[0]. */
  start: number;
  /** The last index taken. */
  last: number;
  addresses: string[];
  pending: boolean;
}

/**
 * The pool, on a thread of its own (`workerUrl`, else ./derive-worker.js, which runs at the lowest
 * priority). When the thread stops, takes derive on demand.
 */
export function startDerivationWorker(opts: { onError?: (message: string) => void; workerUrl?: URL } = {}): AheadPool {
  const worker = new Worker(opts.workerUrl ?? new URL('./derive-worker.js', import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  let exited = false;
  let dead = false;
  let closing = false;
  const entries = new Map<string, Entry>();
  const keyOf = (chain: ChainType, xpub: string) => `${chain}:${xpub}`;
  const stopped = (why: string) => {
    if (dead || closing) return;
    dead = true;
    opts.onError?.(`the address derivation thread stopped (${why}); deriving on demand`);
  };

  let outstanding = 0;
  worker.on('message', (r: RangeReply) => {
    // Every request gets one reply, whether or not its wallet is still followed.
    outstanding--;
    const e = entries.get(keyOf(r.chain, r.xpub));
    if (!e) return;
    e.pending = false;
    if ('error' in r) {
      opts.onError?.(`address derivation ahead failed for ${r.chain} index ${r.start}: ${r.error}; deriving on demand`);
      return;
    }
    const end = e.start + e.addresses.length;
    if (r.start > end) {
      e.start = r.start;
      e.addresses = r.addresses;
    } else if (r.start + r.addresses.length > end) {
      e.addresses = e.addresses.concat(r.addresses.slice(end - r.start));
    }
    // Orders may have moved past this range while it was on its way: ask again if low.
    refill(r.chain, r.xpub, e, e.last);
  });
  worker.on('error', (err) => stopped(err.message));
  // Ended without an error (not asked to): said as well, once.
  worker.once('exit', (code) => {
    exited = true;
    stopped(`exit ${code}`);
  });
  // The pool never keeps the process alive: serve decides when it stops.
  worker.unref();

  const refill = (chain: ChainType, xpub: string, e: Entry, index: number) => {
    if (dead || e.pending || outstanding >= MAX_OUTSTANDING) return;
    const end = e.start + e.addresses.length;
    if (end - index - 1 >= LOW_WATER) return;
    e.pending = true;
    outstanding++;
    const node = createDeriver(xpub).change;
    worker.postMessage({ chain, xpub, node, start: Math.max(end, index + 1), count: CHUNK } satisfies RangeRequest);
  };

  const entryOf = (chain: ChainType, xpub: string, index: number): Entry => {
    const key = keyOf(chain, xpub);
    let e = entries.get(key);
    if (e) {
      entries.delete(key);
      entries.set(key, e);
    } else {
      entries.set(key, (e = { start: index + 1, last: index, addresses: [], pending: false }));
      if (entries.size > MAX_WALLETS) entries.delete(entries.keys().next().value!);
    }
    return e;
  };

  return {
    prime(chain, xpub, next) {
      const e = entryOf(chain, xpub, next - 1);
      refill(chain, xpub, e, next - 1);
    },
    readyUntil(chain, xpub) {
      const e = entries.get(keyOf(chain, xpub));
      return e ? e.start + e.addresses.length : 0;
    },
    take(chain, xpub, index) {
      const e = entryOf(chain, xpub, index);
      e.last = index;
      const at = index - e.start;
      const hit = at >= 0 ? e.addresses[at] : undefined;
      // Forget what is behind (indices only move forward), a chunk at a time.
      if (at >= CHUNK || at >= e.addresses.length) {
        e.addresses = e.addresses.slice(Math.min(at, e.addresses.length));
        e.start = index;
      }
      refill(chain, xpub, e, index);
      return hit;
    },
    async close() {
      closing = true;
      dead = true;
      return endWorker(worker, () => exited, () => worker.postMessage('close' satisfies RangeMessage));
    },
  };
}
