import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalString, sign, verify } from '../src/signing/index.js';

interface Vector { name: string; body: string; secret: string; canonical: string; sign: string }
const vectors: Vector[] = JSON.parse(readFileSync(new URL('../../shared/spec/signing-vectors.json', import.meta.url), 'utf8'));

describe('signing (decisions §1)', () => {
  it('has the shared vectors', () => expect(vectors.length).toBeGreaterThanOrEqual(6));

  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const body = JSON.parse(v.body) as Record<string, unknown>;
    expect(canonicalString(body)).toBe(v.canonical);
    expect(sign(body, v.secret)).toBe(v.sign);
    expect(verify({ ...body, sign: v.sign }, v.secret)).toBe(true);
    expect(verify({ ...body, sign: v.sign.toUpperCase() }, v.secret)).toBe(true);
    expect(verify({ ...body, sign: v.sign }, `${v.secret}x`)).toBe(false);
  });

  it('the worked vector: sign and empty values left out', () => {
    const body = { b: '2', a: '1', sign: 'x', memo: '' };
    expect(canonicalString(body)).toBe('a=1&b=2');
    expect(sign(body, 's3cr3t')).toBe('661a7c7443a2c539d30c024b2deccd650cf3140e2b612b65142e7fcab9dad9f2');
  });

  it('a changed value, a missing sign or a malformed sign does not verify', () => {
    const body = { a: '1', timestamp: 1, nonce: 'n' };
    const s = sign(body, 'k');
    expect(verify({ ...body, a: '2', sign: s }, 'k')).toBe(false);
    expect(verify(body, 'k')).toBe(false);
    expect(verify({ ...body, sign: s.slice(1) }, 'k')).toBe(false);
    expect(verify({ ...body, sign: 'z'.repeat(64) }, 'k')).toBe(false);
  });

  it('refuses nested values with a clear message', () => {
    expect(() => canonicalString({ a: { b: 1 } })).toThrow(/field a must be a string, number or boolean/);
    expect(() => canonicalString({ a: [1] })).toThrow(/nested values are not accepted/);
  });
});
