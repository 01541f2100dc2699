import { expect } from 'vitest';
import { AppError } from '../../src/core/errors.js';

/**
 * Runs fn once: it must throw an AppError of kind "invalid" whose message matches re. Returns
 * the error, for further checks of its message.
 */
export function expectInvalid(fn: () => unknown, re: RegExp): AppError {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, 'should have thrown an AppError').toBeInstanceOf(AppError);
  const e = error as AppError;
  expect(e.kind).toBe('invalid');
  expect(e.message).toMatch(re);
  return e;
}
