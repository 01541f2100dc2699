import { Hono, type Context as HonoContext } from 'hono';
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { AppError, httpStatusOf, invalid, isAppError, notFound } from '../core/errors.js';
import {
  authFields,
  createOrderSchema,
  parseInput,
  refundSchema,
  withdrawApplySchema,
  withdrawConfirmSchema,
  withdrawRejectSchema,
} from '../core/schemas.js';
import type { Caller, PaymentService } from '../core/service.js';
import { verify } from '../signing/index.js';
import { openApiDocument } from './openapi.js';
import { RateLimiter } from './rate-limit.js';

/** What the server needs of the ledger beyond the PaymentService itself. */
export interface ServerBackend extends PaymentService {
  as(caller: Caller): PaymentService;
  merchantSecret(mchId: string): string | undefined;
  resolveMerchantId(mchId?: string): string;
  merchantRateLimit(mchId: string): number;
  ping(): void;
}

export interface AppDeps {
  backend: ServerBackend;
  now?: () => number;
  /** One line per request; never a secret or a signature. */
  accessLog?: (line: string) => void;
  /** Unexpected failures, for the operator; the client sees only "internal error". */
  errorLog?: (line: string) => void;
}

export const MAX_BODY_BYTES = 64 * 1024;
export const TIMESTAMP_WINDOW_MS = 5 * 60_000;
/** A nonce is kept until its timestamp can no longer pass the window, plus a margin. */
export const NONCE_KEEP_MS = TIMESTAMP_WINDOW_MS + 60_000;
const MAX_ID = 64;

/** On a socket, @hono/node-server hands over Node's request as `incoming`; in memory there is none. */
type Env = { Bindings: { incoming?: IncomingMessage }; Variables: { merchant?: string } };

export function createApp(deps: AppDeps) {
  const now = deps.now ?? Date.now;
  const limiter = new RateLimiter();
  const { backend } = deps;
  const app = new Hono<Env>();

  const envelope = (c: HonoContext<Env>, status: number, code: 0 | 1, msg: string, data: unknown, headers?: Record<string, string>) =>
    c.json({ code, msg, data, systemTime: now() }, status as 200, headers);
  const ok = (c: HonoContext<Env>, data: unknown) => envelope(c, 200, 1, 'success', data);

  app.use('*', async (c, next) => {
    const start = performance.now();
    await next();
    if (deps.accessLog) {
      const ms = (performance.now() - start).toFixed(1);
      deps.accessLog(`${new Date(now()).toISOString()} ${c.req.method} ${c.req.path} ${c.res.status} ${ms}ms ${c.get('merchant') ?? '-'}`);
    }
  });

  app.onError((err, c) => {
    if (isAppError(err)) {
      const headers = err.retryAfter ? { 'Retry-After': String(err.retryAfter) } : undefined;
      return envelope(c, httpStatusOf[err.kind], 0, err.message, null, headers);
    }
    deps.errorLog?.(`internal error on ${c.req.method} ${c.req.path}: ${(err as Error)?.stack ?? String(err)}`);
    return envelope(c, 500, 0, 'internal error', null);
  });
  app.notFound((c) => envelope(c, 404, 0, 'Not found', null));

  app.get('/healthz', (c) => {
    backend.ping();
    return ok(c, { status: 'ok' });
  });

  app.get('/api/v1/openapi.json', (c) => c.json(openApiDocument()));

  app.get('/api/v1/address/:id', async (c) => {
    const id = c.req.param('id');
    if (id.length > MAX_ID) throw notFound('Not found');
    return ok(c, await backend.getAddresses(id));
  });

  app.get('/api/v1/order/:id/status', async (c) => {
    const id = c.req.param('id');
    if (id.length > MAX_ID) throw notFound('Order not found');
    return ok(c, await backend.getOrderStatus(id));
  });

  /**
   * A signed operation (decisions §1): JSON object, schema with the signing fields, timestamp
   * window, merchant, signature, then the operation with its nonce used up in the same
   * transaction. A refused request changes nothing.
   */
  const signed = <S extends z.ZodObject>(
    path: string,
    schema: S,
    run: (service: PaymentService, input: Record<string, unknown>) => Promise<unknown>,
    opts: { mchIdRequired?: boolean; rateLimited?: boolean } = {},
  ) => {
    const full = schema.extend(authFields);
    app.post(path, async (c) => {
      const body = await readJsonObject(c);
      const req = parseInput(full, body) as { mchId?: string; timestamp: number; nonce: string };
      const t = now();
      if (Math.abs(t - req.timestamp) > TIMESTAMP_WINDOW_MS) {
        throw new AppError('unauthorized', 'timestamp is not within 5 minutes of server time (see systemTime)');
      }
      if (!req.mchId && opts.mchIdRequired) throw invalid('mchId is required');
      const mchId = req.mchId ?? backend.resolveMerchantId();
      const secret = backend.merchantSecret(mchId);
      if (!secret) throw new AppError('unauthorized', `unknown merchant ${mchId}`);
      if (!verify(body, secret)) throw new AppError('unauthorized', 'signature does not match');
      c.set('merchant', mchId);
      const perMinute = opts.rateLimited ? backend.merchantRateLimit(mchId) : 0;
      if (perMinute > 0) {
        const wait = limiter.take(mchId, perMinute, t);
        if (wait > 0) throw new AppError('rate_limited', `too many requests: at most ${perMinute} per minute; retry in ${wait} s`, { retryAfter: wait });
      }
      const { timestamp: _t, nonce: _n, sign: _s, ...input } = body;
      const service = backend.as({
        actor: `api:${mchId}`,
        nonce: { merchantId: mchId, value: req.nonce, expiresAt: Math.max(req.timestamp, t) + NONCE_KEEP_MS },
      });
      try {
        return ok(c, await run(service, { ...input, mchId }));
      } catch (e) {
        // A replayed request (nonce already used) is refused as unauthenticated: it must not use up the merchant's limit.
        if (perMinute > 0 && isAppError(e) && e.kind === 'unauthorized') limiter.giveBack(mchId, perMinute);
        throw e;
      }
    });
    // The same path with another method: say which one it takes.
    app.all(path, (c) => envelope(c, 405, 0, `${c.req.method} is not allowed on ${path}; use POST`, null, { Allow: 'POST' }));
  };

  signed('/api/v1/order', createOrderSchema, (s, i) => s.createOrder(i as never), { mchIdRequired: true, rateLimited: true });
  signed('/api/v1/refund', refundSchema, (s, i) => s.refund(i as never));
  signed('/api/v1/withdraw/apply', withdrawApplySchema, (s, i) => s.applyWithdrawal(i as never));
  signed('/api/v1/withdraw/confirm', withdrawConfirmSchema, (s, i) => s.confirmWithdrawal(i as never));
  signed('/api/v1/withdraw/reject', withdrawRejectSchema, (s, i) => s.rejectWithdrawal(i as never));
  return app;
}

/**
 * The body of a signed request as one JSON object. On a socket it is read straight from Node's
 * request (no web Request object is built: that was a tenth of a create order), at most
 * MAX_BODY_BYTES, whatever Content-Length says.
 */
async function readJsonObject(c: HonoContext<Env>): Promise<Record<string, unknown>> {
  const incoming = c.env?.incoming;
  const header = (name: string) => (incoming ? incoming.headers[name] : c.req.header(name)) as string | undefined;
  if (!/^application\/json\b/i.test(header('content-type') ?? '')) throw invalid('Content-Type must be application/json');
  const declared = Number(header('content-length'));
  const tooLarge = () => {
    // The rest of the body is left unread: the connection cannot be reused, so say so.
    c.header('Connection', 'close');
    return new AppError('too_large', `the request body is larger than ${MAX_BODY_BYTES / 1024} KiB`);
  };
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  let bytes: Buffer | 'too_large';
  try {
    bytes = incoming ? await readIncoming(incoming, MAX_BODY_BYTES) : Buffer.from(await c.req.raw.arrayBuffer());
  } catch {
    // The client went away mid-body: its fault, not an internal error.
    throw invalid('the request body could not be read to its end');
  }
  if (bytes === 'too_large' || bytes.length > MAX_BODY_BYTES) throw tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid('the request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Node's request body, or 'too_large' as soon as it passes `limit` (the rest is left unread). */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off('data', onData).off('end', onEnd).off('error', onFail).off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        incoming.pause();
        resolve('too_large');
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onFail = (e: Error) => {
      done();
      reject(e);
    };
    const onClose = () => onFail(new Error('the client closed the connection mid-body'));
    if (incoming.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    incoming.on('data', onData).on('end', onEnd).on('error', onFail).on('close', onClose);
  });
}

export type App = ReturnType<typeof createApp>;
