/**
 * Create-order limit per merchant (decisions §8): a token bucket holding `perMinute` tokens,
 * refilled evenly, so a merchant may burst to its limit and then sustain it. In memory: one
 * serving process is one limit.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** Takes one token; returns 0, or the seconds to wait before the next request may pass. */
  take(key: string, perMinute: number, now: number): number {
    if (perMinute <= 0) return 0;
    const perMs = perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: perMinute, at: now };
    b.tokens = Math.min(perMinute, b.tokens + (now - b.at) * perMs);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
  }

  /** Returns a token taken by a request that turned out not to count (a replay). */
  giveBack(key: string, perMinute: number): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(perMinute, b.tokens + 1);
  }
}
