import { afterEach, describe, expect, it } from 'vitest';
import { dnsResolver } from '../../src/callbacks/resolve.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

/**
 * Callback hosts are resolved with c-ares, each lookup with its own timeout, never on libuv's
 * thread pool (an attacker review, session 24: 20 callbacks to names whose DNS server never
 * answers held getaddrinfo's threads, and every other merchant's attempts timed out behind them).
 * Against DNS servers on 127.0.0.1: one that answers, one that never does.
 */

const servers: DnsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function server(opts: Parameters<typeof startDnsServer>[0]): Promise<DnsServer> {
  const s = await startDnsServer(opts);
  servers.push(s);
  return s;
}

describe('the callback resolver', () => {
  it("answers a name's addresses from its DNS server", async () => {
    const good = await server({ names: { 'shop.example': '203.0.113.7' } });
    const resolve = dnsResolver({ servers: [good.address], hostsFile: async () => ['192.0.2.99'] });
    expect(await resolve('shop.example')).toEqual(['203.0.113.7']);
    expect(good.queries.sort()).toEqual(['shop.example/1', 'shop.example/28']);
  });

  it('a name the DNS server says does not exist is looked up in the hosts file (localhost, by getaddrinfo)', async () => {
    const good = await server({ names: {} });
    expect(await dnsResolver({ servers: [good.address] })('localhost')).toContain('127.0.0.1');
  });

  it("a DNS server that never answers: the lookup fails within its timeout, the hosts file is not asked, and 20 such lookups hold up nobody else's", async () => {
    const silent = await server({ silent: true });
    const good = await server({ names: { 'victim.example': '203.0.113.8' } });
    let hostsAsked = 0;
    const attacker = dnsResolver({ servers: [silent.address], timeoutMs: 300, tries: 2, hostsFile: async () => (hostsAsked++, ['192.0.2.1']) });
    const victim = dnsResolver({ servers: [good.address] });
    const t0 = Date.now();
    const stuck = Array.from({ length: 20 }, (_, i) => attacker(`h${i}.slowdns.example`).then(() => 'answered', (e: NodeJS.ErrnoException) => e.code));
    expect(await victim('victim.example')).toEqual(['203.0.113.8']);
    const victimMs = Date.now() - t0;
    expect(await Promise.all(stuck)).toEqual(Array.from({ length: 20 }, () => 'ETIMEOUT'));
    const stuckMs = Date.now() - t0;
    // The victim's answer came while all 20 were still waiting for theirs.
    expect(victimMs).toBeLessThan(stuckMs);
    expect(stuckMs).toBeLessThan(5_000);
    expect(hostsAsked).toBe(0);
    expect(silent.queries.length).toBeGreaterThanOrEqual(40);
  });
});
