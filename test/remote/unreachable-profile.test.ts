import { describe, expect, it } from 'vitest';
import { RemotePaymentService } from '../../src/remote/client.js';
import { AppError } from '../../src/core/errors.js';

/**
 * A profile's URL that cannot be reached is named as that profile's; the hint to save a new URL
 * is for a serve on this machine (a port that moved), and for a name profile add takes as typed.
 */
describe('an unreachable remote of a profile', () => {
  const refusedConnection = async () => {
    throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  };
  async function messageOf(baseUrl: string, profile: string | undefined): Promise<string> {
    const client = new RemotePaymentService({ baseUrl, profile, fetch: refusedConnection, getRetries: 0 });
    const e = await client.getOrderStatus('ord_x').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).kind).toBe('unavailable');
    return (e as AppError).message;
  }

  it.each([
    ['a loopback URL of profile dev', 'http://127.0.0.1:45999', 'dev', 'cannot reach the remote http://127.0.0.1:45999, the URL profile dev keeps: ECONNREFUSED; if its service moved (serve --port 0 listens on a new port each start), save the profile again with the new URL: cryptopay profile add dev --url URL (this replaces the saved profile, its secret included)'],
    ['localhost', 'http://localhost:8080', 'dev', 'cannot reach the remote http://localhost:8080, the URL profile dev keeps: ECONNREFUSED; if its service moved'],
    ['a production URL: named, no port hint', 'https://pay.example.com', 'prod', 'cannot reach the remote https://pay.example.com, the URL profile prod keeps: ECONNREFUSED'],
    ['a hand-edited name profile add would refuse: no command to paste', 'http://127.0.0.1:45999', 'a $(x)', 'cannot reach the remote http://127.0.0.1:45999, the URL profile a $(x) keeps: ECONNREFUSED'],
    ['no profile (--remote)', 'http://127.0.0.1:45999', undefined, 'cannot reach the remote http://127.0.0.1:45999: ECONNREFUSED'],
  ])('%s', async (_, url, profile, expected) => {
    const message = await messageOf(url, profile);
    expect(message.startsWith(expected)).toBe(true);
    if (!expected.includes('moved')) expect(message).not.toContain('moved');
  });
});
