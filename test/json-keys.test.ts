/**
 * src/core/json-keys.ts: the first key an object's JSON text gives twice, as JSON.parse reads
 * keys; the server, `sign` and `listen` refuse such bodies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateKey } from '../src/core/json-keys.js';

const read = (text: string) => duplicateKey(text, JSON.parse(text) as object);

describe('duplicateKey', () => {
  it('names the repeated key of the outer object, however it is spelled or spaced', () => {
    expect(read('{"a":"1","a":"2"}')).toBe('a');
    expect(read('{"a":"1","b":2,"\\u0061":3}')).toBe('a');
    expect(read('{ "b" : 1 ,\n "a":{}, "b" : null }')).toBe('b');
    expect(read('{"x":"1","y":"2","y":"3","x":"4"}')).toBe('y');
    expect(read('{"__proto__":"1","__proto__":"2"}')).toBe('__proto__');
  });

  it('finds none where every key is given once: text inside strings and keys of nested objects are not the outer keys', () => {
    expect(read('{}')).toBeUndefined();
    expect(read('{"a":"a:b,\\"a\\":1","b":"{\\"b\\":2}"}')).toBeUndefined();
    expect(read('{"a":{"a":1,"b":[{"a":2}]},"b":["a:"]}')).toBeUndefined();
    expect(read('{"a\\\\":1,"a":2}')).toBeUndefined();
  });

  it('never names a key of JSON.stringify of any object, and always names one repeated in front of it', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (o, pick) => {
        const text = JSON.stringify(o);
        expect(read(text)).toBeUndefined();
        const keys = Object.keys(o);
        const key = keys[pick % keys.length]!;
        const twice = `{${JSON.stringify(key)}:0,${text.slice(1)}`;
        expect(read(twice)).toBe(key);
      }),
      { numRuns: 500 },
    );
  });
});
