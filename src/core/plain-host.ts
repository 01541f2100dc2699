/**
 * A host every reader takes the same way: DNS labels of letters, digits and hyphens (an IPv4
 * address is such a name too), or a bracketed IPv6 address, as the WHATWG URL parser writes it.
 * The URL parser lets `*`, `;`, `,`, `'` and more through in a host; a Content-Security-Policy
 * source cannot hold them (a comma starts a second policy, a semicolon a new directive).
 */
export function isPlainHost(hostname: string): boolean {
  if (/^\[[0-9a-f:.]+\]$/i.test(hostname)) return true;
  return hostname.length <= 253 && /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(hostname);
}
