import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliver, type Connector, type Resolver } from '../../src/callbacks/deliver.js';
import { checkNotifyUrl, forbiddenAddress } from '../../src/callbacks/guard.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * Never inward (decisions §9, issue #13 item 4). The rows with addresses other than 127.0.0.1
 * and ::1 go through an injected resolver and connector: this test never opens a socket to
 * anything else, and the connector that would open one fails the test if it is ever asked.
 */
const INWARD: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'shared (carrier-grade NAT)'],
  ['0.0.0.0', '"this network"'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fc00::1', 'private (unique local)'],
  ['fd12:3456::1', 'private (unique local)'],
  ['fe80::1', 'link-local'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['2002:c0a8:101::1', 'private'],
  ['ff02::1', 'multicast'],
];
const PUBLIC = ['93.184.216.34', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:93.184.216.34'];

describe('the address table', () => {
  it.each(INWARD)('%s is refused as %s', (ip, why) => {
    expect(forbiddenAddress(ip)).toBe(why);
  });
  it.each(PUBLIC)('%s is a public address', (ip) => {
    expect(forbiddenAddress(ip)).toBeUndefined();
  });
});

describe('a notifyUrl written with an inward address is refused at creation', () => {
  it.each([
    'http://127.0.0.1/cb', 'http://10.0.0.1/cb', 'http://172.16.0.1/cb', 'http://192.168.1.1/cb', 'http://169.254.169.254/latest/meta-data',
    'http://[::1]/cb', 'http://[fc00::1]/cb', 'http://[::ffff:127.0.0.1]/cb', 'http://127.1/cb', 'http://0x7f000001/cb', 'http://2130706433/cb',
    'https://localhost/cb', 'https://api.localhost./cb',
  ])('%s', (url) => {
    expect(() => checkNotifyUrl(url)).toThrow(/^notifyUrl points to .*callbacks are never sent to loopback, private, link-local or reserved addresses/);
  });
  it.each([
    ['http://[::]/', 'notifyUrl points to [::], an unspecified address: '],
    ['http://224.0.0.1/', 'notifyUrl points to 224.0.0.1, a multicast address: '],
  ])('%s: the kind is named with its article (an outsider: "a unspecified")', (url, says) => {
    expect(() => checkNotifyUrl(url)).toThrow(says);
  });
  it.each(['https://shop.example/cb', 'http://93.184.216.34/cb', 'https://[2606:4700:4700::1111]/cb'])('%s passes (a name is judged when delivering)', (url) => {
    expect(() => checkNotifyUrl(url)).not.toThrow();
  });
});

/** A connector that opens nothing and fails the test if it is asked to. */
const forbidden: Connector = (t) => {
  throw new Error(`the guard let a connection to ${t.address} through`);
};

/** Connects every attempt to the test's receiver on 127.0.0.1, whatever address it was for, and records that address. */
function toReceiver(r: Receiver, asked: string[]): Connector {
  return (t) => {
    asked.push(t.address);
    return connect(r.port, '127.0.0.1');
  };
}

const fixed = (map: Record<string, string[]>, asked: string[] = []): Resolver => async (host) => {
  asked.push(host);
  const a = map[host];
  if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return a;
};

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

describe('delivery checks the address it connects to', () => {
  it.each(INWARD)('a URL with %s is refused before any connection', async (ip) => {
    const host = ip.includes(':') ? `[${ip}]` : ip;
    const r = await deliver(`http://${host}:8080/cb`, '{}', { allowPrivate: false, connector: forbidden, resolver: fixed({}) });
    expect(r).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: .* address; callbacks are never sent to loopback/) });
  });

  it.each([
    ['loopback', ['127.0.0.1']],
    ['the metadata service', ['169.254.169.254']],
    ['a private address among public ones', ['93.184.216.34', '10.0.0.7']],
    ['an IPv6 unique-local address', ['fd00::5']],
    ['an IPv4-mapped loopback', ['::ffff:127.0.0.1']],
  ])('a name that resolves to %s is refused', async (_label, addresses) => {
    const r = await deliver('https://hooks.shop.example/cb', '{}', { allowPrivate: false, connector: forbidden, resolver: fixed({ 'hooks.shop.example': addresses }) });
    expect(r.error).toMatch(new RegExp(`^refused: hooks\\.shop\\.example resolves to ${addresses.find((a) => forbiddenAddress(a))!.replace(/\./g, '\\.')}, a `));
  });

  it('localhost is refused without asking any resolver', async () => {
    const asked: string[] = [];
    const r = await deliver('http://localhost:8/cb', '{}', { allowPrivate: false, connector: forbidden, resolver: fixed({}, asked) });
    expect(r.error).toMatch(/^refused: localhost is this machine/);
    expect(asked).toEqual([]);
  });

  it('a real name that resolves to loopback (localhost.localdomain-style names through the system resolver) is refused too', async () => {
    // The system resolver answers "localhost" with loopback; the guard refuses before connecting.
    const r = await deliver('http://sub.localhost:8/cb', '{}', { allowPrivate: false, connector: forbidden });
    expect(r.error).toMatch(/^refused: sub\.localhost is this machine/);
  });

  it('a public name is connected to at the address that was checked, with its own Host header', async () => {
    const rec = await startReceiver();
    receivers.push(rec);
    const asked: string[] = [];
    const r = await deliver('http://hooks.shop.example:8443/cb?x=1', '{"a":1}', { allowPrivate: false, connector: toReceiver(rec, asked), resolver: fixed({ 'hooks.shop.example': ['93.184.216.34'] }) });
    expect(r).toMatchObject({ statusCode: 200, error: null });
    expect(asked).toEqual(['93.184.216.34']);
    expect(rec.received[0]).toMatchObject({ raw: '{"a":1}', headers: { host: 'hooks.shop.example:8443', 'content-type': 'application/json' } });
  });

  it('a name that rebinds to loopback after a first public answer is refused on the attempt that sees it', async () => {
    const rec = await startReceiver();
    receivers.push(rec);
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    const resolver: Resolver = async () => answers.shift()!;
    const asked: string[] = [];
    const first = await deliver('http://rebind.shop.example/cb', '{}', { allowPrivate: false, connector: toReceiver(rec, asked), resolver });
    const second = await deliver('http://rebind.shop.example/cb', '{}', { allowPrivate: false, connector: toReceiver(rec, asked), resolver });
    expect(first.statusCode).toBe(200);
    expect(second.error).toMatch(/^refused: rebind\.shop\.example resolves to 127\.0\.0\.1, a loopback address/);
    expect(asked).toEqual(['93.184.216.34']);
    expect(rec.received).toHaveLength(1);
  });

  it('a 302 to loopback is not followed: it is an answer that does not acknowledge', async () => {
    const inner = await startReceiver();
    const rec = await startReceiver(() => ({ status: 302, headers: { Location: inner.url } }));
    receivers.push(inner, rec);
    const asked: string[] = [];
    const r = await deliver('http://hooks.shop.example/cb', '{}', { allowPrivate: false, connector: toReceiver(rec, asked), resolver: fixed({ 'hooks.shop.example': ['93.184.216.34'] }) });
    expect(r).toMatchObject({ statusCode: 302, error: null });
    await new Promise((done) => setTimeout(done, 200));
    expect(inner.received).toEqual([]);
    expect(asked).toEqual(['93.184.216.34']);
  });

  it('over https the connection is opened to the checked address with the URL name for SNI and the certificate', async () => {
    const targets: unknown[] = [];
    const r = await deliver('https://hooks.shop.example/cb', '{}', {
      allowPrivate: false,
      resolver: fixed({ 'hooks.shop.example': ['93.184.216.34'] }),
      connector: (t) => {
        targets.push(t);
        throw new Error('no socket in this test');
      },
    });
    expect(targets).toEqual([{ address: '93.184.216.34', port: 443, tls: true, servername: 'hooks.shop.example' }]);
    expect(r).toMatchObject({ statusCode: null, error: 'no socket in this test' });
  });

  it('a name that never resolves is cut at the timeout, and nothing is connected', async () => {
    const started = Date.now();
    const r = await deliver('https://slow-dns.shop.example/cb', '{}', { allowPrivate: false, timeoutMs: 300, connector: forbidden, resolver: () => new Promise(() => {}) });
    expect(r).toMatchObject({ statusCode: null, error: 'no answer within 0.3 s' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('with private callbacks allowed (development) loopback receives', async () => {
    const rec = await startReceiver();
    receivers.push(rec);
    const r = await deliver(rec.url, '{"b":2}', { allowPrivate: true });
    expect(r).toMatchObject({ statusCode: 200, error: null });
    expect(rec.received.map((x) => x.raw)).toEqual(['{"b":2}']);
  });
});

describe('credentials in a notifyUrl', () => {
  it('are sent as Basic auth, not in the request line', async () => {
    const rec = await startReceiver();
    receivers.push(rec);
    const url = rec.url.replace('http://', 'http://shop%40one:p%3Ass@');
    const r = await deliver(url, '{}', { allowPrivate: true });
    expect(r.statusCode).toBe(200);
    expect(rec.received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('shop@one:p:ss').toString('base64')}`);
  });
});
