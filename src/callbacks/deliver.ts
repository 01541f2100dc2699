import { lookup } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { forbiddenAddress, isLocalName, PRIVATE_HINT } from './guard.js';

/** Decisions §9: an attempt that has no answer after 10 s is cut. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The addresses a name resolves to. Injected in tests, so no test ever asks a real DNS for them. */
export type Resolver = (host: string) => Promise<string[]>;

/**
 * Opens the connection of an attempt to an address the guard allowed. Injected in tests, which
 * may only ever connect to 127.0.0.1 or ::1: the rows of the guard with other addresses are
 * checked against a connector that records what it was asked and opens nothing.
 */
export type Connector = (target: { address: string; port: number; tls: boolean; servername?: string }) => Duplex;

export interface DeliveryOptions {
  /** Loopback, private and reserved addresses allowed (development). */
  allowPrivate: boolean;
  timeoutMs?: number;
  resolver?: Resolver;
  connector?: Connector;
}

export interface DeliveryResult {
  statusCode: number | null;
  latencyMs: number;
  /** Why there is no 2xx answer: the guard, the network, the timeout. Never holds the body or a secret. */
  error: string | null;
}

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

// Keep-alive connections, pooled per (address, port, servername): each was opened to an address
// the guard allowed, so reusing one sends nothing anywhere else.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });

/**
 * Where an attempt may connect: the host itself when it is an address, else what the name
 * resolves to. Every address must pass the guard (decisions §9), not only the first: a name
 * that resolves inward at all is refused, so a rebinding answer cannot win a race.
 */
export async function allowedAddress(host: string, opts: Pick<DeliveryOptions, 'allowPrivate' | 'resolver'>): Promise<string> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) {
    const why = opts.allowPrivate ? undefined : forbiddenAddress(bare);
    if (why) throw new Error(`refused: ${host} is a ${why} address; ${PRIVATE_HINT}`);
    return bare;
  }
  if (!opts.allowPrivate && isLocalName(bare)) throw new Error(`refused: ${host} is this machine; ${PRIVATE_HINT}`);
  let addresses: string[];
  try {
    addresses = await (opts.resolver ?? systemResolver)(bare);
  } catch (e) {
    throw new Error(`cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (addresses.length === 0) throw new Error(`cannot resolve ${host}: no address`);
  if (!opts.allowPrivate) {
    for (const a of addresses) {
      const why = forbiddenAddress(a);
      if (why) throw new Error(`refused: ${host} resolves to ${a}, a ${why} address; ${PRIVATE_HINT}`);
    }
  }
  return addresses[0]!;
}

/**
 * One POST of a callback body: application/json, redirects not followed (a 3xx is an answer
 * that does not acknowledge), cut after the timeout. Connects to the address the guard checked,
 * with the URL's host in the Host header and, over TLS, as the name the certificate must match.
 */
export async function deliver(url: string, body: string, opts: DeliveryOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { statusCode: null, latencyMs: 0, error: 'not a valid URL' };
  }
  const tls = u.protocol === 'https:';
  if (!tls && u.protocol !== 'http:') return { statusCode: null, latencyMs: 0, error: `${u.protocol} is not http or https` };
  const port = Number(u.port || (tls ? 443 : 80));
  let address: string;
  let resolving: NodeJS.Timeout | undefined;
  try {
    // Resolving the name counts against the same 10 s as the rest of the attempt.
    address = await Promise.race([
      allowedAddress(u.hostname, opts),
      new Promise<never>((_, reject) => {
        resolving = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    return { statusCode: null, latencyMs: took(), error: (e as Error).message };
  } finally {
    clearTimeout(resolving);
  }
  const bare = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const servername = tls && !isIP(bare) ? bare : undefined;
  const bytes = Buffer.from(body, 'utf8');
  // Credentials in a notifyUrl are the merchant's way to authenticate us: sent as Basic auth.
  const auth = u.username || u.password
    ? { Authorization: `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}` }
    : {};
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<DeliveryResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: took() });
    };
    const connector = opts.connector;
    const req: ClientRequest = (tls ? httpsRequest : httpRequest)({
      method: 'POST',
      host: address,
      port,
      path: `${u.pathname}${u.search}`,
      servername,
      headers: {
        Host: u.host,
        'Content-Type': 'application/json',
        'Content-Length': bytes.length,
        'User-Agent': 'cryptopay-callbacks/1',
        ...auth,
      },
      // With no agent, Node opens the connection with createConnection and nothing else
      // (`agent: false` would make a fresh agent that dials `host` itself).
      ...(connector
        ? { createConnection: () => connector({ address, port, tls, servername }) }
        : { agent: tls ? httpsAgent : httpAgent }),
    } as RequestOptions);
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${timeoutMs / 1000} s` });
      req.destroy();
    }, Math.max(0, timeoutMs - (performance.now() - started)));
    req.on('response', (res: IncomingMessage) => {
      // The answer's status is what counts; its body is read and dropped so the connection can be reused.
      finish({ statusCode: res.statusCode ?? null, error: null });
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 64 * 1024) res.destroy();
      });
      res.on('error', () => {});
      const cut = setTimeout(() => res.destroy(), timeoutMs);
      res.on('close', () => clearTimeout(cut));
    });
    req.on('error', (e: NodeJS.ErrnoException) => finish({ statusCode: null, error: networkReason(e) }));
    req.end(bytes);
  });
}

function networkReason(e: NodeJS.ErrnoException): string {
  const text = `${e.code ? `${e.code}: ` : ''}${e.message}`;
  // Printable and short: it is shown in `callbacks show`.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 300);
}
