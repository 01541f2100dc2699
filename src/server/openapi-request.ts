import { z } from 'zod';
import { authFields } from '../core/schemas.js';

/**
 * The request side of the OpenAPI document (src/server/openapi.ts): zod's schema of each signed
 * operation's body, with the exact field rules the service applies past zod on top.
 */
const schema = (s: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

export type Json = Record<string, unknown>;

/**
 * What zod cannot say about a field, because the service checks it past the schema (decisions
 * §1, §2, §6, §6a): the document states the exact rule so a client or a fuzzer is not told a
 * value passes that the server refuses.
 */
/**
 * Decimal digits, no leading zero, of a number from 1 to 2^53 - 1 (Number.MAX_SAFE_INTEGER), the
 * range the server reads a digit string in exactly: shorter numbers, then each 16-digit number
 * below the bound by the first digit where it is lower, then the bound itself.
 */
export function safeIntegerPattern(): string {
  const max = String(Number.MAX_SAFE_INTEGER);
  const alts = [`[1-9]\\d{0,${max.length - 2}}`];
  for (let i = 0; i < max.length; i++) {
    const low = i === 0 ? 1 : 0;
    const d = Number(max[i]);
    if (d > low) alts.push(`${max.slice(0, i)}[${low}-${d - 1}]\\d{${max.length - 1 - i}}`);
  }
  alts.push(max);
  return `(?:${alts.join('|')})`;
}
const SAFE_INTEGER = safeIntegerPattern();

const DIGITS = (field: string, description: string): Json => ({
  description,
  anyOf: [
    { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    { type: 'string', pattern: `^0*(?:0|${SAFE_INTEGER})$`, maxLength: 16 },
  ],
  'x-field': field,
});
/** Positive, digits with an optional point, at most 6 decimals (USDT), at most 10^12. */
const AMOUNT_PATTERN = '^0*(?:[1-9]\\d{0,11}(?:\\.\\d{1,6})?|1000000000000(?:\\.0{1,6})?|0\\.(?=\\d*[1-9])\\d{1,6})$';
export const EVM_ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const TRON_ADDRESS_PATTERN = '^T[1-9A-HJ-NP-Za-km-z]{33}$';
export const TX_HASH_PATTERN = '^(?:0x)?[0-9a-fA-F]{64}$';
const NONCE_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';
/** Ids and names: 1 to 64 characters, no control characters (decisions §1, §8). */
const ID_PATTERN = '^[^\\u0000-\\u001F\\u007F]*$';
/** The same, for an id sent back in signed callbacks (an order's oid and uid): no "&" either. */
const ID_PATTERN_ECHOED = '^[^\\u0000-\\u001F\\u007F&]*$';
const URL_FIELD: Json = { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]', minLength: 1, maxLength: 2048, description: 'an http or https URL' };
export const ADDRESS: Json = {
  description: 'EVM: 0x and 40 hex digits (mixed case must pass EIP-55); TRON: base58check T… address',
  anyOf: [{ type: 'string', pattern: EVM_ADDRESS_PATTERN }, { type: 'string', pattern: TRON_ADDRESS_PATTERN }],
};
const FIELDS: Record<string, Json> = {
  amount: { type: 'string', pattern: AMOUNT_PATTERN, description: 'positive decimal string, at most 6 decimals, at most 1000000000000' },
  chainId: {
    description: 'a known chain, as a number or a string of digits',
    anyOf: [
      { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      { type: 'string', pattern: '^(?:[1-9][0-9]{0,14}|[1-8][0-9]{15})$' },
    ],
  },
  to: ADDRESS,
  token: { ...ADDRESS, description: 'a token contract the service knows on that chain' },
  txHash: { type: 'string', pattern: TX_HASH_PATTERN, description: 'EVM: 0x and 64 hex digits; TRON: 64 hex digits, 0x accepted' },
  nonce: { type: 'string', pattern: NONCE_PATTERN, description: 'unique per merchant; 1 to 64 of A-Z a-z 0-9 _ . : -' },
  sign: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 hex of the canonical string and the secret' },
  timestamp: DIGITS('timestamp', 'milliseconds since the epoch, within 5 minutes of systemTime'),
  expiredAt: DIGITS('expiredAt', 'milliseconds since the epoch, in the future, at most 7 days ahead'),
  blockNumber: {
    description: 'positive integer, as a number or a string of digits',
    anyOf: [{ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, { type: 'string', pattern: `^${SAFE_INTEGER}$` }],
  },
  notifyUrl: URL_FIELD,
  redirectUrl: URL_FIELD,
  logo: { ...URL_FIELD, description: 'an http or https URL whose host is a plain host name (letters, digits, hyphens, dots) or an IP address: the payment page names it in its Content-Security-Policy' },
};
const ID_FIELDS = new Set(['mchId', 'oid', 'uid', 'id', 'logId']);

/**
 * The request body of a signed operation: zod's schema with the exact field rules on top. An
 * optional field also takes "" and null, which the server reads as absent (decisions §1).
 */
export function requestBody(body: z.ZodObject): Json {
  const js = schema(body.extend(authFields)) as { properties: Record<string, Json>; required?: string[] };
  const required = new Set(js.required ?? []);
  const properties: Record<string, Json> = {};
  // No string may hold "&<field>=" for a field of this request (it would let a signed body be
  // re-split: docs/decisions.md, "Why a signed body has one reading") nor a lone surrogate (it
  // hashes as U+FFFD): the server refuses both. Written so that a validator without the `u` flag
  // reads it the same (a paired surrogate matches neither branch).
  const resplit = {
    type: 'string',
    pattern: `&(?:${Object.keys(js.properties).join('|')})=|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]`,
    description: 'text that reads as another field of this request, or a lone surrogate',
  };
  for (const [k, v] of Object.entries(js.properties)) {
    let p: Json = FIELDS[k] ? { ...FIELDS[k] } : ID_FIELDS.has(k) ? { ...v, pattern: ID_PATTERN } : { ...v };
    delete p['x-field'];
    // A text sent back in signed callbacks holds no "&" (src/core/schemas.ts, echoed).
    if ((v as Record<string, unknown>)['x-echoed'] === true) {
      delete p['x-echoed'];
      if (p.pattern !== undefined && p.pattern !== ID_PATTERN) throw new Error(`openapi: ${k} has a pattern of its own and is echoed`);
      p.pattern = p.pattern === ID_PATTERN ? ID_PATTERN_ECHOED : '^[^&]*$';
      p.description = `${String(p.description ?? '').trim()} No "&": it is sent back in signed callbacks.`.trim();
    }
    p.not = resplit;
    if (!required.has(k)) p = { anyOf: [p, { const: '' }, { type: 'null' }], description: `optional; "" and null mean absent. ${String(p.description ?? '')}`.trim() };
    properties[k] = p;
  }
  return { ...js, properties };
}

