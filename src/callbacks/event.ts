import { pooledRandom } from '../core/random-pool.js';
import { sign } from '../signing/index.js';
import type { EventFields } from '../store/outbox.js';

/**
 * The body of one attempt (decisions §9): the event's flat fields, the merchant, a fresh
 * timestamp and nonce, and `sign` by the rule of requests (decisions §1) with the merchant's
 * secret, so the merchant checks it with the code that signs its requests, and can apply the
 * same freshness and replay rules. The eventId stays the same on every attempt.
 */
export function signedEventBody(fields: EventFields, mchId: string, secret: string, now: number): Record<string, unknown> {
  const body: Record<string, unknown> = { ...fields, mchId, timestamp: now, nonce: pooledRandom(12).toString('hex') };
  body.sign = sign(body, secret);
  return body;
}
