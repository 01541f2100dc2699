import { Resolver as DnsResolver } from 'node:dns/promises';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';

/** The addresses a name resolves to. Injected in tests, so no test ever asks a real DNS for them. */
export type Resolver = (host: string) => Promise<string[]>;

/** c-ares' first wait for a DNS server's answer, doubled on its retry: about 4.5 s in all, inside the attempt's 10 s. */
const DNS_TIMEOUT_MS = 1_500;
const DNS_TRIES = 2;

/** The DNS answers that say the name has no address there: only then may the hosts file know it. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ECONNREFUSED']);

/**
 * Names of callback URLs resolved with c-ares (node:dns Resolver): asynchronous, each with its own
 * timeout. getaddrinfo (dns.lookup), used before, runs on libuv's thread pool, of which at most
 * two threads take such slow work for the whole process, and cannot be cancelled: an attacker
 * review made 20 callbacks to names whose DNS server never answers, and every other merchant's
 * attempts waited behind them until they were cut at 10 s and counted as their receivers'
 * failures. c-ares asks DNS servers only; the hosts file is read, as a file, when they answer that
 * there is no such name, or when there is no DNS server to ask, never when one does not answer or
 * fails (SERVFAIL, timeout: a name the attacker's zone holds up). Not through getaddrinfo: after
 * the file it asks the DNS servers again (session 24's attacker review: a zone that answers
 * NXDOMAIN to c-ares, then nothing, held those two threads once more).
 */
export function dnsResolver(opts: { servers?: string[]; timeoutMs?: number; tries?: number; hostsFile?: Resolver; hostsPath?: string } = {}): Resolver {
  const dns = new DnsResolver({ timeout: opts.timeoutMs ?? DNS_TIMEOUT_MS, tries: opts.tries ?? DNS_TRIES });
  if (opts.servers) dns.setServers(opts.servers);
  const hostsFile = opts.hostsFile ?? hostsFileResolver(opts.hostsPath ?? '/etc/hosts');
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)]);
    const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (addresses.length > 0) return addresses;
    const failures = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
    if (failures.every((e) => NO_SUCH_NAME.has(e.code ?? ''))) return hostsFile(host);
    throw failures.find((e) => !NO_SUCH_NAME.has(e.code ?? '')) ?? failures[0]!;
  };
}

/**
 * The addresses a hosts file gives a name (any case), the file read again when it changed. A
 * name it does not hold fails as ENOTFOUND, as getaddrinfo's would. Read on this thread: a local
 * file of a few lines, where an attacker has no say.
 */
function hostsFileResolver(path: string): Resolver {
  let seen: { mtimeMs: number; size: number; names: Map<string, string[]> } | undefined;
  const names = (): Map<string, string[]> => {
    let st: { mtimeMs: number; size: number } | undefined;
    try {
      st = statSync(path);
    } catch {
      return new Map();
    }
    if (seen && seen.mtimeMs === st.mtimeMs && seen.size === st.size) return seen.names;
    const map = new Map<string, string[]>();
    try {
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
        if (!address || isIP(address) === 0) continue;
        for (const name of aliases) {
          const key = name.toLowerCase();
          const list = map.get(key) ?? [];
          if (!list.includes(address)) list.push(address);
          map.set(key, list);
        }
      }
    } catch {
      // Unreadable: no names.
    }
    seen = { mtimeMs: st.mtimeMs, size: st.size, names: map };
    return map;
  };
  return async (host) => {
    // A fully qualified name (one trailing dot) is the same name; IPv4 first, as from DNS.
    const found = names().get(host.toLowerCase().replace(/\.$/, ''));
    if (found?.length) return [...found.filter((a) => isIP(a) === 4), ...found.filter((a) => isIP(a) === 6)];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
  };
}

/** serve's resolver: the system's DNS servers (/etc/resolv.conf), read once. */
export const systemResolver: Resolver = dnsResolver();
