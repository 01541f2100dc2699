/**
 * The ports the fetch standard blocks ("bad ports", fetch.spec.whatwg.org#port-blocking): Node's
 * fetch, which the CLI's remote mode uses, and every browser refuse to connect to them, before
 * any byte is sent. curl does not, so a serve on one of them answers curl and nothing else a
 * user has: its payment pages never open in a browser and `--remote` fails with "bad port" (an
 * operator review). test/remote/remote-url.test.ts holds this list to Node's own fetch.
 */
const BLOCKED = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113,
  115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
  563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
  6668, 6669, 6679, 6697, 10080,
]);

export const blockedPorts = (): readonly number[] => [...BLOCKED];

/** The port an http(s) URL is reached on (its scheme's default when it names none), if fetch refuses it. */
export function blockedPortOf(url: URL): number | undefined {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return BLOCKED.has(port) ? port : undefined;
}

export const blockedPortReason = (port: number) =>
  `port ${port} is one that browsers and fetch (the HTTP client of this CLI) refuse to connect to, whatever answers there`;

/**
 * Why a URL given to the service (a notifyUrl, a redirectUrl, a logo) names a port that is no
 * place for it; undefined when its port is fine. Port 0 is no server's; the blocked ports are
 * other protocols' (mail, SSH, IRC, ...): browsers refuse them, and a callback sent there would
 * be a signed POST, retried for days, into someone's mail or cache server (an attacker review).
 */
export function unusablePort(url: URL): string | undefined {
  if (url.port === '0') return 'port 0, which no server listens on';
  const port = blockedPortOf(url);
  return port === undefined ? undefined : `port ${port}, kept for services that are not HTTP (mail, SSH, IRC and others): browsers refuse it, and nothing is sent there`;
}
