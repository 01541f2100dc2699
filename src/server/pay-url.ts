import { usage } from '../core/errors.js';

/** Where `cryptopay serve` listens unless told otherwise, so where the page is by default. */
export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

/**
 * The base the payment page is reached at from outside (`serve --public-url`): an http(s) URL,
 * possibly with a path prefix behind a proxy, without query, fragment or trailing slash.
 */
export function parsePublicUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw usage(`--public-url must be an absolute http(s) URL such as https://pay.example.com, got ${JSON.stringify(value.slice(0, 80))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usage('--public-url must be an http or https URL');
  if (u.search || u.hash || value.includes('?') || value.includes('#')) throw usage('--public-url takes no query or fragment');
  if (u.username || u.password) throw usage('--public-url must not carry a user name or password');
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

/** The payment page of an order (decisions §11: create order's `payUrl`). */
export function payUrlOf(base: string, id: string): string {
  return `${base}/pay/${encodeURIComponent(id)}`;
}

/**
 * payUrl's base when `--public-url` is not given: where serve listens. An address that means
 * "every interface" (0.0.0.0, ::) is no address a browser can open, so it becomes this machine;
 * `wildcard` says so, for serve to tell the operator that payers elsewhere need `--public-url`.
 */
export function defaultPublicUrl(listening: string): { url: string; wildcard: boolean } {
  const u = new URL(listening);
  const local = u.hostname === '0.0.0.0' ? '127.0.0.1' : u.hostname === '[::]' ? '[::1]' : undefined;
  if (!local) return { url: listening, wildcard: false };
  u.hostname = local;
  return { url: `${u.origin}${u.pathname}`.replace(/\/+$/, ''), wildcard: true };
}
