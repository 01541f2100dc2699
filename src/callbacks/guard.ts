import { BlockList, isIP } from 'node:net';
import { invalid } from '../core/errors.js';
import { withArticle } from '../core/words.js';

/**
 * Callbacks never go inward (decisions §9): a merchant's notifyUrl must not make the service
 * call its own machine, its network or a cloud's metadata service. Addresses are judged by
 * what they are, not by how they were spelt: WHATWG URL already turned `127.1` or `0x7f.1`
 * into 127.0.0.1, and an IPv4 address inside IPv6 (::ffff:a.b.c.d, NAT64, 6to4) is judged as
 * the IPv4 address it carries.
 */
const V4: [string, number, string][] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'reserved (documentation)'],
  ['192.88.99.0', 24, 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'reserved (documentation)'],
  ['203.0.113.0', 24, 'reserved (documentation)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved (discard)'],
  ['2001::', 23, 'reserved (IETF protocol assignments)'],
  ['2001:db8::', 32, 'reserved (documentation)'],
  ['fc00::', 7, 'private (unique local)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'reserved (site-local)'],
  ['ff00::', 8, 'multicast'],
];

const lists = new Map<string, { list: BlockList; type: 'ipv4' | 'ipv6' }>();
for (const [net, prefix, kind] of V4) add(kind, net, prefix, 'ipv4');
for (const [net, prefix, kind] of V6) add(kind, net, prefix, 'ipv6');

function add(kind: string, net: string, prefix: number, type: 'ipv4' | 'ipv6'): void {
  const key = `${type} ${kind}`;
  let entry = lists.get(key);
  if (!entry) lists.set(key, (entry = { list: new BlockList(), type }));
  entry.list.addSubnet(net, prefix, type);
}

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), if any. */
function embeddedV4(ip: string): string | undefined {
  const words = expandV6(ip);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64)
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (zero(0, 6) && (words[6]! !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6]!, words[7]!);
  // 2002:AABB:CCDD::/48 (6to4) carries AA.BB.CC.DD
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

function expandV6(ip: string): number[] | undefined {
  let s = ip.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  // A trailing dotted quad becomes two words.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const part = (x: string) => (x ? x.split(':').map((w) => parseInt(w, 16)) : []);
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 0) return undefined;
  const words = [...head, ...new Array<number>(fill).fill(0), ...tail];
  return words.some((w) => Number.isNaN(w)) ? undefined : words;
}

/** "a loopback address", "an unspecified address": the kind forbiddenAddress names, with its article. */
export const kindOfAddress = (why: string) => `${withArticle(why)} address`;

/**
 * Why an IP address must not receive a callback ("loopback", "private", ...), or undefined for
 * a public address. Anything that is not an IP address at all is refused too.
 */
export function forbiddenAddress(ip: string): string | undefined {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const inner = embeddedV4(bare);
    if (inner !== undefined) return forbiddenAddress(inner);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [key, { list, type: t }] of lists) {
    if (t === type && list.check(bare, type)) return key.slice(5);
  }
  // Outside 2000::/3 nothing is global unicast yet.
  if (family === 6) {
    const first = expandV6(bare)?.[0] ?? 0;
    if ((first & 0xe000) !== 0x2000) return 'reserved';
  }
  return undefined;
}

/** Names that always mean this machine (RFC 6761), whatever a resolver says. */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * What lifts the inward-address refusal, named in it: serve's flag, unless the refusal is the
 * CLI's on a local ledger (src/context.ts passes CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1).
 */
const SERVE_SWITCH = 'serve --allow-private-callbacks';
export const privateHint = (lift = SERVE_SWITCH) => `callbacks are never sent to loopback, private, link-local or reserved addresses (${lift} lifts this for development)`;
export const PRIVATE_HINT = privateHint();

/**
 * Refuses, when an order or a withdrawal is created, a notifyUrl whose host is such an address
 * written out (or `localhost`): it could never be delivered. A name is judged when delivering,
 * on the address actually connected to.
 */
export function checkNotifyUrl(url: string, field = 'notifyUrl', hint = PRIVATE_HINT): void {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return; // the schema refuses it with its own message
  }
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (isLocalName(bare)) throw invalid(`${field} points to ${host}, this machine: ${hint}`);
  if (isIP(bare) === 0) return;
  const why = forbiddenAddress(bare);
  if (why) throw invalid(`${field} points to ${host}, ${kindOfAddress(why)}: ${hint}`);
}

/**
 * The payment page's logo is fetched by every payer's browser, so one at an inward address would
 * be a request to the payer's own machine or network that the merchant chooses: refused like a
 * notifyUrl, when written out (a name is the payer's resolver's to answer).
 */
export const checkLogoUrl = (url: string, lift = SERVE_SWITCH) =>
  checkNotifyUrl(url, 'logo', `every payer's browser would ask its own machine or network for it; give a public address (${lift} lifts this for development)`);
