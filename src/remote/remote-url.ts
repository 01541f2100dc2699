import { blockedPortOf, blockedPortReason } from '../core/blocked-ports.js';
import { usage } from '../core/errors.js';
import { printable } from './text.js';

/**
 * The address of a remote is checked before anything is sent to it (issue #10 item 5):
 * - http or https only;
 * - no user name or password in it: they are not how cryptopay authenticates (requests are
 *   signed), and a URL with a password lands in shell history and server logs. No message
 *   repeats them;
 * - no query or fragment: requests would drop them; no message repeats them either;
 * - not on a port fetch refuses (src/core/blocked-ports.ts): it would fail with "bad port";
 * - plain http only to this machine (127.0.0.0/8, ::1, localhost), unless the user says so:
 *   elsewhere the signed requests and the answers cryptopay prints would cross a network
 *   in clear text, open to anyone on the path.
 */
export function checkRemoteUrl(raw: string, opts: { insecureHttp: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw usage(`the remote must be an http or https URL, got ${JSON.stringify(redactUrlText(raw))}`);
  }
  const credentials = credentialsProblem(url);
  if (credentials) throw usage(credentials);
  // The client builds each request's URL on the base's path: a query or a fragment would be
  // dropped (a key in it never sent), and repeating it in a message could show a token.
  const mark = /[?#]/.exec(raw)?.[0];
  if (mark) {
    const shown = `${url.protocol}//${url.host}${url.pathname}${mark}…`;
    throw usage(`the remote ${printable(shown)} has a query or a fragment, which a request to it would drop: give the service's base URL alone, such as https://pay.example.com`);
  }
  const port = blockedPortOf(url);
  if (port !== undefined) throw usage(`the remote ${printable(raw)} uses port ${port}: ${blockedPortReason(port)}; run serve on another port`);
  if (url.protocol === 'http:' && !opts.insecureHttp && !isLoopbackHost(url.hostname)) {
    throw usage(
      `the remote ${printable(raw)} is plain http to a host that is not this machine: the signed requests and their answers would cross the network unencrypted. Use https, or pass --insecure-http (or set CRYPTOPAY_INSECURE_HTTP=1, or save the profile with --insecure-http) if that network is yours`,
    );
  }
  return raw;
}

/** The refusal of a URL holding credentials, shown with them masked; null when it has none. */
export function credentialsProblem(url: URL): string | null {
  if (!url.username && !url.password) return null;
  const shown = `${url.protocol}//***@${url.host}${url.pathname}`;
  return `the remote URL holds a user name or password (${shown}); they are not used: requests are signed with the merchant secret, and a password in a URL ends up in shell history and server logs. Give the URL without them`;
}

/**
 * As the host of a parsed URL reads: WHATWG URL has already turned 127.1, 2130706433 and
 * 0x7f.1 into dotted decimal and put IPv6 in brackets, compressed and lower-case.
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)) return true;
  if (hostname === '[::1]') return true;
  // IPv4-mapped 127.0.0.0/8 (::ffff:127.x.y.z), which URL writes in hex.
  return /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(hostname);
}

/** Text that did not parse as a URL, with anything that may be credentials or a token masked. */
export function redactUrlText(raw: string): string {
  const masked = raw
    .replace(/^([a-z][a-z0-9+.-]*:\/+)?[^/?#]*@/i, (_m, scheme: string | undefined) => `${scheme ?? ''}***@`)
    .replace(/([?#]).*$/s, '$1…');
  const shown = printable(masked);
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
}
