import { createRequire } from 'node:module';

/**
 * node:crypto is required on first use, not when the module loads: a read such as
 * `order status` draws no random bytes, and loading crypto was ~2.7 ms of its start-up.
 */
let crypto: typeof import('node:crypto') | undefined;
export const randomBytes = (n: number): Buffer => (crypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(n);

const POOL_BYTES = 4096;
let pool: Buffer = Buffer.alloc(0);
let at = 0;

/**
 * `n` (at most 4 KiB) bytes of the CSPRNG from a pool filled 4 KiB at a time: ids and callback
 * nonces are drawn thousands of times a second, and one call into the CSPRNG each was a visible
 * share of a create order and of a delivery. No byte is handed out twice. The answer is a view
 * of the pool; a refill makes a new pool, so it is never overwritten.
 */
export function pooledRandom(n: number): Buffer {
  if (at + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n));
    at = 0;
  }
  at += n;
  return pool.subarray(at - n, at);
}
