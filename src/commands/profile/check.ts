import { AppError } from '../../core/errors.js';
import type { MerchantIdentity } from '../../core/types.js';

export interface Credentials {
  url: string;
  mchId?: string;
  secret?: string;
  timeoutMs: number;
  /** A saved profile's: named when its URL cannot be reached. */
  profile?: string;
}

/**
 * One signed read (POST /api/v1/merchant) with these credentials: the remote answers as which
 * merchant they act, or refuses them. A refusal says what it means for the operator; `after` is
 * appended to every failure (what happened to the profile).
 */
export async function checkCredentials(c: Credentials, now: () => number, after = ''): Promise<{ identity: MerchantIdentity; ms: number }> {
  const { RemotePaymentService } = await import('../../remote/client.js');
  const client = new RemotePaymentService({ baseUrl: c.url, mchId: c.mchId, secret: c.secret, timeoutMs: c.timeoutMs, now, profile: c.profile });
  const start = performance.now();
  let identity: MerchantIdentity;
  try {
    identity = await client.whoami(c.mchId);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    if (e.kind === 'unauthorized') {
      // The server answers a wrong secret and an unknown merchant alike (decisions §7), so we cannot say which.
      throw new AppError('unauthorized', `the remote ${c.url} refused the credentials of merchant ${c.mchId}: ${e.message} (the secret is wrong, or the service has no merchant ${c.mchId})${after}`);
    }
    if (e.kind === 'not_found') {
      throw new AppError('not_found', `the remote ${c.url} does not offer POST /api/v1/merchant: it is not a cryptopay service with the extension endpoints (an older version?)${after}`);
    }
    throw new AppError(e.kind, `${e.message}${after}`, e.retryAfter ? { retryAfter: e.retryAfter } : undefined);
  }
  // The answer is the remote's word: it must be about the merchant that signed.
  if (c.mchId && identity.mchId !== c.mchId) {
    throw new AppError('unavailable', `the remote ${c.url} answered for merchant ${identity.mchId}, not ${c.mchId}: it is not behaving like a cryptopay service${after}`);
  }
  return { identity, ms: Math.round(performance.now() - start) };
}
