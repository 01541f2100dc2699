import { describe, expect, it } from 'vitest';
import { formatAmount, parseAmount, parseSignedAmount, sameAmount } from '../src/core/money.js';

describe('amount grammar (decisions §2)', () => {
  it.each([
    ['1', 1_000_000n],
    ['0.000001', 1n],
    ['10.5', 10_500_000n],
    ['010.50', 10_500_000n],
    ['12.500000', 12_500_000n],
    ['1.', null],
    ['1000000000000', 1_000_000_000_000_000_000n],
  ])('%s -> %s', (input, units) => {
    if (units === null) expect(() => parseAmount(input, 6)).toThrow();
    else expect(parseAmount(input, 6)).toBe(units);
  });

  it.each([
    ['1e3', /plain decimal/],
    ['-1', /plain decimal/],
    ['+1', /plain decimal/],
    ['0', /must be positive/],
    ['0.0', /must be positive/],
    [' 1', /plain decimal/],
    ['1 ', /plain decimal/],
    ['1,000', /plain decimal/],
    ['1.0000001', /more than 6 decimal places/],
    ['.5', /plain decimal/],
    ['', /plain decimal/],
    ['0x10', /plain decimal/],
    ['１', /plain decimal/],
    ['NaN', /plain decimal/],
    ['1000000000000.000001', /must not exceed/],
    ['99999999999999999999', /must not exceed/],
  ])('refuses %j', (input, message) => {
    expect(() => parseAmount(input, 6)).toThrow(message);
  });

  it('names the one bound that applies, whichever check finds an amount too large (an attacker review)', () => {
    // 9223372036854.775808 is past the ledger's integer as well as the 10^12 cap: it was told
    // "must not exceed 9223372036854.775807", and a retry below that met the other bound.
    for (const input of ['1000000000000.000001', '9223372036854.775807', '9223372036854.775808', '99999999999999999999']) {
      expect(() => parseAmount(input, 6)).toThrow(/^amount must not exceed 1000000000000$/);
    }
    // Where the ledger's integer is the smaller bound (18 places), it is the one named.
    expect(() => parseAmount('9223372036854.775808', 18)).toThrow(/^amount must not exceed 9.223372036854775807$/);
    expect(() => parseAmount('10', 18)).toThrow(/^amount must not exceed 9.223372036854775807$/);
    expect(parseAmount('9.223372036854775807', 18)).toBe(9_223_372_036_854_775_807n);
  });

  it('a missing whole part (".5") is refused with a message that says to write 0.5', () => {
    expect(() => parseAmount('.5', 6)).toThrow('amount must be a plain decimal such as "10.5" (digits, then optionally a point and more digits: 0.5, not .5; no sign, exponent, spaces or separators), got ".5"');
  });

  it('refuses numbers: amounts are strings', () => {
    expect(() => parseAmount(10 as unknown, 6)).toThrow(/must be a decimal string/);
    expect(() => parseAmount(null, 6)).toThrow(/must be a decimal string/);
  });

  it('writes the canonical form', () => {
    expect(formatAmount(10_500_000n, 6)).toBe('10.5');
    expect(formatAmount(1n, 6)).toBe('0.000001');
    expect(formatAmount(0n, 6)).toBe('0');
    expect(formatAmount(-2_500_000n, 6)).toBe('-2.5');
    expect(formatAmount(parseAmount('010.50', 6), 6)).toBe('10.5');
  });

  it('signed amounts for adjustments', () => {
    expect(parseSignedAmount('+5', 6)).toBe(5_000_000n);
    expect(parseSignedAmount('-2.5', 6)).toBe(-2_500_000n);
    expect(parseSignedAmount('3', 6)).toBe(3_000_000n);
    expect(() => parseSignedAmount('--3', 6)).toThrow();
  });
});

describe('decimal places, zeros included', () => {
  it('refuses more places than the asset has even when they are zeros', () => {
    expect(() => parseAmount('1.0000000', 6)).toThrow(/more than 6 decimal places/);
    expect(parseAmount('1.000000', 6)).toBe(1_000_000n);
  });
});

describe('sameAmount', () => {
  it('says whether two plain decimals are the same number, whatever their size or places', () => {
    const same: [string, string][] = [['2', '2.00'], ['02', '2'], ['10', '10.0'], ['1000', '1000.000000'], ['0.5', '0.50'], ['99999999999999999999.1', '99999999999999999999.10'], ['0', '0.0']];
    const differ: [string, string][] = [['2', '20'], ['10', '1'], ['1.05', '1.5'], ['0.1', '1'], ['2', '2.000001'], ['2', ' 2'], ['2', '2e0'], ['', ''], ['-2', '-2']];
    for (const [a, b] of same) expect([a, b, sameAmount(a, b), sameAmount(b, a)]).toEqual([a, b, true, true]);
    for (const [a, b] of differ) expect([a, b, sameAmount(a, b)]).toEqual([a, b, false]);
  });
});
