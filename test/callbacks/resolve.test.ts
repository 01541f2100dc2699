import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('a name the DNS server says does not exist is looked up in the hosts file (localhost)', async () => {
    const good = await server({ names: {} });
    expect(await dnsResolver({ servers: [good.address] })('localhost')).toContain('127.0.0.1');
  });

  // Session 24's attacker review: the hosts file was read by getaddrinfo, which asks the DNS
  // servers again after the file; a zone that answers NXDOMAIN to c-ares and then stays silent
  // held libuv's two slow-work threads (and the chain watcher's lookups behind them) once more.
  it('the hosts file is read as a file: a name it lacks is not found, without asking anybody else', async () => {
    const none = await server({ names: {} });
    const dir = mkdtempSync(join(tmpdir(), 'cryptopay-hosts-'));
    const hostsPath = join(dir, 'hosts');
    writeFileSync(hostsPath, '# comment\n2001:db8::5 shop.internal\n192.0.2.5\tshop.internal  Shop-Alias # trailing\n\n  198.51.100.1 other.internal\n');
    const resolve = dnsResolver({ servers: [none.address], hostsPath });
    // IPv4 first, as from DNS (the sender connects to the first); a trailing dot is the same name.
    expect(await resolve('shop.internal')).toEqual(['192.0.2.5', '2001:db8::5']);
    expect(await resolve('shop.internal.')).toEqual(['192.0.2.5', '2001:db8::5']);
    expect(await resolve('SHOP-ALIAS')).toEqual(['192.0.2.5']);
    expect(await resolve('other.internal')).toEqual(['198.51.100.1']);
    // localhost is in this machine's hosts file, which getaddrinfo would have read: not in this one.
    await expect(resolve('localhost')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolve('cb1.evil.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    // A change of the file is seen at the next lookup.
    writeFileSync(hostsPath, '192.0.2.77 late.internal\n');
    expect(await resolve('late.internal')).toEqual(['192.0.2.77']);
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
