/**
 * A host every reader takes the same way: DNS labels of letters, digits and hyphens (an IPv4
 * address is such a name too). Not an IPv6 address: a Content-Security-Policy host source cannot
 * name one, and Chromium ignores the source, so the logo never showed (outside review).
 * The URL parser lets `*`, `;`, `,`, `'` and more through in a host; a Content-Security-Policy
 * source cannot hold them (a comma starts a second policy, a semicolon a new directive).
 */
export function isPlainHost(hostname: string): boolean {
  return hostname.length <= 253 && /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(hostname);
}
