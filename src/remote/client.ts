import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { AppError, kindOfHttpStatus } from '../core/errors.js';
import { compact, describeIssues } from '../core/schemas.js';
import type {
  CreateOrderRequest,
  RefundRequest,
  WithdrawApplyRequest,
  WithdrawConfirmRequest,
  WithdrawRejectRequest,
  WithdrawVerifyRequest,
} from '../core/schemas.js';
import type { OperatorExtensions, PaymentService } from '../core/service.js';
import type {
  Addresses,
  AuditView,
  BalanceView,
  CallbackShow,
  CallbackStatus,
  CallbackView,
  FindResult,
  HeldPaymentView,
  LogFollow,
  KnownChain,
  MerchantIdentity,
  Order,
  OrderDetail,
  OrderShow,
  OrderStatus,
  Page,
  RefundResult,
  RefundView,
  Summary,
  VerificationReport,
  ListedWithdrawal,
  Withdrawal,
  WithdrawalDetail,
  WithdrawalStatus,
} from '../core/types.js';
import { BAD_SIGNATURE_WORDS, sign } from '../signing/index.js';
import {
  addressesSchema,
  balanceSchema,
  callbackListSchema,
  callbackShowSchema,
  envelopeSchema,
  findResultSchema,
  heldListSchema,
  logFollowSchema,
  logPageSchema,
  logSchema,
  knownChainsSchema,
  merchantIdentitySchema,
  orderListSchema,
  orderPageSchema,
  orderSchema,
  orderShowSchema,
  refundListSchema,
  refundPageSchema,
  callbackPageSchema,
  refundResultSchema,
  statusSchema,
  summarySchema,
  verificationReportSchema,
  withdrawalDetailSchema,
  withdrawalListSchema,
  withdrawalPageSchema,
  withdrawalSchema,
} from './responses.js';
import { credentialsProblem } from './remote-url.js';
import { printable, printableDeep } from './text.js';
import { isProfileName } from './profiles.js';

/** An extension's body names its operation, signed with it (src/core/schemas.ts withOp). */
const opOf = (path: string) => path.slice('/api/v1/'.length);

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface RemoteOptions {
  baseUrl: string;
  mchId?: string;
  secret?: string;
  /** Where the secret came from (CRYPTOPAY_SECRET, a profile...), for a refused signature's message. */
  secretSource?: string;
  timeoutMs?: number;
  fetch?: Fetch;
  now?: () => number;
  /** How often an unsigned GET is tried again after a connection failure. */
  getRetries?: number;
  /** The saved profile whose URL baseUrl is, if one is: named when it cannot be reached. */
  profile?: string;
}

/** The service answered that the path does not exist (its own 404, not an id it does not know). */
class NoSuchPath extends AppError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/**
 * The PaymentService over the REST interface: each request built and signed as decisions §1
 * says, with a fresh timestamp and nonce; every answer checked to be the envelope.
 */
export class RemotePaymentService implements PaymentService, OperatorExtensions {
  private readonly base: string;
  private readonly fetch: Fetch;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RemoteOptions) {
    // The service's base URL; `serve` prints it with /api/v1, so that is accepted too.
    this.base = opts.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    // The base appears in every message: one holding credentials is refused here too, for any
    // caller that did not come through checkRemoteUrl (which also applies the http policy).
    const problem = URL.canParse(this.base) ? credentialsProblem(new URL(this.base)) : null;
    if (problem) throw new AppError('usage', problem);
    this.fetch = opts.fetch ?? ((url, init) => fetch(url, init));
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async createOrder(input: CreateOrderRequest): Promise<Order> {
    return this.post('/api/v1/order', input, orderSchema);
  }

  async getAddresses(id: string): Promise<Addresses> {
    return this.get(`/api/v1/address/${encodeURIComponent(id)}`, addressesSchema);
  }

  async getOrderStatus(id: string): Promise<OrderStatus> {
    return this.get(`/api/v1/order/${encodeURIComponent(id)}/status`, statusSchema);
  }

  async refund(input: RefundRequest): Promise<RefundResult> {
    return this.post('/api/v1/refund', input, refundResultSchema);
  }

  async applyWithdrawal(input: WithdrawApplyRequest): Promise<Withdrawal> {
    return this.post('/api/v1/withdraw/apply', input, withdrawalSchema);
  }

  async confirmWithdrawal(input: WithdrawConfirmRequest): Promise<Withdrawal> {
    return this.post('/api/v1/withdraw/confirm', input, withdrawalSchema);
  }

  async rejectWithdrawal(input: WithdrawRejectRequest): Promise<Withdrawal> {
    return this.post('/api/v1/withdraw/reject', input, withdrawalSchema);
  }

  /** Extension endpoint (decisions §12): the remote reads its chain; its message is printable text. */
  async verifyWithdrawal(input: WithdrawVerifyRequest): Promise<VerificationReport> {
    const r = await this.post('/api/v1/withdraw/verify', { ...input, op: opOf('/api/v1/withdraw/verify') }, verificationReportSchema);
    return printableDeep(r) as VerificationReport;
  }

  // The reads of the extensions (decisions §12, docs/api.md "Extensions"): signed, answered for
  // the signing merchant only, checked like every answer (exchange makes their text printable).

  whoami(mchId?: string): Promise<MerchantIdentity> {
    return this.read('/api/v1/merchant', { mchId }, merchantIdentitySchema);
  }

  /** A service from before POST /api/v1/chains has no such path: not_found, so that the caller can do without. */
  async knownChains(): Promise<KnownChain[]> {
    try {
      return await this.read('/api/v1/chains', {}, knownChainsSchema);
    } catch (e) {
      if (e instanceof NoSuchPath) throw new AppError('not_found', 'the service does not list its chains (a release before POST /api/v1/chains)', { cause: e });
      throw e;
    }
  }

  listOrders(filter: { mchId?: string; status?: OrderStatus; uid?: string; oid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<OrderDetail[]> {
    return this.read('/api/v1/order/list', filter, orderListSchema) as Promise<OrderDetail[]>;
  }

  showOrder(input: { mchId?: string; id?: string; oid?: string }): Promise<OrderShow> {
    return this.read('/api/v1/order/show', input, orderShowSchema) as Promise<OrderShow>;
  }

  heldPayments(filter: { mchId?: string; orderId?: string }): Promise<HeldPaymentView[]> {
    return this.read('/api/v1/order/held', filter, heldListSchema);
  }

  listWithdrawals(filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<ListedWithdrawal[]> {
    return this.read('/api/v1/withdraw/list', filter, withdrawalListSchema);
  }

  getWithdrawal(id: string, mchId?: string): Promise<WithdrawalDetail> {
    return this.read('/api/v1/withdraw/show', { mchId, id }, withdrawalDetailSchema);
  }

  listRefunds(filter: { orderId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<RefundView[]> {
    return this.read('/api/v1/refund/list', filter, refundListSchema);
  }

  balance(uid: string, opts: { asset?: string; mchId?: string; known?: boolean } = {}): Promise<BalanceView> {
    return this.read('/api/v1/balance', { mchId: opts.mchId, uid, asset: opts.asset, known: opts.known }, balanceSchema);
  }

  log(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<AuditView[]> {
    return this.read('/api/v1/log', filter, logSchema);
  }

  listCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<CallbackView[]> {
    return this.read('/api/v1/callbacks/list', filter, callbackListSchema);
  }

  pageCallbacks(filter: { status?: CallbackStatus; orderId?: string; withdrawalId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<Page<CallbackView>> {
    return this.read('/api/v1/callbacks/list', { ...filter, page: true }, callbackPageSchema);
  }

  showCallback(id: string, mchId?: string): Promise<CallbackShow> {
    return this.read('/api/v1/callbacks/show', { mchId, id }, callbackShowSchema);
  }

  pageOrders(filter: { mchId?: string; status?: OrderStatus; uid?: string; oid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<OrderDetail>> {
    return this.read('/api/v1/order/list', { ...filter, page: true }, orderPageSchema) as Promise<Page<OrderDetail>>;
  }

  pageWithdrawals(filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<ListedWithdrawal>> {
    return this.read('/api/v1/withdraw/list', { ...filter, page: true }, withdrawalPageSchema);
  }

  pageRefunds(filter: { orderId?: string; mchId?: string; cursor?: string; limit?: number }): Promise<Page<RefundView>> {
    return this.read('/api/v1/refund/list', { ...filter, page: true }, refundPageSchema);
  }

  pageLog(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; until?: number; cursor?: string; limit?: number }): Promise<Page<AuditView>> {
    return this.read('/api/v1/log', { ...filter, page: true }, logPageSchema);
  }

  findOrders(q: string, opts: { mchId?: string; limit?: number } = {}): Promise<FindResult> {
    return this.read('/api/v1/order/find', { mchId: opts.mchId, q, limit: opts.limit }, findResultSchema) as Promise<FindResult>;
  }

  summary(opts: { mchId?: string } = {}): Promise<Summary> {
    return this.read('/api/v1/summary', { mchId: opts.mchId }, summarySchema);
  }

  followLog(filter: { orderId?: string; withdrawalId?: string; mchId?: string; since?: number; after?: number; limit?: number }): Promise<LogFollow> {
    return this.read('/api/v1/log/follow', filter, logFollowSchema);
  }

  private async get<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    const retries = this.opts.getRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.exchange(path, { method: 'GET' }, schema, false);
      } catch (e) {
        if (!(e instanceof ConnectionFailure) || attempt >= retries) throw toAppError(e, this.base, false, this.opts.profile);
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }

  private async post<S extends z.ZodType>(path: string, input: object, schema: S): Promise<z.output<S>> {
    const body = this.signed(input);
    try {
      return await this.exchange(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body }, schema, true);
    } catch (e) {
      throw toAppError(e, this.base, true, this.opts.profile);
    }
  }

  /**
   * A signed read of the extensions: it changes nothing, so after a connection failure it is
   * tried again like a GET, signed anew (a new nonce), and its failures carry no warning about
   * a change that may have happened.
   */
  private async read<S extends z.ZodType>(path: string, input: object, schema: S): Promise<z.output<S>> {
    const retries = this.opts.getRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const body = this.signed({ ...input, op: opOf(path) });
      try {
        return await this.exchange(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body }, schema, false);
      } catch (e) {
        if (!(e instanceof ConnectionFailure) || attempt >= retries) throw toAppError(e, this.base, false, this.opts.profile);
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }

  /** The JSON text of a signed request (decisions §1): mchId, a fresh timestamp and nonce, sign. */
  private signed(input: object): string {
    const secret = this.opts.secret;
    if (!secret) {
      throw new AppError('usage', 'remote mode needs the merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, or store it in a profile');
    }
    const body: Record<string, unknown> = compact(input as Record<string, unknown>);
    body.mchId ??= this.opts.mchId;
    if (!body.mchId) {
      throw new AppError('usage', 'remote mode needs the merchant id: --mch-id, CRYPTOPAY_MCH_ID or a profile');
    }
    body.timestamp = this.now();
    body.nonce = randomBytes(16).toString('hex');
    body.sign = sign(body, secret);
    return JSON.stringify(body);
  }

  private async exchange<S extends z.ZodType>(path: string, init: RequestInit, schema: S, signed: boolean): Promise<z.output<S>> {
    const url = `${this.base}${path}`;
    let res: Response;
    let text: string;
    try {
      // Never followed: fetch would send a 307/308's signed body on to whatever the Location names.
      res = await this.fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
      text = await readCapped(res, MAX_ANSWER_BYTES);
    } catch (e) {
      if (e === TOO_LARGE) {
        throw new AppError('unavailable', `the remote ${this.base} answered more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB, which no answer of this service is: refused, the rest unread (is --remote the service's base URL?)${signed ? notRetried : ''}`);
      }
      const name = (e as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new AppError('unavailable', `the remote ${this.base} did not answer within ${this.timeoutMs / 1000} s${signed ? notRetried : ''}`);
      }
      throw new ConnectionFailure(e);
    }
    if (res.status >= 300 && res.status < 400) {
      throw new AppError('unavailable', `the remote ${this.base} answered HTTP ${res.status}, a redirect${redirectTarget(res.headers.get('location'), url)}: redirects are not followed, so nothing was sent there (a signed request would go to another address); if that is the service's address, give it as the remote`);
    }
    let parsed: z.infer<typeof envelopeSchema> | undefined;
    try {
      const json = envelopeSchema.safeParse(JSON.parse(text));
      if (json.success) parsed = json.data;
    } catch {
      // not JSON: handled below
    }
    if (!parsed) {
      const type = printable(res.headers.get('content-type') ?? 'no content type');
      throw new AppError('unavailable', `the remote ${this.base} did not answer with the cryptopay envelope (HTTP ${res.status}, ${type.split(';')[0]}): is --remote the service's base URL?`);
    }
    if (parsed.code === 0 && res.status === 404 && !ownNotFound(init.method ?? 'GET', path, parsed.msg)) {
      // The service's "no such path": the remote URL names a path under which the interface is
      // not (a new user's --remote …/cryptopay read as "Not found" for an order that exists).
      throw new NoSuchPath(`the remote ${this.base} has no ${init.method ?? 'GET'} ${path.replace(/\/(ord|wd)_[^/]*/, '/{id}')}: is --remote the service's base URL (the address serve prints, without /api/v1)?${signed ? notRetried : ''}`);
    }
    if (parsed.code === 0) {
      const retryAfter = Number(res.headers.get('retry-after')) || undefined;
      // A refused signature names what was signed with what: a stale CRYPTOPAY_SECRET in the
      // shell beats a profile's secret, and "signature does not match" alone did not say so.
      // The service's words say how to sign (for a merchant's own code); this CLI signed it
      // itself, so what it says instead is which merchant and which secret.
      const badSignature = init.method === 'POST' && res.status === 401 && (parsed.msg === BAD_SIGNATURE_WORDS || parsed.msg.startsWith(`${BAD_SIGNATURE_WORDS}:`));
      const hint = badSignature
        ? `the remote ${this.base} refused the signature of merchant ${this.opts.mchId ?? '(none given: the remote\'s only one)'}, made with the secret from ${this.opts.secretSource ?? 'the configuration'} (check that merchant id and that secret)`
        : undefined;
      throw new AppError(kindOfHttpStatus(res.status), badSignature ? BAD_SIGNATURE_WORDS : printable(parsed.msg), { ...(retryAfter ? { retryAfter } : {}), ...(hint ? { hint } : {}) });
    }
    const data = schema.safeParse(parsed.data);
    if (!data.success) {
      // The issues name fields and rules, never the values: those are what is not trusted.
      throw new AppError('unavailable', `the remote ${this.base} answered success with data this client does not understand (${printable(describeIssues(data.error))}); nothing of it is printed`);
    }
    return printableDeep(data.data);
  }
}

/**
 * The most of an answer read. The largest this service gives is a page of 1,000 rows (a list's
 * --limit at most) or 500 log entries, a few MB at most; a remote that sends more is not this
 * service, and reading it whole held it all in memory (an attacker review: 400 MB took the CLI
 * to ~1.7 GB within the timeout).
 */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const TOO_LARGE = new Error('answer too large');

/** The body as text, refused (TOO_LARGE, the connection dropped) once it passes `max` bytes. */
async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > max) {
    await res.body?.cancel().catch(() => {});
    throw TOO_LARGE;
  }
  if (!res.body) return res.text();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw TOO_LARGE;
    }
    chunks.push(value);
  }
  // As res.text() decodes: UTF-8, a leading BOM dropped, bad bytes replaced.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Whether a 404 is the interface's own answer about the thing asked for, not a path it does not
 * have: the status lookup says "Order not found" (decisions §7, exact), a signed operation names
 * what it did not find; only an unknown path says "Not found" to a POST. The address lookup says
 * "Not found" for both, so it is always taken as the interface's.
 */
function ownNotFound(method: string, path: string, msg: string): boolean {
  if (method === 'POST') return msg !== 'Not found';
  if (/^\/api\/v1\/order\/[^/]+\/status$/.test(path)) return msg === 'Order not found';
  return true;
}

const notRetried = '; a signed request is not sent again automatically (its nonce would be refused anyway): check whether it took effect before repeating it';

/**
 * Where a redirect pointed, as its origin only: the Location is the server's text, and may hold
 * credentials or anything else; an origin parsed by URL holds neither.
 */
function redirectTarget(location: string | null, base: string): string {
  if (!location) return '';
  try {
    const origin = new URL(location, base).origin;
    return origin === 'null' ? '' : ` to ${origin}`;
  } catch {
    return '';
  }
}

class ConnectionFailure extends Error {
  constructor(readonly original: unknown) {
    super('connection failure');
  }
}

function toAppError(e: unknown, base: string, signed: boolean, profile: string | undefined): unknown {
  if (!(e instanceof ConnectionFailure)) return e;
  const cause = (e.original as { cause?: { code?: string; message?: string } })?.cause;
  // undici's messages may quote what the server sent.
  const reason = printable(String(cause?.code ?? cause?.message ?? (e.original as Error)?.message ?? 'connection failed'));
  // A saved URL goes stale when its service moves (a new-user trial: a profile of a serve
  // --port 0, restarted): whose URL it is, and how to save another (the name as printable text:
  // profile add checks names, a hand-edited config file need not).
  const name = profile === undefined ? undefined : printable(profile);
  const whose = name === undefined ? '' : `, the URL profile ${name} keeps`;
  // The hint is for a serve on this machine (a port that moved), with a name profile add takes
  // as typed; it says that add replaces the whole profile (a review: it asks for the secret again).
  const local = /^https?:\/\/(127\.|localhost[:/]|\[::1\])/i.test(`${base}/`);
  const moved = name === undefined || !local || !isProfileName(name) ? ''
    : `; if its service moved (serve --port 0 listens on a new port each start), save the profile again with the new URL: cryptopay profile add ${name} --url URL (this replaces the saved profile, its secret included)`;
  return new AppError('unavailable', `cannot reach the remote ${base}${whose}: ${reason}${moved}${signed ? notRetried : ''}`);
}
