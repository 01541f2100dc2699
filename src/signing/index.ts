import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../core/errors.js';

/**
 * Request signing of decisions §1: every top-level field but `sign`, empty values left out,
 * values written exactly as received, keys sorted by code point, the secret appended, SHA-256.
 */
export type SignableBody = Record<string, unknown>;

/** How the service's refusal of a signature begins (src/server/app.ts BAD_SIGNATURE); the remote client knows it by these words. */
export const BAD_SIGNATURE_WORDS = 'signature does not match';

export function canonicalString(body: SignableBody): string {
  const parts: string[] = [];
  for (const key of Object.keys(body).sort()) {
    if (key === 'sign') continue;
    const value = body[key];
    if (value === null || value === undefined || value === '') continue;
    parts.push(`${key}=${writeValue(key, value)}`);
  }
  return parts.join('&');
}

function writeValue(key: string, value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return value.toString();
    default:
      throw new AppError('invalid', `field ${key} must be a string, number or boolean; nested values are not accepted in a signed request`);
  }
}

export function signString(canonical: string, secret: string): string {
  return createHash('sha256').update(canonical + secret, 'utf8').digest('hex');
}

export function sign(body: SignableBody, secret: string): string {
  return signString(canonicalString(body), secret);
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** Constant-time check of `body.sign`; upper-case hex is accepted. */
export function verify(body: SignableBody, secret: string): boolean {
  const given = body.sign;
  if (typeof given !== 'string' || !HEX64.test(given)) return false;
  const expected = Buffer.from(sign(body, secret), 'hex');
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}
