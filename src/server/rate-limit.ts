/** The window of a limit: "N requests per minute" counts the requests of any 60 seconds. */
const WINDOW_MS = 60_000;

/**
 * The times of the requests one key passed in the last minute, oldest first: a ring that grows
 * (doubling) to at most the limit, so it holds no more than the traffic it saw.
 */
class Window {
  private times = new Float64Array(8);
  private head = 0;
  size = 0;

  /** The time of the i-th oldest request kept. */
  at(i: number): number {
    return this.times[(this.head + i) % this.times.length]!;
  }

  /** Forgets the requests older than a minute at `now`. */
  expire(now: number): void {
    while (this.size > 0 && this.times[this.head]! <= now - WINDOW_MS) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
    // A burst long gone keeps no memory.
    if (this.size === 0 && this.times.length > 64) {
      this.times = new Float64Array(8);
      this.head = 0;
    }
  }

  push(at: number): void {
    if (this.size === this.times.length) {
      const grown = new Float64Array(this.times.length * 2);
      for (let i = 0; i < this.size; i++) grown[i] = this.times[(this.head + i) % this.times.length]!;
      this.times = grown;
      this.head = 0;
    }
    this.times[(this.head + this.size) % this.times.length] = at;
    this.size++;
  }

  /** Drops the newest request counted at `at` (given back); those after it move up. */
  remove(at: number): void {
    for (let i = this.size - 1; i >= 0; i--) {
      if (this.at(i) !== at) continue;
      for (let j = i; j < this.size - 1; j++) this.times[(this.head + j) % this.times.length] = this.at(j + 1);
      this.size--;
      return;
    }
  }
}

/**
 * Create-order limit per merchant (decisions §8), and withdraw verify, confirm and reject's: at most
 * `perMinute` requests in any 60 seconds, exactly as the spec words it ("60 requests per
 * minute"). A token bucket of `perMinute` refilled evenly, used before, let a burst of the limit
 * and then the refill through: 118 creates within 58 s at a limit of 60 (an outside review). The
 * times of the last minute's requests are kept (at most the limit's number per key, as many as
 * came); a refused request is not counted. In memory: one serving process is one limit.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  /** Counts one request; returns 0, or the seconds to wait before the next request may pass. */
  take(key: string, perMinute: number, now: number): number {
    if (perMinute <= 0) return 0;
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = new Window()));
    w.expire(now);
    if (w.size < perMinute) {
      w.push(now);
      return 0;
    }
    // Full (or over a limit lowered since): the next request passes once all but perMinute - 1
    // of these have left the window. Never more than a minute, should the clock step back.
    return Math.min(60, Math.max(1, Math.ceil((w.at(w.size - perMinute) + WINDOW_MS - now) / 1000)));
  }

  /**
   * Uncounts a request that turned out not to count (a replay): the one `take` counted at `at`,
   * not merely the newest, which may be another request's that passed meanwhile (code review).
   */
  giveBack(key: string, at: number): void {
    this.windows.get(key)?.remove(at);
  }
}
