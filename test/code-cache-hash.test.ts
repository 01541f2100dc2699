import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wordHash } from '../src/code-cache-hash.js';

/** The same function in plain BigInt arithmetic, for comparison with the WebAssembly module. */
function reference(data: Uint8Array): bigint {
  const padded = new Uint8Array((data.length + 7) & ~7);
  padded.set(data);
  const view = new DataView(padded.buffer);
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < padded.length; i += 8) h = BigInt.asUintN(64, (h ^ view.getBigUint64(i, true)) * 0x100000001b3n);
  return h;
}

describe('wordHash', () => {
  it('equals the reference for any bytes, whatever was hashed before (memory reused, grown)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300_000 }), { minLength: 1, maxLength: 4 }), (inputs) => {
        for (const data of inputs) expect(wordHash(data)).toBe(reference(data));
      }),
      { numRuns: 30 },
    );
    expect(wordHash(new Uint8Array(0))).toBe(0xcbf29ce484222325n);
  });

  it('changes when any one byte changes, a zero appended included', () => {
    const data = new Uint8Array(4099).map((_, i) => (i * 31) & 0xff);
    const h = wordHash(data);
    for (const at of [0, 7, 8, 2048, 4095, 4098]) {
      const other = data.slice();
      other[at] ^= 0x01;
      expect(wordHash(other), `byte ${at}`).not.toBe(h);
    }
    // A payload one zero longer pads to the same words: the entry's header holds the length too.
    expect(wordHash(new Uint8Array([...data, 0]))).toBe(h);
  });
});
