import { findMerchant } from './merchants.js';
import { onPublicTestWallet } from './payments.js';
import type { StoreCtx } from './store-context.js';

/**
 * Whether this request may name a loopback or private URL (a notifyUrl, a logo): where the
 * operator allowed it (serve --allow-private-callbacks, serve --dev, the CLI's
 * CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1), and on the CLI at the ledger file for the public test
 * wallet's merchant (serve --dev's), whose orders are test money and whose callbacks serve --dev
 * sends inward: two new-user trials had `order create --notify-url http://127.0.0.1:…` refused on
 * the sandbox's own ledger, which the printed curl did without a word. Never for a request that
 * came through serve's API (serve's service has no `localOperator`).
 */
export function inwardUrlsAllowed(s: StoreCtx, mchId: string | undefined): boolean {
  if (s.allowPrivateCallbacks) return true;
  if (!s.localOperator) return false;
  try {
    return onPublicTestWallet(s.db, findMerchant(s, s.db, mchId).id, 'any');
  } catch {
    // No such merchant: refused as usual, and the operation says it is not there.
    return false;
  }
}
