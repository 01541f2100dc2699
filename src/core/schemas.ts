import { z } from 'zod';
import { unusablePort } from './blocked-ports.js';
import { AppError } from './errors.js';
import { notAmountString } from './money.js';
import { NONCE_PATTERN } from './nonce.js';
import { isPlainHost } from './plain-host.js';
import { urlCredentials } from './url-credentials.js';
import { BLANKS, blankRefusal, CONTROL, controlRefusal, echoRefusal, HIDDEN, hiddenRefusal, isEchoable } from './text-rules.js';

/**
 * One schema per input of the REST interface, used at every edge: the local service, the HTTP
 * server (which adds the signing fields) and the CLI. Unknown fields are refused by name.
 */
const text = (field: string, max: number) =>
  z.string({ error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, `${field} is required`)
    .max(max, `${field} must be at most ${max} characters`);

const id64 = (field: string) => text(field, 64).refine((v) => !CONTROL.test(v), controlRefusal(field));

export { NONCE_PATTERN } from './nonce.js';

/** A text sent back in signed callbacks: no "&" (src/core/text-rules.ts). */
/** An id that people read (an order's oid and uid, a withdrawal's uid): nothing hidden in it (src/core/text-rules.ts). */
const readable = <T extends z.ZodType<string>>(field: string, schema: T) =>
  schema.refine((v) => !HIDDEN.test(v), hiddenRefusal(field)).refine((v) => HIDDEN.test(v) || !BLANKS.test(v), blankRefusal(field));

const echoed = <T extends z.ZodString>(field: string, schema: T) =>
  schema
    .refine(isEchoable, echoRefusal(field))
    .meta({ 'x-echoed': true });

/**
 * An http(s) URL. `plainHost`: its host must be one a Content-Security-Policy source can name
 * (the payment page's logo, src/server/pay-page.ts).
 */
const url = (field: string, opts: { plainHost?: boolean } = {}) =>
  text(field, 2048).superRefine((v, ctx) => {
    // One parse for every rule (create order's notifyUrl is on the hot path); the first rule
    // broken is the refusal.
    const refuse = (message: string) => ctx.addIssue({ code: 'custom', message });
    // The URL parser keeps an ESC or a C1 control in the text, which is stored and shown to
    // operators (an attacker review); it drops a tab or a line break, so the URL stored would not
    // be the one used. Either way not a URL anyone means.
    if (CONTROL.test(v)) return refuse(controlRefusal(field));
    let u: URL | undefined;
    try {
      u = new URL(v);
    } catch {
      // not a URL: refused below
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || (opts.plainHost && !isPlainHost(u.hostname))) {
      return refuse(opts.plainHost ? `${field} must be an http or https URL whose host is a plain host name or IPv4 address (a page's Content-Security-Policy cannot name an IPv6 address)` : `${field} must be an http or https URL`);
    }
    // Credentials in a URL are sent as Basic auth, decoded: `http://%zz@host` could never be sent
    // (an outside review found its callbacks stuck, due for ever).
    try {
      urlCredentials(u);
    } catch (e) {
      if (e instanceof URIError) return refuse(`${field} has a user name or password that is not valid percent-encoding (write % as %25)`);
    }
    const why = unusablePort(u);
    if (why) refuse(`${field} uses ${why}: give the address of an HTTP server`);
  });

/** A digit string that Number() reads exactly: up to 2^53 - 1 (past it, 9007199254740993 reads as ...992). */
const safe = (digits: string) => Number(digits) <= Number.MAX_SAFE_INTEGER;

/** Milliseconds since the epoch, as a JSON number or a string of digits. */
export const millis = (field: string) => {
  // Each check repeats the message: a union answers with the failed checks of the branch whose type matched.
  const ms = `${field} must be a milliseconds timestamp (digits)`;
  return z.union(
    [z.number().int({ error: ms }).nonnegative({ error: ms }).max(Number.MAX_SAFE_INTEGER, { error: ms }), z.string().regex(/^\d{1,16}$/, { error: ms }).refine(safe, { error: ms })],
    { error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a milliseconds timestamp (digits)`) },
  ).transform((v) => Number(v));
};

const positiveInt = (field: string) => {
  const pos = `${field} must be a positive integer`;
  return z.union([z.number().int({ error: pos }).positive({ error: pos }).max(Number.MAX_SAFE_INTEGER, { error: pos }), z.string().regex(/^[1-9]\d{0,15}$/, { error: pos }).refine(safe, { error: pos })], {
    error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a positive integer`),
  }).transform((v) => Number(v));
};

const amount = z.string({ error: (i) => (i.input === undefined ? 'amount is required' : notAmountString(i.input)) });

const chainId = z.union([z.number(), z.string()], {
  error: (i) => (i.input === undefined ? 'chainId is required' : 'chainId must be a number or a string of digits'),
});

const chainType = z.enum(['EVM', 'TRON'], {
  error: (i) => (i.input === undefined ? 'chainType is required' : 'chainType must be EVM or TRON'),
});

const mchId = id64('mchId').optional();
/** mchId where a request must carry it (create order over HTTP, rest-interface.md). */
export const requiredMchId = id64('mchId');

export const createOrderSchema = z.strictObject({
  mchId,
  oid: readable('oid', echoed('oid', id64('oid'))),
  uid: readable('uid', echoed('uid', id64('uid'))),
  amount,
  memo: text('memo', 256).optional(),
  expiredAt: millis('expiredAt').optional(),
  notifyUrl: url('notifyUrl').optional(),
  redirectUrl: url('redirectUrl').optional(),
  logo: url('logo', { plainHost: true }).optional(),
});

export const refundSchema = z.strictObject({
  mchId,
  id: id64('id').optional(),
  oid: id64('oid').optional(),
  amount,
  remark: echoed('remark', text('remark', 256)).optional(),
});

export const withdrawApplySchema = z.strictObject({
  mchId,
  uid: readable('uid', echoed('uid', id64('uid'))),
  amount,
  to: text('to', 128),
  chainId,
  chainType,
  token: text('token', 128),
  notifyUrl: url('notifyUrl').optional(),
});

export const withdrawConfirmSchema = z.strictObject({
  mchId,
  logId: id64('logId'),
  txHash: text('txHash', 80),
  blockNumber: positiveInt('blockNumber'),
});

/** Extension (decisions §12, issue #12): the chain's view of a withdrawal's transaction; changes nothing. */
export const withdrawVerifySchema = z.strictObject({
  mchId,
  id: id64('id'),
  txHash: text('txHash', 80).optional(),
  blockNumber: positiveInt('blockNumber').optional(),
});

export const withdrawRejectSchema = z.strictObject({
  mchId,
  id: id64('id'),
  remark: echoed('remark', text('remark', 256)).optional(),
});

/**
 * Extensions for an operator in remote mode (decisions §12, issue #15 item 8): signed reads of
 * the signing merchant's own data. Every one carries mchId like the interface's operations; the
 * server answers for the merchant whose secret verified, whatever else the body says.
 */
const LIMIT = 'limit must be a whole number from 1 to 1000';
const limit = z.union([z.number().int({ error: LIMIT }).min(1, { error: LIMIT }).max(1000, { error: LIMIT }), z.string().regex(/^[1-9]\d{0,3}$/, { error: LIMIT })], { error: LIMIT })
  .transform((v) => Number(v))
  .refine((v) => v <= 1000, LIMIT);
const orderStatus = z.enum(['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'], { error: 'status must be PENDING_PAY, PAID, EXPIRED or REFUNDED' });
const withdrawalStatus = z.enum(['PENDING', 'CONFIRMED', 'REJECTED'], { error: 'status must be PENDING, CONFIRMED or REJECTED' });

/** `page: true` answers a list as a page: `{items, total, before, next}` (the CLI's "showing 51-100 of 230"). */
const page = z.boolean({ error: 'page must be true or false' }).optional();
const MARK = 'after must be the mark of the previous answer (an entry number, 0 or more)';
const mark = z.union([z.number().int({ error: MARK }).nonnegative({ error: MARK }).max(Number.MAX_SAFE_INTEGER, { error: MARK }), z.string().regex(/^(0|[1-9]\d{0,15})$/, { error: MARK })], { error: MARK })
  .transform((v) => Number(v))
  .refine((v) => Number.isSafeInteger(v), MARK);
const entryNumber = (field: string) => z.string().regex(/^[1-9][0-9]{0,15}$/, { error: `${field} must be an entry number` });

/**
 * An extension's body names its operation in a signed field, `op`: the path after `/api/v1/`
 * (`order/show`). The signature covers the body, not the path, so without it a read's body
 * `{mchId, id}` was also a valid withdraw/reject body, and whoever captured a `withdraw show` on
 * its way could reject the withdrawal with it. The interface's own operations accept no `op`
 * (their bodies are strict), so no extension's body is accepted anywhere else, and no two
 * extensions accept each other's.
 */
export function withOp<S extends z.ZodObject>(op: string, schema: S) {
  return schema.extend({
    op: z.literal(op, {
      error: (i) =>
        i.input === undefined
          ? `op is required: an extension endpoint names its operation in the signed body (op=${op}), so that the body cannot be used at another endpoint`
          : `op must be ${op} at this endpoint`,
    }),
  });
}

export const merchantMeSchema = z.strictObject({ mchId });
// since, until and cursor page and filter the lists (issue #15 item 2): creation time in ms, and the id of the last row of the page before.
export const orderListSchema = z.strictObject({ mchId, status: orderStatus.optional(), uid: id64('uid').optional(), oid: id64('oid').optional(), since: millis('since').optional(), until: millis('until').optional(), cursor: id64('cursor').optional(), limit: limit.optional(), page });
/** One order by id or by the merchant's oid (as a refund names it); both given must agree; one is required. */
export const orderShowSchema = z.strictObject({ mchId, id: id64('id').optional(), oid: id64('oid').optional() });
export const heldListSchema = z.strictObject({ mchId, orderId: id64('orderId').optional() });
export const withdrawListSchema = z.strictObject({ mchId, status: withdrawalStatus.optional(), uid: id64('uid').optional(), since: millis('since').optional(), until: millis('until').optional(), cursor: id64('cursor').optional(), limit: limit.optional(), page });
export const withdrawShowSchema = z.strictObject({ mchId, id: id64('id') });
export const refundListSchema = z.strictObject({ mchId, orderId: id64('orderId').optional(), cursor: id64('cursor').optional(), limit: limit.optional(), page });
/** known: true refuses a uid the merchant never saw (`balance` on the CLI), instead of answering zeros. */
export const balanceSchema = z.strictObject({ mchId, uid: id64('uid'), asset: text('asset', 16).optional(), known: z.boolean({ error: 'known must be true or false' }).optional() });
export const logSchema = z.strictObject({ mchId, orderId: id64('orderId').optional(), withdrawalId: id64('withdrawalId').optional(), since: millis('since').optional(), until: millis('until').optional(), cursor: entryNumber('cursor').optional(), limit: limit.optional(), page });
/** `log --follow`: the entries after the entry number `after` (its answer's mark), or the newest `limit` without it. */
export const logFollowSchema = z.strictObject({ mchId, orderId: id64('orderId').optional(), withdrawalId: id64('withdrawalId').optional(), since: millis('since').optional(), after: mark.optional(), limit: limit.optional() });
/** `order find`: an id, oid, uid, transaction hash or deposit address of the merchant's. */
export const orderFindSchema = z.strictObject({ mchId, q: text('q', 80).refine((v) => !CONTROL.test(v), controlRefusal('q')).refine((v) => v.trim() === v, 'q must not start or end with spaces'), limit: limit.optional() });
export const summarySchema = z.strictObject({ mchId });
/** The chains and tokens the service knows (withdraw apply on a remote). */
export const chainsSchema = z.strictObject({ mchId });

export const callbackListSchema = z.strictObject({
  mchId,
  status: z.enum(['pending', 'delivered', 'failed'], { error: 'status must be pending, delivered or failed' }).optional(),
  orderId: id64('orderId').optional(),
  withdrawalId: id64('withdrawalId').optional(),
  cursor: id64('cursor').optional(),
  limit: limit.optional(),
  page,
});
export const callbackShowSchema = z.strictObject({ mchId, id: id64('id') });

export type OrderListRequest = z.input<typeof orderListSchema>;
export type OrderShowRequest = z.input<typeof orderShowSchema>;
export type HeldListRequest = z.input<typeof heldListSchema>;
export type WithdrawListRequest = z.input<typeof withdrawListSchema>;
export type WithdrawShowRequest = z.input<typeof withdrawShowSchema>;
export type RefundListRequest = z.input<typeof refundListSchema>;
export type BalanceRequest = z.input<typeof balanceSchema>;
export type LogRequest = z.input<typeof logSchema>;

/** What every signed request adds (decisions §1). */
export const authFields = {
  timestamp: millis('timestamp'),
  nonce: z.string({ error: (i) => (i.input === undefined ? 'nonce is required' : 'nonce must be a string') })
    .regex(NONCE_PATTERN, 'nonce must be 1 to 64 characters of A-Z a-z 0-9 _ . : - (no & or =: they would let a signed body be re-split)'),
  sign: text('sign', 128),
};

export type CreateOrderRequest = z.input<typeof createOrderSchema>;
export type RefundRequest = z.input<typeof refundSchema>;
export type WithdrawApplyRequest = z.input<typeof withdrawApplySchema>;
export type WithdrawConfirmRequest = z.input<typeof withdrawConfirmSchema>;
export type WithdrawRejectRequest = z.input<typeof withdrawRejectSchema>;
export type WithdrawVerifyRequest = z.input<typeof withdrawVerifySchema>;

/**
 * Null and "" mean "absent", exactly as signing treats them (decisions §1), so a field sent
 * empty is neither signed nor validated.
 */
export function compact(body: Record<string, unknown>): Record<string, unknown> {
  // fromEntries defines own properties, so a "__proto__" key stays a (refused) field.
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null && v !== undefined && v !== ''));
}

/**
 * Outputs of parseInput already known to be what `parseInput(schema, ...)` would give: the server
 * parses a signed body once with the operation's schema and the signing fields (every field
 * schema the same object), and the service then takes that output as it is instead of parsing
 * the same fields again (~half of zod's share of a create order). Only objects marked by
 * `parsedWith` are taken, and only for the very schema they were marked with.
 */
const parsedAs = new WeakMap<object, z.ZodType>();

/** Marks `data` as the output of parseInput for `schema` (see parsedAs); returns it. */
export function parsedWith<T extends object>(schema: z.ZodType, data: T): T {
  parsedAs.set(data, schema);
  return data;
}

export function parseInput<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body === 'object' && body !== null && parsedAs.get(body) === schema) return body as z.output<S>;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid', 'the request body must be a JSON object');
  }
  const fields = fieldNames(schema);
  for (const [k, v] of Object.entries(body)) {
    // The same words the signing refuses them with, so every edge answers alike.
    if (typeof v === 'object' && v !== null) throw new AppError('invalid', `field ${k} must be a string, number or boolean; nested values are not accepted in a signed request`);
    if (typeof v === 'string') checkText(k, v, fields);
  }
  const result = schema.safeParse(compact(body as Record<string, unknown>));
  if (!result.success) throw new AppError('invalid', describeIssues(result.error));
  return result.data;
}

const fieldNamesOf = new WeakMap<z.ZodType, readonly string[]>();

/** The fields a request may carry: the schema's own and the signing fields (decisions §1); worked out once per schema. */
function fieldNames(schema: z.ZodType): readonly string[] {
  let names = fieldNamesOf.get(schema);
  if (!names) {
    const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
    names = [...new Set([...(shape ? Object.keys(shape) : []), ...Object.keys(authFields), 'sign'])];
    fieldNamesOf.set(schema, names);
  }
  return names;
}

/**
 * Every string of a request: well-formed Unicode (a lone surrogate hashes as U+FFFD but would be
 * stored as other bytes, so two bodies would share a signature and a ledger value), and no text
 * that reads as another field of the request (`&nonce=` inside a URL): with it, a captured body
 * could be cut at other places into a request with the same signature (docs/decisions.md,
 * "Why a signed body has one reading").
 */
/** In a `u` regex a paired surrogate is one code point, so only a lone one is a surrogate here. */
const LONE_SURROGATE = /\p{Cs}/u;

function checkText(field: string, value: string, fields: readonly string[]): void {
  if (LONE_SURROGATE.test(value)) throw new AppError('invalid', `${field} is not well-formed Unicode (it holds a lone surrogate)`);
  if (!value.includes('&')) return;
  for (const other of fields) {
    if (value.includes(`&${other}=`)) {
      throw new AppError('invalid', `${field} must not contain "&${other}=": text that reads as another field of the request would let the signed body be re-split`);
    }
  }
}

export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const shown = issue.keys.slice(0, 10).map((k) => (k.length > 40 ? `${k.slice(0, 40)}…` : k));
      const more = issue.keys.length > 10 ? ` and ${issue.keys.length - 10} more` : '';
      return `unknown field${issue.keys.length > 1 ? 's' : ''}: ${shown.join(', ')}${more}`;
    }
    const path = issue.path.join('.');
    if (issue.message.startsWith(`${path} `) || !path) return issue.message;
    return `${path}: ${issue.message}`;
  });
  return [...new Set(parts)].join('; ');
}
