import { z } from 'zod';
import { REFUSED_ORDERS_LISTED } from '../core/types.js';
import {
  balanceSchema,
  callbackListSchema,
  callbackShowSchema,
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
import { ADDRESS, EVM_ADDRESS_PATTERN, type Json, requestBody, TRON_ADDRESS_PATTERN, TX_HASH_PATTERN } from './openapi-request.js';
import { callbackWebhooks } from './openapi-webhooks.js';


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

const CANONICAL_AMOUNT = { type: 'string', pattern: '^(?:0|[1-9]\\d*)(?:\\.\\d*[1-9])?$', description: 'canonical decimal' };
const ORDER_ID = { type: 'string', pattern: '^ord_[A-Za-z0-9_-]+$' };
const ADDRESSES = {
  type: 'object',
  additionalProperties: false,
  properties: {
    EVM: { type: 'string', pattern: EVM_ADDRESS_PATTERN, description: 'EIP-55 address' },
    TRON: { type: 'string', pattern: TRON_ADDRESS_PATTERN, description: 'base58check T… address' },
  },
};
// Response objects do not forbid further properties: fields may be added (decisions §11), and
// clients ignore fields they do not know.
const ORDER = {
  type: 'object',
  required: ['id', 'oid', 'uid', 'amount', 'status', 'expiredAt', 'addresses'],
  properties: {
    id: ORDER_ID,
    oid: { type: 'string' },
    uid: { type: 'string' },
    amount: CANONICAL_AMOUNT,
    status: { type: 'string', enum: ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'] },
    expiredAt: { type: 'integer' },
    addresses: ADDRESSES,
  },
};
/** Create order's answer: the order and its payment page (decisions §11). */
const CREATED_ORDER = {
  ...ORDER,
  required: [...ORDER.required, 'payUrl'],
  properties: { ...ORDER.properties, payUrl: { type: 'string', format: 'uri', description: 'absolute address of the payment page GET /pay/{id}' } },
};
const PAY_STATE = {
  type: 'object',
  required: ['status', 'amount', 'paidAmount', 'dueAmount', 'asset', 'expiredAt', 'confirming'],
  properties: {
    status: { type: 'string', enum: ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'] },
    amount: CANONICAL_AMOUNT,
    paidAmount: { ...CANONICAL_AMOUNT, description: 'what has arrived so far ("0" when nothing has)' },
    dueAmount: { ...CANONICAL_AMOUNT, description: 'what is still due; "0" once paid' },
    asset: { type: 'string', description: "the ledger asset the order is priced in, such as USDT" },
    expiredAt: { type: 'integer' },
    confirming: {
      type: ['object', 'null'],
      description: 'payments the chain shows but the ledger does not count yet (short of their confirmations), while the order is PENDING_PAY or EXPIRED (a payment made before the expiry still pays it); null otherwise',
      required: ['amount', 'confirmations', 'required'],
      properties: {
        amount: { ...CANONICAL_AMOUNT, description: 'their sum' },
        confirmations: { type: 'integer', description: 'the fewest confirmations among them' },
        required: { type: 'integer', description: "the chain's confirmations (0: unknown)" },
      },
    },
  },
};
const REFUND = {
  type: 'object',
  required: ['id', 'oid', 'amount', 'status', 'remark', 'refundTime'],
  properties: {
    id: ORDER_ID,
    oid: { type: 'string' },
    amount: CANONICAL_AMOUNT,
    status: { const: 'REFUNDED' },
    remark: { type: 'string', description: '"" when none was given' },
    refundTime: { type: 'integer' },
  },
};
const WITHDRAWAL = {
  type: 'object',
  required: ['id', 'uid', 'amount', 'to', 'chainId', 'chainType', 'token', 'status', 'txHash', 'blockNumber', 'remark', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', pattern: '^wd_[A-Za-z0-9_-]+$' },
    uid: { type: 'string' },
    amount: CANONICAL_AMOUNT,
    to: ADDRESS,
    chainId: { type: 'string', pattern: '^[1-9][0-9]*$', description: 'decimal, as a string' },
    chainType: { type: 'string', enum: ['EVM', 'TRON'] },
    token: ADDRESS,
    status: { type: 'string', enum: ['PENDING', 'CONFIRMED', 'REJECTED'] },
    txHash: { anyOf: [{ type: 'string', pattern: TX_HASH_PATTERN }, { type: 'null' }] },
    blockNumber: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] },
    remark: { type: ['string', 'null'] },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
  },
};

const NULLABLE_INT = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] };
/** The extension's answer (src/core/types.ts VerificationReport). */
const VERIFICATION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'verification', 'txHash', 'blockNumber', 'matches', 'deep', 'verdict', 'message', 'expected', 'chain'],
  properties: {
    id: { type: 'string', pattern: '^wd_[A-Za-z0-9_-]+$' },
    status: { type: 'string', enum: ['PENDING', 'CONFIRMED', 'REJECTED'] },
    verification: { anyOf: [{ type: 'string', enum: ['confirming', 'verified', 'unverified'] }, { type: 'null' }], description: 'how its confirmation was trusted' },
    txHash: { type: 'string', pattern: TX_HASH_PATTERN },
    blockNumber: { type: 'integer', minimum: 1 },
    matches: { type: 'boolean', description: 'the transaction pays exactly this withdrawal in that block' },
    deep: { type: 'boolean', description: "it matches and has the chain's confirmations" },
    verdict: { type: 'string', enum: ['match', 'mismatch', 'unknown', 'unmined'] },
    message: { type: 'string', minLength: 1, description: 'what matches, or everything that differs' },
    expected: {
      type: 'object',
      additionalProperties: false,
      required: ['token', 'tokenSymbol', 'amount', 'rawAmount', 'to', 'blockNumber', 'confirmations'],
      properties: {
        token: ADDRESS, tokenSymbol: { type: 'string' }, amount: CANONICAL_AMOUNT, rawAmount: { type: 'string', pattern: '^\\d+$' }, to: ADDRESS,
        blockNumber: { type: 'integer', minimum: 1 }, confirmations: { type: 'integer', minimum: 1 },
      },
    },
    chain: {
      type: 'object',
      additionalProperties: false,
      required: ['known', 'mined', 'succeeded', 'blockNumber', 'blockHash', 'head', 'confirmations', 'transfers'],
      properties: {
        known: { type: 'boolean' }, mined: { type: 'boolean' }, succeeded: { type: ['boolean', 'null'] }, blockNumber: NULLABLE_INT,
        blockHash: { anyOf: [{ type: 'string', pattern: '^0x[0-9a-f]{64}$' }, { type: 'null' }] }, head: { type: 'integer', minimum: 0 },
        confirmations: { type: 'integer', minimum: 0 },
        transfers: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['token', 'to', 'rawAmount', 'amount'],
            properties: { token: ADDRESS, to: ADDRESS, rawAmount: { type: 'string', pattern: '^\\d+$' }, amount: { anyOf: [CANONICAL_AMOUNT, { type: 'null' }] } },
          },
        },
      },
    },
  },
};

// The extensions' answers (decisions §12): the ledger's own records, as the CLI prints them with --json.
const NULLABLE_STRING = { type: ['string', 'null'] };
const NULLABLE_TIME = { anyOf: [{ type: 'integer' }, { type: 'null' }] };
const ORDER_DETAIL = {
  type: 'object',
  required: [...ORDER.required, 'mchId', 'asset', 'memo', 'notifyUrl', 'redirectUrl', 'logo', 'paidAmount', 'refundedAmount', 'paidAt', 'late', 'createdAt', 'payments'],
  properties: {
    ...ORDER.properties,
    mchId: { type: 'string' }, asset: { type: 'string' }, memo: NULLABLE_STRING, notifyUrl: NULLABLE_STRING, redirectUrl: NULLABLE_STRING, logo: NULLABLE_STRING,
    paidAmount: CANONICAL_AMOUNT, refundedAmount: CANONICAL_AMOUNT, paidAt: NULLABLE_TIME, late: { type: 'boolean' }, createdAt: { type: 'integer' },
    payments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['txHash', 'amount', 'chainType', 'chainId', 'token', 'late', 'source', 'createdAt'],
        properties: {
          txHash: { type: 'string', pattern: TX_HASH_PATTERN }, amount: CANONICAL_AMOUNT, chainType: { anyOf: [{ type: 'string', enum: ['EVM', 'TRON'] }, { type: 'null' }] },
          chainId: NULLABLE_STRING, token: NULLABLE_STRING, late: { type: 'boolean' }, source: { type: 'string', enum: ['manual', 'chain'] }, createdAt: { type: 'integer' },
        },
      },
    },
  },
};
const ORDER_SHOW = {
  ...ORDER_DETAIL,
  required: [...ORDER_DETAIL.required, 'onChain'],
  properties: {
    ...ORDER_DETAIL.properties,
    onChain: {
      type: 'array',
      description: 'payments as the chain watcher saw them: seen (k of n confirmations), counted, held, returned or refused',
      items: {
        type: 'object',
        required: ['chainId', 'txHash', 'logIndex', 'blockNumber', 'token', 'amount', 'rawAmount', 'status', 'confirmations', 'required', 'blockTime'],
        properties: {
          chainId: { type: 'string' }, txHash: { type: 'string', pattern: TX_HASH_PATTERN }, logIndex: { type: 'integer', minimum: 0 }, blockNumber: { type: 'integer', minimum: 0 },
          token: ADDRESS, amount: CANONICAL_AMOUNT, rawAmount: { type: 'string', pattern: '^\\d+$' }, status: { type: 'string', enum: ['seen', 'counted', 'held', 'returned', 'refused'] },
          confirmations: { type: 'integer', minimum: 0 }, required: { type: 'integer', minimum: 0 },
          blockTime: { type: ['integer', 'null'], description: "when it arrived on chain: its block's timestamp, ms (null: seen before the ledger kept it)" },
        },
      },
    },
  },
};
/** The extension reads' withdrawal: the record with the asset its amount is in. */
const LISTED_WITHDRAWAL = {
  ...WITHDRAWAL,
  required: [...WITHDRAWAL.required, 'asset'],
  properties: { ...WITHDRAWAL.properties, asset: { type: 'string', description: 'the asset the amount is in, as an order\'s asset' } },
};
const WITHDRAWAL_DETAIL = {
  ...LISTED_WITHDRAWAL,
  required: [...LISTED_WITHDRAWAL.required, 'mchId', 'verification', 'verificationNote'],
  properties: {
    ...LISTED_WITHDRAWAL.properties,
    mchId: { type: 'string' },
    verification: { anyOf: [{ type: 'string', enum: ['confirming', 'verified', 'unverified'] }, { type: 'null' }] },
    verificationNote: NULLABLE_STRING,
  },
};
const REFUND_VIEW = {
  ...REFUND,
  required: ['refundId', 'mchId', ...REFUND.required],
  properties: { refundId: { type: 'string', pattern: '^rf_[A-Za-z0-9_-]+$' }, mchId: { type: 'string' }, ...REFUND.properties },
};
const HELD = {
  type: 'object',
  required: ['orderId', 'oid', 'uid', 'mchId', 'chainId', 'txHash', 'logIndex', 'blockNumber', 'token', 'amount', 'asset', 'rawAmount', 'expiredAt', 'heldAt'],
  properties: {
    orderId: ORDER_ID, oid: { type: 'string' }, uid: { type: 'string' }, mchId: { type: 'string' }, chainId: { type: 'string' }, txHash: { type: 'string', pattern: TX_HASH_PATTERN },
    logIndex: { type: 'integer', minimum: 0 }, blockNumber: { type: 'integer', minimum: 0 }, token: ADDRESS, amount: CANONICAL_AMOUNT, asset: { type: 'string' },
    rawAmount: { type: 'string', pattern: '^\\d+$' }, expiredAt: { type: 'integer' }, heldAt: NULLABLE_TIME,
  },
};
const BALANCE = {
  type: 'object',
  required: ['mchId', 'uid', 'asset', 'available', 'held'],
  properties: { mchId: { type: 'string' }, uid: { type: 'string' }, asset: { type: 'string' }, available: CANONICAL_AMOUNT, held: CANONICAL_AMOUNT },
};
const AUDIT_ENTRY = {
  type: 'object',
  required: ['id', 'at', 'actor', 'action', 'mchId', 'subject', 'detail'],
  properties: {
    id: { type: 'integer' }, at: { type: 'integer' }, actor: { type: 'string', description: 'api:<mchId> for a signed request, else the operator or chain:<chainId>' },
    action: { type: 'string' }, mchId: NULLABLE_STRING, subject: { type: 'string', description: 'type:id, such as order:ord_…' }, detail: { type: 'object' },
  },
};
const CALLBACK = {
  type: 'object',
  required: ['id', 'eventId', 'mchId', 'event', 'subject', 'url', 'status', 'attempts', 'nextAttemptAt', 'lastStatus', 'lastError', 'createdAt', 'deliveredAt'],
  properties: {
    id: { type: 'string' }, eventId: { type: 'string' }, mchId: { type: 'string' },
    event: { type: 'string', enum: ['order.paid', 'order.expired', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected'] },
    subject: { type: 'string' }, url: { type: 'string', description: 'the notifyUrl, a password in it shown as ***' }, status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer', minimum: 0 }, nextAttemptAt: NULLABLE_TIME, lastStatus: NULLABLE_TIME, lastError: NULLABLE_STRING, createdAt: { type: 'integer' }, deliveredAt: NULLABLE_TIME,
  },
};
const CALLBACK_SHOW = {
  ...CALLBACK,
  required: [...CALLBACK.required, 'payload', 'history'],
  properties: {
    ...CALLBACK.properties,
    payload: { type: 'object', description: 'the event as it is sent, before mchId, timestamp, nonce and sign are added' },
    history: {
      type: 'array',
      items: {
        type: 'object',
        required: ['at', 'statusCode', 'latencyMs', 'error', 'by'],
        properties: { at: { type: 'integer' }, statusCode: NULLABLE_TIME, latencyMs: { type: 'integer', minimum: 0 }, error: NULLABLE_STRING, by: { const: 'service' } },
      },
    },
  },
};
const listOf = (item: Json) => ({ type: 'array', maxItems: 1000, items: item });
/** A list endpoint answers its array, or with "page": true in the body the page. */
const listOrPage = (item: Json) => ({
  anyOf: [
    listOf(item),
    {
      type: 'object',
      description: 'with "page": true: the rows, how many match in all, how many come before this page, and the cursor of the next page (null on the last)',
      required: ['items', 'total', 'before', 'next'],
      properties: { items: listOf(item), total: { type: 'integer', minimum: 0 }, before: { type: 'integer', minimum: 0 }, next: NULLABLE_STRING },
    },
  ],
});
const MATCHED_BY = { type: 'array', items: { type: 'string', enum: ['id', 'oid', 'uid', 'txHash', 'address'] } };
const FIND = {
  type: 'object',
  required: ['orders', 'withdrawals', 'more'],
  properties: {
    orders: listOf({ ...ORDER_DETAIL, required: [...ORDER_DETAIL.required, 'matchedBy'], properties: { ...ORDER_DETAIL.properties, matchedBy: MATCHED_BY } }),
    withdrawals: listOf({ ...LISTED_WITHDRAWAL, required: [...LISTED_WITHDRAWAL.required, 'mchId', 'matchedBy'], properties: { ...LISTED_WITHDRAWAL.properties, mchId: { type: 'string' }, matchedBy: MATCHED_BY } }),
    more: { type: 'boolean', description: 'more orders match than were answered' },
  },
};
const LOG_FOLLOW = {
  type: 'object',
  required: ['entries', 'mark'],
  properties: {
    entries: listOf(AUDIT_ENTRY),
    mark: { type: 'integer', minimum: 0, description: 'ask next with "after": mark; every entry up to it has been answered' },
  },
};
const TOTALS = { type: 'object', description: 'amounts (canonical decimals) by asset', additionalProperties: CANONICAL_AMOUNT };
const TALLY = { type: 'object', required: ['count', 'total'], properties: { count: { type: 'integer', minimum: 0 }, total: TOTALS } };
const PERIOD = { type: 'object', required: ['since', 'payments', 'refunds', 'withdrawals'], properties: { since: { type: 'integer' }, payments: TALLY, refunds: TALLY, withdrawals: TALLY } };
const NULLABLE_COUNT = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] };
const SUMMARY = {
  type: 'object',
  required: ['at', 'mchId', 'pendingWithdrawals', 'today', 'week', 'balances', 'heldPayments', 'refusedPayments', 'chains', 'failedCallbacks'],
  properties: {
    at: { type: 'integer' },
    mchId: NULLABLE_STRING,
    pendingWithdrawals: { ...TALLY, required: [...TALLY.required, 'confirming'], properties: { ...TALLY.properties, confirming: { type: 'integer', minimum: 0 } } },
    today: PERIOD,
    week: PERIOD,
    balances: { type: 'object', required: ['available', 'held'], properties: { available: TOTALS, held: TOTALS } },
    heldPayments: TALLY,
    refusedPayments: {
      ...TALLY,
      required: [...TALLY.required, 'orders'],
      properties: { ...TALLY.properties, orders: { type: 'array', maxItems: REFUSED_ORDERS_LISTED, items: { type: 'string' }, description: `their orders (up to ${REFUSED_ORDERS_LISTED})` } },
      description: 'payments seen on chain that the ledger refused (their transaction already confirms a withdrawal) and no operator has decided yet: on chain, in no balance',
    },
    chains: listOf({
      type: 'object',
      required: ['chainId', 'name', 'head', 'scannedTo', 'lag', 'headAt', 'lastError', 'deepReorg'],
      properties: {
        chainId: { type: 'string' }, name: NULLABLE_STRING, head: NULLABLE_COUNT, scannedTo: NULLABLE_COUNT, lag: NULLABLE_COUNT, headAt: NULLABLE_TIME, lastError: NULLABLE_STRING, deepReorg: NULLABLE_STRING,
      },
    }),
    failedCallbacks: { type: 'integer', minimum: 0 },
  },
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
const CHAIN_LIMIT = "rate limited: verify and confirm share the merchant's limit per minute, counted apart from create order's";

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
      '/api/v1/withdraw/reject': signedPost('Reject a pending withdrawal (releases the hold)', withdrawRejectSchema, WITHDRAWAL),
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
      '/api/v1/summary': signedPost(`${EXT}The merchant's ledger at a glance: pending withdrawals, payments, refunds and withdrawals today and this week (UTC), balances, held payments, the chains' lag, failed callbacks`, withOp('summary', summarySchema), SUMMARY),
      '/api/v1/callbacks/list': signedPost(`${EXT}Callbacks to the merchant's notifyUrls, newest first`, withOp('callbacks/list', callbackListSchema), listOrPage(CALLBACK)),
      '/api/v1/callbacks/show': signedPost(`${EXT}One callback with the event it carries and every attempt (the sending process shown as "service")`, withOp('callbacks/show', callbackShowSchema), CALLBACK_SHOW),
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
