import { usage } from '../core/errors.js';

/** Decisions §9: the delays after each failed attempt; after the last, the delivery is failed. */
export const DEFAULT_SCHEDULE = '15s,1m,5m,15m,1h,3h,6h,12h,24h';

const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `15s,1m,5m` to milliseconds; each delay from 1 ms to 7 days, at most 30 of them. */
export function parseSchedule(text: string, flag = '--callback-schedule'): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > 30) throw usage(`${flag} takes at most 30 delays`);
  return parts.map((p) => {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(p);
    const ms = m ? Number(m[1]) * UNIT[m[2]!]! : NaN;
    if (!(ms >= 1 && ms <= 7 * 86_400_000)) {
      throw usage(`${flag} must be delays such as ${DEFAULT_SCHEDULE} (each from 1ms to 7d); "${p}" is not one`);
    }
    return ms;
  });
}

/**
 * The delay after the failure at `step` (0 = the first attempt), spread by ±10% so that the
 * retries of many events that failed together (a receiver down) do not return together;
 * undefined once the schedule is used up.
 */
export function retryDelay(schedule: readonly number[], step: number, random: () => number = Math.random): number | undefined {
  const base = schedule[step];
  if (base === undefined) return undefined;
  return Math.round(base * (0.9 + 0.2 * random()));
}
