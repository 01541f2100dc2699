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

/**
 * The day (YYYY-MM-DD) a time is written with, when that day does not exist: Date.parse rolls
 * 2026-02-30 over into 2 March and 2026-11-31 into 1 December, silently. Undefined otherwise.
 */
export function missingDay(text: string): string | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)/.exec(text.trim());
  if (!m) return undefined;
  const [y, month, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, month - 1, d));
  return month >= 1 && month <= 12 && day.getUTCMonth() === month - 1 && day.getUTCDate() === d ? undefined : m[0];
}
