import { REFUSED, UNRESOLVED } from './attempt-errors.js';
import { systemResolver, type Resolver } from './resolve.js';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { forbiddenAddress, isLocalName, kindOfAddress, PRIVATE_HINT } from './guard.js';
import { urlCredentials } from '../core/url-credentials.js';
import { unusablePort } from '../core/blocked-ports.js';

/** Decisions §9: an attempt that has no answer after 10 s is cut. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type { Resolver };

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

// Keep-alive connections, pooled per (address, port, servername): each was opened to an address
// the guard allowed, so reusing one sends nothing anywhere else.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });

/**
 * A refusal of the guard itself (an inward address), not a failure of the receiver: `reason`
 * says which address and why, without the hint the message adds for serve.
 */
export class InwardRefusal extends Error {
  constructor(readonly reason: string) {
    super(`${REFUSED}${reason}; ${PRIVATE_HINT}`);
  }
}

/**
 * The guard for a host written as an address: the address itself, or a refusal. Synchronous, so
 * an attempt to an address costs no lookup, no promise and no timer; undefined for a name.
 */
function literalAddress(host: string, opts: Pick<DeliveryOptions, 'allowPrivate'>): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!isIP(bare)) return undefined;
  const why = opts.allowPrivate ? undefined : forbiddenAddress(bare);
  if (why) throw new InwardRefusal(`${host} is ${kindOfAddress(why)}`);
  return bare;
}

/**
 * Where an attempt may connect: the host itself when it is an address, else what the name
 * resolves to. Every address must pass the guard (decisions §9), not only the first: a name
 * that resolves inward at all is refused, so a rebinding answer cannot win a race.
 */
export async function allowedAddress(host: string, opts: Pick<DeliveryOptions, 'allowPrivate' | 'resolver'>): Promise<string> {
  const literal = literalAddress(host, opts);
  if (literal !== undefined) return literal;
  const bare = host;
  if (!opts.allowPrivate && isLocalName(bare)) throw new InwardRefusal(`${host} is this machine`);
  let addresses: string[];
  try {
    addresses = await (opts.resolver ?? systemResolver)(bare);
  } catch (e) {
    throw new Error(`${UNRESOLVED}${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (addresses.length === 0) throw new Error(`${UNRESOLVED}${host}: no address`);
  if (!opts.allowPrivate) {
    for (const a of addresses) {
      const why = forbiddenAddress(a);
      if (why) throw new InwardRefusal(`${host} resolves to ${a}, ${kindOfAddress(why)}`);
    }
  }
  return addresses[0]!;
}

/** What an attempt needs of its URL, taken apart once per URL (every event of a merchant shares one). */
interface Target {
  tls: boolean;
  hostname: string;
  host: string;
  port: number;
  path: string;
  servername: string | undefined;
  /** Credentials in a notifyUrl are the merchant's way to authenticate us: sent as Basic auth. */
  authorization: string | undefined;
}
const targets = new Map<string, Target | string>();

/** The URL taken apart, or why it cannot be sent to. */
function targetOf(url: string): Target | string {
  let t = targets.get(url);
  if (t !== undefined) return t;
  t = parseTarget(url);
  // A bound on what the cache holds: the URLs of one busy period, then it starts again.
  if (targets.size >= 1024) targets.clear();
  targets.set(url, t);
  return t;
}

function parseTarget(url: string): Target | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  const tls = u.protocol === 'https:';
  if (!tls && u.protocol !== 'http:') return `${u.protocol} is not http or https`;
  // Stored before create order refused it: never sent (a failed attempt on the schedule).
  const port = unusablePort(u);
  if (port) return `it uses ${port}`;
  const bare = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  let authorization: string | undefined;
  try {
    const c = urlCredentials(u);
    authorization = c && `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}`;
  } catch {
    // Stored before create order refused it: a failed attempt, on the schedule, not a throw that
    // left the row due for ever.
    return 'its user name or password is not valid percent-encoding';
  }
  return {
    tls,
    hostname: u.hostname,
    host: u.host,
    port: Number(u.port || (tls ? 443 : 80)),
    path: `${u.pathname}${u.search}`,
    servername: tls && !isIP(bare) ? bare : undefined,
    authorization,
  };
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
  const t = targetOf(url);
  if (typeof t === 'string') return { statusCode: null, latencyMs: 0, error: t };
  let address: string | undefined;
  try {
    address = literalAddress(t.hostname, opts);
  } catch (e) {
    return { statusCode: null, latencyMs: took(), error: (e as Error).message };
  }
  if (address === undefined) {
    let resolving: NodeJS.Timeout | undefined;
    try {
      // Resolving the name counts against the same 10 s as the rest of the attempt.
      address = await Promise.race([
        allowedAddress(t.hostname, opts),
        new Promise<never>((_, reject) => {
          resolving = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
    } catch (e) {
      return { statusCode: null, latencyMs: took(), error: (e as Error).message };
    } finally {
      clearTimeout(resolving);
    }
  }
  return post(t, address, Buffer.from(body, 'utf8'), opts.connector, timeoutMs, started, took);
}

function post(t: Target, address: string, bytes: Buffer, connector: Connector | undefined, timeoutMs: number, started: number, took: () => number): Promise<DeliveryResult> {
  const { port, tls, servername } = t;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let res: IncomingMessage | undefined;
    const finish = (r: Omit<DeliveryResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...r, latencyMs: took() });
    };
    const headers: Record<string, string | number> = {
      Host: t.host,
      'Content-Type': 'application/json',
      'Content-Length': bytes.length,
      'User-Agent': 'cryptopay-callbacks/1',
    };
    if (t.authorization) headers.Authorization = t.authorization;
    const req: ClientRequest = (tls ? httpsRequest : httpRequest)({
      method: 'POST',
      host: address,
      port,
      path: t.path,
      servername,
      headers,
      // With no agent, Node opens the connection with createConnection and nothing else
      // (`agent: false` would make a fresh agent that dials `host` itself).
      ...(connector
        ? { createConnection: () => connector({ address, port, tls, servername }) }
        : { agent: tls ? httpsAgent : httpAgent }),
    } as RequestOptions);
    // One timer per attempt: it cuts an attempt with no answer, and then the reading of an
    // answer's body that is still coming at the end of the same 10 s.
    const timer = setTimeout(() => {
      if (res) {
        res.destroy();
        return;
      }
      finish({ statusCode: null, error: `no answer within ${timeoutMs / 1000} s` });
      req.destroy();
    }, Math.max(0, timeoutMs - (performance.now() - started)));
    req.on('response', (answer: IncomingMessage) => {
      res = answer;
      // The answer's status is what counts; its body is read and dropped so the connection can be reused.
      finish({ statusCode: answer.statusCode ?? null, error: null });
      let size = 0;
      answer.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 64 * 1024) answer.destroy();
      });
      answer.on('error', () => {});
      answer.on('close', () => clearTimeout(timer));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (!res) clearTimeout(timer);
      finish({ statusCode: null, error: networkReason(e) });
    });
    req.end(bytes);
  });
}

function networkReason(e: NodeJS.ErrnoException): string {
  const text = `${e.code ? `${e.code}: ` : ''}${e.message}`;
  // Printable and short: it is shown in `callbacks show`.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 300);
}
