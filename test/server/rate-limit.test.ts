import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/server/rate-limit.js';

/**
 * "N requests per minute" (spec §4.2, §8; decisions §8), exactly: of any requests, the limiter
 * passes at most N in any 60 seconds, and refuses one only when N passed in the minute before it;
 * a refusal's Retry-After is when the next one passes. An outside review had 118 of 120 creates
 * pass within 58 s at a limit of 60 (a token bucket refilled while the burst was still in the minute).
 */
describe('the rate limiter', () => {
  it('passes at most N in any 60 s, refuses only when N passed in the minute before, and its wait is exact; also with requests given back and the limit changed', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ gap: fc.integer({ min: 0, max: 30_000 }), n: fc.integer({ min: 1, max: 6 }), back: fc.option(fc.nat(), { nil: undefined }) }),
          { minLength: 1, maxLength: 200 },
        ),
        (steps) => {
          const limiter = new RateLimiter();
          const passed: number[] = [];
          let now = 0;
          for (const { gap, n, back } of steps) {
            now += gap;
            // Now and then a request that passed turns out a replay and is given back: its own
            // time leaves the count, not another's.
            const inWindow = passed.filter((t) => t > now - 60_000);
            if (back !== undefined && inWindow.length > 0) {
              const at = inWindow[back % inWindow.length]!;
              limiter.giveBack('m', at);
              passed.splice(passed.lastIndexOf(at), 1);
            }
            const inMinute = passed.filter((t) => t > now - 60_000);
            const wait = limiter.take('m', n, now);
            if (inMinute.length < n) {
              expect(wait).toBe(0);
              passed.push(now);
            } else {
              // The n-th newest pass leaves the window at its time + 60 s: not before.
              expect(wait).toBe(Math.max(1, Math.ceil((inMinute[inMinute.length - n]! + 60_000 - now) / 1000)));
            }
            // Whatever happened, the requests counted now are at most the limit asked with.
            expect(passed.filter((t) => t > now - 60_000).length).toBeLessThanOrEqual(Math.max(n, inMinute.length));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('with one limit throughout, no 60 s hold more than N passes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 200 }), (n, gaps) => {
        const limiter = new RateLimiter();
        const passed: number[] = [];
        let now = 0;
        for (const gap of gaps) if (limiter.take('m', n, (now += gap)) === 0) passed.push(now);
        for (let i = 0; i + n < passed.length; i++) expect(passed[i + n]! - passed[i]!).toBeGreaterThanOrEqual(60_000);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps each key apart, gives back a request that did not count, and follows a limit lowered meanwhile', () => {
    const limiter = new RateLimiter();
    for (let i = 0; i < 3; i++) expect(limiter.take('a', 3, i * 1000)).toBe(0);
    expect(limiter.take('a', 3, 3000)).toBe(57);
    expect(limiter.take('b', 3, 3000)).toBe(0);
    // The request of 1 s turns out a replay: its time leaves the count, the others' stay.
    limiter.giveBack('a', 1000);
    expect(limiter.take('a', 3, 4000)).toBe(0);
    expect(limiter.take('a', 3, 4000)).toBe(56);
    // Lowered to 1: it passes again once all three of the last minute have left it.
    expect(limiter.take('a', 1, 5000)).toBe(60 - 5 + 4);
    expect(limiter.take('a', 1, 64_000)).toBe(0);
    // A clock stepped back does not make the wait longer than a minute.
    expect(limiter.take('a', 1, 0)).toBe(60);
  });
});
