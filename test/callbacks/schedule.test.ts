import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, parseSchedule, retryDelay } from '../../src/callbacks/schedule.js';
import { AppError } from '../../src/core/errors.js';

describe('the retry schedule', () => {
  it('defaults to decisions §9: 15s, 1m, 5m, 15m, 1h, 3h, 6h, 12h, 24h', () => {
    expect(parseSchedule(DEFAULT_SCHEDULE)).toEqual([15_000, 60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000]);
  });

  it.each([
    ['200ms,1s, 2m', [200, 1000, 120_000]],
    ['7d', [604_800_000]],
  ])('reads %s', (text, ms) => {
    expect(parseSchedule(text)).toEqual(ms);
  });

  it.each(['', '15', '15s,', '1.5s', '-1s', '0s', '8d', '1w', '15s;1m', Array(31).fill('1s').join(',')])('refuses %j as a usage error', (text) => {
    let error: unknown;
    try {
      parseSchedule(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).kind).toBe('usage');
    expect((error as AppError).message).toMatch(/^--callback-schedule (must be delays such as 15s,1m|takes at most 30 delays)/);
  });

  it('spreads each delay by ±10% and ends after the last', () => {
    const s = [10_000, 60_000];
    expect(retryDelay(s, 0, () => 0)).toBe(9_000);
    expect(retryDelay(s, 0, () => 0.5)).toBe(10_000);
    expect(retryDelay(s, 1, () => 0.999999)).toBe(66_000);
    expect(retryDelay(s, 2, () => 0.5)).toBeUndefined();
  });
});
