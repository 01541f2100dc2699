/**
 * Why an attempt failed, as the sender records it for the operator, and as a merchant reads it.
 *
 * The operator's record names what the notifyUrl's host resolved to ("refused: NAME resolves
 * to 10.0.0.5, a private address") or the resolver's error ("cannot resolve NAME: ENOTFOUND").
 * Shown to the merchant, the two told it which names the service's resolver knows inside its
 * network, and their private addresses: one notifyUrl per probe mapped the service's network
 * (attacker review of 2026-11-24). The merchant reads one sentence for both instead; the
 * failures of a public address (refused connections, time-outs, HTTP statuses) are its own
 * receiver's and stay as they are.
 */

/** The start of a refusal of the guard (an inward address). */
export const REFUSED = 'refused: ';
/** The start of a failure to resolve the host. */
export const UNRESOLVED = 'cannot resolve ';

export const NOT_PUBLIC =
  'not sent: the host of the notifyUrl has no public address the service sends to (it does not resolve, or resolves to a loopback, private or reserved address)';

/** An attempt's error as the merchant whose callback it is may read it. */
export function merchantError(error: string | null): string | null {
  if (error !== null && (error.startsWith(REFUSED) || error.startsWith(UNRESOLVED))) return NOT_PUBLIC;
  return error;
}
