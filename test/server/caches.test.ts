import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Lru } from '../../src/core/lru.js';
import { isoTime } from '../../src/server/app.js';

describe('Lru', () => {
  it('keeps at most its size, dropping the least recently used entry', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c'), lru.size]).toEqual([1, undefined, 3, 2]);
    lru.set('a', 4);
    expect(lru.get('a')).toBe(4);
    expect(lru.size).toBe(2);
  });
});

describe('isoTime (the access log\'s time)', () => {
  it('is what Date#toISOString writes, for any millisecond, in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: 1.7e12, max: 1.7e12 + 5000 })), { maxLength: 50 }), (times) => {
        for (const t of times) expect(isoTime(t)).toBe(new Date(t).toISOString());
      }),
    );
  });
});
