import { invalid } from './errors.js';

export const DAY = 86_400_000;
/** How far ahead an order may expire (decisions §3). */
export const MAX_ORDER_AHEAD = 7 * DAY;

/** "30m", "2h", "1d", "90s" to milliseconds. */
export function parseDuration(value: string, field: string): number {
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(value.trim());
  if (!m) throw invalid(`${field} must be a duration such as 30m, 2h or 1d`);
  const ms = Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: DAY }[m[2] as 's' | 'm' | 'h' | 'd'];
  if (ms < 60_000 || ms > MAX_ORDER_AHEAD) throw invalid(`${field} must be between 1m and 7d`);
  return ms;
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', DAY], ['h', 3_600_000], ['m', 60_000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}
