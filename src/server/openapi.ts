import { z } from 'zod';
import {
  balanceSchema,
  callbackListSchema,
  callbackShowSchema,
  chainsSchema,
  createOrderSchema,
  heldListSchema,
  logFollowSchema,
  logSchema,
  merchantMeSchema,
  orderFindSchema,
  orderListSchema,
  orderShowSchema,
  refundListSchema,
  withdrawListSchema,
  withdrawShowSchema,
  refundSchema,
  summarySchema,
  withdrawApplySchema,
  withdrawConfirmSchema,
  withdrawRejectSchema,
  withdrawVerifySchema,
  withOp,
} from '../core/schemas.js';
import { type Json, requestBody } from './openapi-request.js';
import { callbackWebhooks } from './openapi-webhooks.js';
import {
  ADDRESSES,
  AUDIT_ENTRY,
  BALANCE,
  CALLBACK,
  CALLBACK_SHOW,
  CREATED_ORDER,
  FIND,
  HELD,
  KNOWN_CHAINS,
  LISTED_WITHDRAWAL,
  LOG_FOLLOW,
  ORDER_DETAIL,
  ORDER_SHOW,
  PAY_STATE,
  REFUND,
  REFUND_VIEW,
  SUMMARY,
  VERIFICATION,
  WITHDRAWAL,
  WITHDRAWAL_DETAIL,
  listOf,
  listOrPage,
} from './openapi-answers.js';


/**
 * OpenAPI 3.1 from the very zod schemas the server validates with, so the document cannot drift
 * from the behaviour. Built once, on first request.
 */
let cached: Record<string, unknown> | undefined;

const envelope = (data: Json) => ({
  type: 'object',
  required: ['code', 'msg', 'data', 'systemTime'],
  additionalProperties: false,
  properties: {
    code: { const: 1, description: '1 success' },
    msg: { const: 'success' },
    data,
    systemTime: { type: 'integer', description: 'server time, milliseconds' },
  },
});

const errorResponse = (description: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

/** Answers the HTTP layer may give on any operation, before or around the route. */
const TRANSPORT = {
  400: errorResponse('malformed HTTP (a bad chunk, a bad Content-Length, no Host in HTTP/1.1) or, on a signed operation, invalid input; msg says which'),
  405: errorResponse('this path with another method; Allow names the methods it takes', { Allow: { required: true, schema: { type: 'string' } } }),
  408: errorResponse('the headers took over 10 s or the whole request over 30 s; the connection is closed'),
  417: errorResponse('an Expect other than 100-continue'),
  431: errorResponse('the request line and headers are too large'),
  500: errorResponse('an unexpected failure; the answer never carries details'),
  503: errorResponse('too many open connections (Retry-After), or a chain the operation must consult cannot be reached; nothing changed', { 'Retry-After': { schema: { type: 'string' } } }),
};

const EXT = 'Extension (decisions §12), signed; reads only the signing merchant\'s data (another merchant\'s ids answer like unknown ones) and changes nothing but the nonce. ';

const ok = (data: Json) => ({ description: 'success', content: { 'application/json': { schema: envelope(data) } } });

function unsignedGet(summary: string, responses: Json, parameters: Json[] = []) {
  return { get: { summary, security: [], parameters, responses: { ...TRANSPORT, ...responses } } };
}

const ID_PARAM = { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1 }, description: 'the order id' };

function signedPost(summary: string, body: z.ZodObject, data: Json, extra: Json = {}, bodyRule: Json = {}) {
  return {
    post: {
      summary,
      security: [{ merchantSignature: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: { ...requestBody(body), ...bodyRule } } } },
      responses: {
        ...TRANSPORT,
        200: ok(data),
        401: errorResponse('signature, timestamp or nonce refused; an unknown merchant answers exactly like a bad signature'),
        404: errorResponse('not found (also another merchant’s id)'),
        409: errorResponse('the current state forbids it (not Paid, not pending, duplicate)'),
        413: errorResponse('body over 64 KiB; the connection is closed'),
        ...extra,
      },
    },
  };
}

/** 429 with its Retry-After (decisions §8; the chain reads' own limit: docs/api.md, "Rate limits"). */
const rateLimited = (description: string) => ({
  429: errorResponse(description, { 'Retry-After': { required: true, schema: { type: 'string', pattern: '^[1-9]\\d*$' }, description: 'seconds to wait' } }),
});
const CHAIN_LIMIT = "rate limited: verify, confirm and reject share the merchant's limit per minute, counted apart from create order's";

export function openApiDocument(): Record<string, unknown> {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'cryptopay',
      version: '1',
      description:
        'Payment orders, refunds and withdrawals. Every response is the envelope {code, msg, data, systemTime}. Signed requests: sort every top-level field but sign (null and "" left out) by key, join as k=v with &, append the merchant secret, SHA-256, lowercase hex.',
    },
    servers: [{ url: '/' }],
    paths: {
      '/api/v1/order': signedPost('Create a payment order', createOrderSchema.extend({ mchId: z.string().min(1).max(64) }), CREATED_ORDER, rateLimited('rate limited')),
      '/api/v1/address/{id}': unsignedGet("An order's payment addresses", { 200: ok(ADDRESSES), 404: errorResponse('msg "Not found"') }, [ID_PARAM]),
      '/api/v1/order/{id}/status': unsignedGet(
        "An order's status",
        { 200: ok({ type: 'string', enum: ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'] }), 404: errorResponse('msg "Order not found"') },
        [ID_PARAM],
      ),
      '/api/v1/refund': signedPost('Refund a paid order, in full or in part', refundSchema, REFUND, {}, {
        // id or oid names the order; "" and null are absent, so one of them must hold text.
        anyOf: [
          { required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
          { required: ['oid'], properties: { oid: { type: 'string', minLength: 1 } } },
        ],
      }),
      '/api/v1/withdraw/apply': signedPost('Apply for a withdrawal (holds the amount)', withdrawApplySchema, WITHDRAWAL),
      '/api/v1/withdraw/confirm': signedPost('Confirm a pending withdrawal with its transaction', withdrawConfirmSchema, WITHDRAWAL, rateLimited(CHAIN_LIMIT)),
      '/api/v1/withdraw/reject': signedPost('Reject a pending withdrawal (releases the hold)', withdrawRejectSchema, WITHDRAWAL, rateLimited(CHAIN_LIMIT)),
      '/api/v1/withdraw/verify': signedPost(
        "Extension: what the chain says about a withdrawal's transaction (its recorded one, or txHash and blockNumber about to confirm it) next to what the withdrawal expects; changes nothing. 400 when the chain has no rpcUrl, 409 when there is no transaction to check, 503 when the node cannot be reached",
        withOp('withdraw/verify', withdrawVerifySchema),
        VERIFICATION,
        rateLimited(CHAIN_LIMIT),
      ),
      '/api/v1/merchant': signedPost(`${EXT}Who the signature acts as: what profile add and profile test check`, withOp('merchant', merchantMeSchema), {
        type: 'object', required: ['mchId', 'name', 'asset'], properties: { mchId: { type: 'string' }, name: { type: 'string' }, asset: { type: 'string' } },
      }),
      '/api/v1/order/list': signedPost(`${EXT}Orders, newest first (status EXPIRED: unpaid past expiredAt)`, withOp('order/list', orderListSchema), listOrPage(ORDER_DETAIL)),
      '/api/v1/order/find': signedPost(`${EXT}The orders whose id, oid, uid, payment transaction hash (any case, with or without 0x) or deposit address is q, newest first; and the withdrawals whose payout transaction it is`, withOp('order/find', orderFindSchema), FIND),
      '/api/v1/order/show': signedPost(`${EXT}One order by id or oid (both given must name the same order), with its payments on chain`, withOp('order/show', orderShowSchema), ORDER_SHOW),
      '/api/v1/order/held': signedPost(`${EXT}Payments seen more than 24 h after their order expired, waiting for an operator`, withOp('order/held', heldListSchema), listOf(HELD)),
      '/api/v1/withdraw/list': signedPost(`${EXT}Withdrawals, newest first`, withOp('withdraw/list', withdrawListSchema), listOrPage(LISTED_WITHDRAWAL)),
      '/api/v1/withdraw/show': signedPost(`${EXT}One withdrawal and how its confirmation was trusted`, withOp('withdraw/show', withdrawShowSchema), WITHDRAWAL_DETAIL),
      '/api/v1/refund/list': signedPost(`${EXT}Refunds, newest first, each with its own refundId`, withOp('refund/list', refundListSchema), listOrPage(REFUND_VIEW)),
      '/api/v1/balance': signedPost(`${EXT}A user's available and held balance (zeros for a user with no activity)`, withOp('balance', balanceSchema), BALANCE),
      '/api/v1/log': signedPost(`${EXT}The merchant's audit log, newest first`, withOp('log', logSchema), listOrPage(AUDIT_ENTRY)),
      '/api/v1/log/follow': signedPost(
        `${EXT}What the audit log gained after the mark "after" (oldest first, at most limit, default and most 500), or without it the newest limit entries (default 10); ask again with the answer's mark to follow it`,
        withOp('log/follow', logFollowSchema),
        LOG_FOLLOW,
      ),
      '/api/v1/summary': signedPost(`${EXT}The merchant's ledger at a glance: pending withdrawals, payments, refunds, withdrawals and balance adjustments today and this week (UTC), balances, held payments, the chains' lag, failed callbacks`, withOp('summary', summarySchema), SUMMARY),
      '/api/v1/callbacks/list': signedPost(`${EXT}Callbacks to the merchant's notifyUrls, newest first`, withOp('callbacks/list', callbackListSchema), listOrPage(CALLBACK)),
      '/api/v1/callbacks/show': signedPost(`${EXT}One callback with the event it carries and every attempt (the sending process shown as "service")`, withOp('callbacks/show', callbackShowSchema), CALLBACK_SHOW),
      '/api/v1/chains': signedPost(`${EXT}The chains and tokens the service knows, without their node's URL: what withdraw apply may name`, withOp('chains', chainsSchema), KNOWN_CHAINS),
      '/pay/{id}': unsignedGet(
        'The payment page of an order (HTML for people; no signature: the unguessable id is the capability)',
        {
          200: { description: 'the page, with a strict Content-Security-Policy', content: { 'text/html': { schema: { type: 'string' } } } },
          404: { description: 'a plain HTML page: no such order', content: { 'text/html': { schema: { type: 'string' } } } },
        },
        [ID_PARAM],
      ),
      '/pay/{id}/state': unsignedGet(
        'What the payment page polls: status, what arrived, what is still due',
        { 200: ok(PAY_STATE), 404: errorResponse('msg "Order not found"') },
        [ID_PARAM],
      ),
      '/api/v1/openapi.json': unsignedGet('This document (plain JSON, not in the envelope)', {
        200: { description: 'the OpenAPI document', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } } } },
      }),
      '/healthz': unsignedGet('Liveness: the ledger answers a query', {
        200: ok({ type: 'object', required: ['status'], additionalProperties: false, properties: { status: { const: 'ok' } } }),
      }),
    },
    // What the service POSTs to a notifyUrl (decisions §9).
    webhooks: callbackWebhooks(),
    components: {
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['code', 'msg', 'data', 'systemTime'],
          additionalProperties: false,
          properties: { code: { const: 0 }, msg: { type: 'string', minLength: 1 }, data: { type: 'null' }, systemTime: { type: 'integer' } },
        },
      },
      securitySchemes: {
        // OpenAPI has no scheme for a signature inside the JSON body; this one marks the signed
        // operations, and its description says how they are signed. No header is read.
        merchantSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Cryptopay-Body-Signature',
          description:
            'Not a header: every signed request carries mchId, timestamp, nonce and sign in its JSON body. sign is the lowercase hex SHA-256 of every top-level field but sign (null and "" left out) sorted by key, joined as k=v with &, followed by the merchant secret. The server reads no header for it.',
        },
      },
    },
  };
  return cached;
}
