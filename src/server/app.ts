import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { AppError, httpStatusOf, isAppError, notFound } from '../core/errors.js';
import {
  authFields,
  createOrderSchema,
  parseInput,
  parsedWith,
  refundSchema,
  requiredMchId,
  withdrawApplySchema,
  withdrawConfirmSchema,
  withdrawRejectSchema,
  withdrawVerifySchema,
  withOp,
} from '../core/schemas.js';
import { TIMESTAMP_WINDOW_MS } from '../core/nonce.js';
import type { Caller, OperatorExtensions, PaymentService } from '../core/service.js';
import type { OrderStatus } from '../core/types.js';
import { BAD_SIGNATURE_WORDS, verify } from '../signing/index.js';
import { acceptsGzip } from './accept-encoding.js';
import { readIncoming, readJsonObject } from './body.js';
import { openApiDocument } from './openapi.js';
import type { PayPageSource } from './pay-page-data.js';
import { payUrlOf } from './pay-url.js';
import { RateLimiter } from './rate-limit.js';
import { operatorReads } from './read-routes.js';
import { turnWrites } from './turn-writes.js';

/** What the server needs of the ledger beyond the PaymentService itself. */
export interface ServerBackend extends PaymentService, PayPageSource {
  as(caller: Caller): PaymentService & OperatorExtensions & {
    /** Uses up the caller's nonce without an operation (a request refused by the rate limit); a replay is refused. */
    spendNonce(): Promise<void>;
  };
  /** The merchant's secret and create-order limit per minute (0 = none); undefined when unknown. */
  merchantAuth(mchId: string): { secret: string; rateLimit: number } | undefined;
  resolveMerchantId(mchId?: string): string;
  ping(): void;
  /**
   * Undefined when every change committed so far is on disk, else settles once it is. GET
   * answers wait for it: a change is committed before its fsync (serve's group commit) and must
   * not be shown before it is durable. Signed requests wait for their own write's fsync.
   */
  durable?(): Promise<void> | undefined;
  /**
   * The status GET's read without a promise (a local ledger answers synchronously): the route
   * then answers in the request's own turn, not three microtask hops later. Same refusals as
   * getOrderStatus.
   */
  orderStatusNow?(id: string): OrderStatus;
  /** A GET is about to read: the reads of this turn may share the ledger's file locks. */
  holdReads?(): void;
}

export interface AppDeps {
  backend: ServerBackend;
  now?: () => number;
  /** One line per request; never a secret or a signature. */
  accessLog?: (line: string) => void;
  /** Unexpected failures, for the operator; the client sees only "internal error". */
  errorLog?: (line: string) => void;
  /** The base of create order's `payUrl` (`serve --public-url`, else the address serve listens on). */
  publicUrl?: string;
}

/** A nonce is kept until its timestamp can no longer pass the window, plus a margin. */
export const NONCE_KEEP_MS = TIMESTAMP_WINDOW_MS + 60_000;
const MAX_ID = 64;
/**
 * A refused signature (or an unknown merchant: the same answer) says how a signature is made: the
 * first refusal every integrator meets said "signature does not match" and nothing more (a
 * new-user trial), and that the mchId is part of it: a mistyped one was answered as a bad hash,
 * and its integrator debugged a correct one (a trial). It names no field of the body and nothing
 * of the secret, and reads the same whether or not the merchant exists.
 */
export const BAD_SIGNATURE = `${BAD_SIGNATURE_WORDS}: sign is the SHA-256 (hex) of every field but sign, empty and null ones left out, sorted by name as key=value joined by &, followed by the secret of the merchant mchId names; check mchId too: an unknown mchId is answered the same (cryptopay sign --body '<body>' --explain shows each step)`;
/** Hashed against when the merchant is unknown, so that refusal costs what a bad signature costs. */
const UNKNOWN_MERCHANT_SECRET = randomBytes(24).toString('base64url');
/** Every answer: JSON, and never kept by a cache (order status and balances change). */
const BASE_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } as const;
/** BASE_HEADERS as Node's flat header list, for the common answer that adds none of its own. */
const BASE_HEADER_LIST = Object.entries(BASE_HEADERS).flat();
/** The flat header list of a frozen headers object (a payment page's), made once. */
const headerLists = new WeakMap<Record<string, string>, string[]>();

function headerListOf(headers: Record<string, string>): string[] {
  let list = headerLists.get(headers);
  if (!list) {
    list = Object.entries({ ...BASE_HEADERS, ...headers }).flat();
    headerLists.set(headers, list);
  }
  return list;
}

/**
 * One request as the routes see it, whether it came over a socket (Node's IncomingMessage) or in
 * memory (a web Request, for tests and the contract suite): both paths run the same routes.
 */
interface Req {
  method: string;
  /** The path as sent, without the query; percent-escapes are left as they are. */
  path: string;
  header(name: string): string | undefined;
  /** The body, or 'too_large' as soon as it passes `limit` bytes (the rest is left unread). */
  body(limit: number): Promise<Buffer | 'too_large'>;
  /** The verified merchant, for the access log. */
  merchant?: string;
}

/** What a route answers: a status, a JSON text (or a page's bytes) and extra headers. */
export interface Answer {
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
}

type Route = (req: Req, param: string) => Promise<Answer> | Answer;

/** The routes of one path: GET routes also answer HEAD; a POST route answers 405 to other methods. */
interface PathRoutes {
  get?: Route;
  post?: Route;
}

export function createApp(deps: AppDeps) {
  const now = deps.now ?? Date.now;
  const limiter = new RateLimiter();
  const writes = turnWrites();
  const { backend } = deps;

  const envelope = (status: number, code: 0 | 1, msg: string, data: unknown, headers?: Record<string, string>): Answer => ({
    status,
    body: JSON.stringify({ code, msg, data, systemTime: now() }),
    ...(headers ? { headers } : {}),
  });
  const ok = (data: unknown) => envelope(200, 1, 'success', data);

  const fixed = new Map<string, PathRoutes>();
  fixed.set('/healthz', {
    get: () => {
      backend.ping();
      return ok({ status: 'ok' });
    },
  });
  // Bare, not in the envelope: tools read it as an OpenAPI document.
  fixed.set('/api/v1/openapi.json', { get: () => ({ status: 200, body: JSON.stringify(openApiDocument()) }) });

  // The two paths with an id: /api/v1/address/{id} and /api/v1/order/{id}/status.
  const addressRoute: Route = async (_req, id) => {
    if (id.length > MAX_ID) throw notFound('Not found');
    return ok(await backend.getAddresses(id));
  };
  const statusNow = backend.orderStatusNow?.bind(backend);
  const statusRoute: Route = (_req, id) => {
    if (id.length > MAX_ID) throw notFound('Order not found');
    if (statusNow) return ok(statusNow(id));
    return backend.getOrderStatus(id).then(ok);
  };

  /**
   * A signed operation (decisions §1): JSON object, schema with the signing fields, timestamp
   * window, merchant, signature, then the operation with its nonce used up in the same
   * transaction. A refused request changes nothing.
   */
  const signed = <S extends z.ZodObject>(
    path: string,
    schema: S,
    run: (service: PaymentService & OperatorExtensions, input: Record<string, unknown>) => Promise<unknown>,
    /**
     * rateLimited: the merchant's limit per minute applies, counted in this bucket: `orders` (create
     * order, spec §4.2), `chain` (verify, confirm and reject, which read the chain's node: one merchant must
     * not spend the node's quota that the watcher needs; an outside review).
     */
    opts: { mchIdRequired?: boolean; rateLimited?: 'orders' | 'chain'; parsedOnce?: boolean } = {},
  ) => {
    // Where mchId is required, it is named with the other missing fields (an empty body lists
    // every one), in its place first.
    const full = opts.mchIdRequired ? schema.extend({ mchId: requiredMchId, ...authFields }) : schema.extend(authFields);
    const post: Route = async (req) => {
      const body = await readJsonObject(req);
      const parsed = parseInput(full, body) as { mchId?: string; timestamp: number; nonce: string; sign: string };
      const t = now();
      if (Math.abs(t - parsed.timestamp) > TIMESTAMP_WINDOW_MS) {
        // Seconds since 1970 are the usual mistake (`date +%s`): until 2286 they are below 10^10.
        const seconds = parsed.timestamp > 0 && parsed.timestamp < 1e10 ? `: ${parsed.timestamp} looks like seconds; timestamps are milliseconds since 1970` : '';
        throw new AppError('unauthorized', `timestamp is not within 5 minutes of server time (see systemTime)${seconds}`);
      }
      const mchId = parsed.mchId ?? backend.resolveMerchantId();
      // A read of its own: the reads of this turn share the ledger's file locks (as GETs do).
      backend.holdReads?.();
      const auth = backend.merchantAuth(mchId);
      // An unknown merchant is refused exactly like a bad signature, after the same hashing, so
      // merchant ids cannot be probed (decisions §7).
      const verified = verify(body, auth?.secret ?? UNKNOWN_MERCHANT_SECRET);
      if (!auth || !verified) throw new AppError('unauthorized', BAD_SIGNATURE);
      req.merchant = mchId;
      const perMinute = opts.rateLimited ? auth.rateLimit : 0;
      const bucket = opts.rateLimited === 'chain' ? `${mchId} chain` : mchId;
      const nonce = { merchantId: mchId, value: parsed.nonce, expiresAt: Math.max(parsed.timestamp, t) + NONCE_KEEP_MS };
      if (perMinute > 0) {
        const wait = limiter.take(bucket, perMinute, t);
        if (wait > 0) {
          // The signature verified, so the nonce is used up with the refusal (spec decisions §1):
          // the body cannot create the order later, once the limit has room. A replay of it is
          // refused as one (401); the limiter took nothing for either.
          await backend.as({ actor: `api:${mchId}`, nonce }).spendNonce();
          throw new AppError('rate_limited', `too many requests: at most ${perMinute} per minute; retry in ${wait} s`, { retryAfter: wait });
        }
      }
      // parsedOnce: the operation parses its input with `schema`, the very field schemas `full`
      // just ran; it takes this output as it is (parsedWith) instead of parsing it again.
      let args: Record<string, unknown>;
      if (opts.parsedOnce && parsed.mchId === mchId) {
        const { timestamp: _t, nonce: _n, sign: _s, ...fields } = parsed;
        args = parsedWith(schema, fields);
      } else {
        const { timestamp: _t, nonce: _n, sign: _s, ...input } = body;
        args = { ...input, mchId };
      }
      const service = backend.as({ actor: `api:${mchId}`, nonce });
      try {
        return ok(await run(service, args));
      } catch (e) {
        // A replayed request (nonce already used) is refused as unauthenticated: it must not use up the merchant's limit.
        if (perMinute > 0 && isAppError(e) && e.kind === 'unauthorized') limiter.giveBack(bucket, t);
        throw e;
      }
    };
    fixed.set(path, { post });
  };

  let publicUrl = deps.publicUrl ?? 'http://localhost';
  signed('/api/v1/order', createOrderSchema, async (s, i) => {
    const order = await s.createOrder(i as never);
    return { ...order, payUrl: payUrlOf(publicUrl, order.id) };
  }, { mchIdRequired: true, rateLimited: 'orders', parsedOnce: true });
  signed('/api/v1/refund', refundSchema, (s, i) => s.refund(i as never));
  signed('/api/v1/withdraw/apply', withdrawApplySchema, (s, i) => s.applyWithdrawal(i as never));
  signed('/api/v1/withdraw/confirm', withdrawConfirmSchema, (s, i) => s.confirmWithdrawal(i as never), { rateLimited: 'chain' });
  // Reject looks on chain for a payout of the withdrawal first (src/chains/payout-search.ts).
  signed('/api/v1/withdraw/reject', withdrawRejectSchema, (s, i) => s.rejectWithdrawal(i as never), { rateLimited: 'chain' });
  // Extension (decisions §12): what confirm would find on chain, for remote mode's question and withdraw verify.
  signed('/api/v1/withdraw/verify', withOp('withdraw/verify', withdrawVerifySchema), (s, { op: _op, ...i }) => s.verifyWithdrawal(i as never), { rateLimited: 'chain' });

  /**
   * Extensions for remote mode (decisions §12, issue #15 item 8): reads, signed like every
   * operation, for the merchant whose secret verified and no other. `mchId` is that merchant
   * (signed() puts it there), never a value the body chose, and every read below filters by it:
   * another merchant's id answers exactly like an id that does not exist.
   */
  const read = <S extends z.ZodObject>(path: string, schema: S, run: (s: PaymentService & OperatorExtensions, q: z.output<S>, mchId: string) => Promise<unknown>) =>
    signed(path, withOp(path.slice('/api/v1/'.length), schema), (s, { op: _op, ...i }) => {
      const mchId = i.mchId;
      if (typeof mchId !== 'string' || !mchId) throw new AppError('internal', 'a signed read without its merchant');
      return run(s, parseInput(schema, i), mchId);
    });
  operatorReads(read);

  // The payment page and the state it polls (decisions §11), loaded on first use.
  type PayRoutes = ReturnType<typeof import('./pay-page-route.js').payPageRoutes>;
  const payRoutes = (): Promise<PayRoutes> =>
    import('./pay-page-route.js').then((m) => {
      payLoaded = m.payPageRoutes(backend);
      return payLoaded;
    });
  let pay: Promise<PayRoutes> | undefined;
  // Once loaded, a page is answered in the request's own turn where the ledger allows it.
  let payLoaded: PayRoutes | undefined;
  const payPageRoute: Route = (req, id) => {
    const gzip = acceptsGzip(req.header('accept-encoding'));
    return payLoaded ? payLoaded.page(id, gzip) : (pay ??= payRoutes()).then((p) => p.page(id, gzip));
  };
  const payStateRoute: Route = async (_req, id) => ok(await (await (pay ??= payRoutes())).state(id));

  /** The routes of a path and the id in it; undefined answers 404 Not found. */
  const routesOf = (path: string): { routes: PathRoutes; param: string } | undefined => {
    const routes = fixed.get(path);
    if (routes) return { routes, param: '' };
    const id = idIn(path, '/api/v1/address/', '');
    if (id !== undefined) return { routes: { get: addressRoute }, param: id };
    const orderId = idIn(path, '/api/v1/order/', '/status');
    if (orderId !== undefined) return { routes: { get: statusRoute }, param: orderId };
    const stateId = idIn(path, '/pay/', '/state');
    if (stateId !== undefined) return { routes: { get: payStateRoute }, param: stateId };
    const pageId = idIn(path, '/pay/', '');
    if (pageId !== undefined) return { routes: { get: payPageRoute }, param: pageId };
    return undefined;
  };

  /** The route for a method and path: a known path with another method says which ones it takes. */
  const route = (method: string, path: string): { run: Route; param: string } | undefined => {
    const found = routesOf(path);
    if (!found) return undefined;
    const { routes, param } = found;
    if (routes.post && method === 'POST') return { run: routes.post, param };
    if (routes.get && (method === 'GET' || method === 'HEAD')) return { run: routes.get, param };
    const allow = routes.post ? 'POST' : 'GET, HEAD';
    const use = routes.post ? 'POST' : 'GET';
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    return { run: () => envelope(405, 0, `${method.slice(0, 32)} is not allowed on ${shown}; use ${use}`, null, { Allow: allow }), param };
  };

  /** A route's failure as the answer the client gets (decisions §7: always the envelope). */
  const refusalOf = (req: Req, err: unknown): Answer => {
    if (isAppError(err)) {
      // A message with what only the operator may read (a node's address) goes to serve's log;
      // the client reads the words meant for it (a code review of 2026-11-24).
      if (err.shown !== undefined) deps.errorLog?.(`${req.method} ${req.path}: ${err.message}`);
      const answer = envelope(httpStatusOf[err.kind], 0, err.shown ?? err.message, null, err.retryAfter ? { 'Retry-After': String(err.retryAfter) } : undefined);
      if (err.kind === 'too_large') {
        // The rest of the body is left unread: the connection cannot be reused, so say so.
        answer.headers = { ...answer.headers, Connection: 'close' };
      }
      return answer;
    }
    deps.errorLog?.(`internal error on ${req.method} ${req.path}: ${(err as Error)?.stack ?? String(err)}`);
    return envelope(500, 0, 'internal error', null);
  };

  /** The access-log line, once the answer is known. */
  const done = (req: Req, start: number, answer: Answer): Answer => {
    if (deps.accessLog) {
      const ms = (performance.now() - start).toFixed(1);
      deps.accessLog(`${isoTime(now())} ${req.method} ${req.path} ${answer.status} ${ms}ms ${req.merchant ?? '-'}`);
    }
    return answer;
  };

  /** A GET's answer waits until what it shows is on disk (group commit's fsync in flight). */
  const whenDurable = (req: Req, start: number, answer: Answer): Answer | Promise<Answer> => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      const durable = backend.durable?.();
      if (durable) {
        return durable.then(
          () => done(req, start, answer),
          (err: unknown) => done(req, start, refusalOf(req, err)),
        );
      }
    }
    return done(req, start, answer);
  };

  /**
   * Every request, either way it arrives: route, run, refusals as envelopes, one access-log line.
   * A route that answers synchronously (and nothing to wait for on disk) is answered without a
   * promise, in the request's own turn of the event loop.
   */
  const handle = (req: Req): Answer | Promise<Answer> => {
    const start = performance.now();
    let result: Answer | Promise<Answer>;
    if (req.method === 'GET' || req.method === 'HEAD') backend.holdReads?.();
    try {
      const r = route(req.method, req.path);
      result = r ? r.run(req, r.param) : envelope(404, 0, 'Not found', null);
    } catch (err) {
      return done(req, start, refusalOf(req, err));
    }
    if (result instanceof Promise) {
      return result.then(
        (answer) => whenDurable(req, start, answer),
        (err: unknown) => done(req, start, refusalOf(req, err)),
      );
    }
    return whenDurable(req, start, result);
  };

  return {
    /** Where payment pages are reached from outside, once the listening address is known. */
    setPublicUrl(url: string): void {
      publicUrl = url;
    },

    /** Node's request listener: the server of `cryptopay serve` (src/server/listen.ts). */
    listener(incoming: IncomingMessage, res: ServerResponse): void {
      const url = incoming.url ?? '/';
      const q = url.indexOf('?');
      const req: Req = {
        method: incoming.method ?? 'GET',
        path: pathOf(q < 0 ? url : url.slice(0, q)),
        header: (name) => incoming.headers[name] as string | undefined,
        body: (limit) => readIncoming(incoming, res, limit),
      };
      // handle() answers every refusal itself; this is a failure of the log writer or the socket.
      const failed = (e: unknown) => {
        deps.errorLog?.(`could not answer ${req.method} ${req.path}: ${(e as Error)?.stack ?? String(e)}`);
        res.destroy();
      };
      const write = (a: Answer) => {
        try {
          // The socket layer (listen.ts) may have answered already: a malformed or too slow body.
          if (res.headersSent || res.destroyed) return;
          const length = Buffer.byteLength(a.body);
          if (!a.headers) res.writeHead(a.status, [...BASE_HEADER_LIST, 'Content-Length', length]);
          else if (Object.isFrozen(a.headers)) res.writeHead(a.status, [...headerListOf(a.headers), 'Content-Length', length]);
          else res.writeHead(a.status, { ...BASE_HEADERS, 'Content-Length': length, ...a.headers });
          res.end(a.body);
        } catch (e) {
          failed(e);
        }
      };
      // Written with the other answers of this turn, at its end (src/server/turn-writes.ts).
      const answer = (a: Answer) => writes.later(() => write(a));
      let a: Answer | Promise<Answer>;
      try {
        a = handle(req);
        if (!(a instanceof Promise)) {
          answer(a);
          return;
        }
      } catch (e) {
        failed(e);
        return;
      }
      a.then(answer, failed);
    },

    /** In memory, web Request in and Response out: for tests and for wiring a client to the app without a socket. */
    async request(input: string | URL | Request, init?: RequestInit): Promise<Response> {
      const request = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
      const req: Req = {
        method: request.method,
        path: new URL(request.url).pathname,
        header: (name) => request.headers.get(name) ?? undefined,
        body: async (limit) => {
          const bytes = Buffer.from(await request.arrayBuffer());
          return bytes.length > limit ? 'too_large' : bytes;
        },
      };
      const a = await handle(req);
      return new Response(request.method === 'HEAD' ? null : a.body, { status: a.status, headers: { ...BASE_HEADERS, ...a.headers } });
    },

    /**
     * An error envelope made outside the routes, by the socket layer (a malformed request, a
     * timeout, a connection over the cap), with every header an answer carries.
     */
    refusal(status: number, msg: string, headers: Record<string, string> = {}): Answer & { headers: Record<string, string> } {
      return { status, body: envelope(status, 0, msg, null).body, headers: { ...BASE_HEADERS, ...headers } };
    },

    /** The access-log line of an answer the socket layer made (`-` where no request could be read). */
    logRefusal(status: number, method = '-', path = '-'): void {
      deps.accessLog?.(`${isoTime(now())} ${method} ${path} ${status} 0.0ms -`);
    },
  };
}

let isoSecond = NaN;
let isoPrefix = '';
/**
 * `new Date(ms).toISOString()` for the access log, one line per request: the text up to the
 * second is made once a second, the milliseconds appended.
 */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond || !Number.isFinite(second)) {
    const iso = new Date(ms).toISOString();
    // Years past 9999 (and invalid times) have another shape: not cached.
    if (iso.length !== 24) return iso;
    isoSecond = second;
    isoPrefix = iso.slice(0, 20);
  }
  const frac = ms - second * 1000;
  return `${isoPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${Math.floor(frac)}Z`;
}

/** The path of a request line: origin form as is; absolute form (`GET http://host/path`) reduced to its path. */
function pathOf(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}

/** The decoded id of `prefix{id}suffix`, or undefined when the path is not of that shape. */
function idIn(path: string, prefix: string, suffix: string): string | undefined {
  if (!path.startsWith(prefix) || !path.endsWith(suffix)) return undefined;
  const raw = path.slice(prefix.length, path.length - suffix.length);
  if (raw === '' || raw.includes('/')) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export type App = ReturnType<typeof createApp>;
