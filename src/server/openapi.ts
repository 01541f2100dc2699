import { z } from 'zod';
import {
  authFields,
  createOrderSchema,
  refundSchema,
  withdrawApplySchema,
  withdrawConfirmSchema,
  withdrawRejectSchema,
} from '../core/schemas.js';

/**
 * OpenAPI 3.1 from the very zod schemas the server validates with, so the document cannot drift
 * from the behaviour. Built once, on first request.
 */
let cached: Record<string, unknown> | undefined;

const schema = (s: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const envelope = (data: Record<string, unknown>) => ({
  type: 'object',
  required: ['code', 'msg', 'data', 'systemTime'],
  properties: {
    code: { type: 'integer', enum: [0, 1], description: '1 success, 0 error' },
    msg: { type: 'string' },
    data,
    systemTime: { type: 'integer', description: 'server time, milliseconds' },
  },
});

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const ADDRESSES = {
  type: 'object',
  properties: { EVM: { type: 'string', description: 'EIP-55 address' }, TRON: { type: 'string', description: 'base58check T… address' } },
};
const ORDER = {
  type: 'object',
  required: ['id', 'oid', 'uid', 'amount', 'status', 'expiredAt', 'addresses'],
  properties: {
    id: { type: 'string' },
    oid: { type: 'string' },
    uid: { type: 'string' },
    amount: { type: 'string', description: 'canonical decimal' },
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
  required: ['status', 'amount', 'paidAmount', 'dueAmount', 'asset', 'expiredAt'],
  properties: {
    status: { type: 'string', enum: ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'] },
    amount: { type: 'string', description: 'canonical decimal' },
    paidAmount: { type: 'string', description: 'what has arrived so far' },
    dueAmount: { type: 'string', description: 'what is still due; "0" once paid' },
    asset: { type: 'string' },
    expiredAt: { type: 'integer' },
  },
};
const REFUND = {
  type: 'object',
  required: ['id', 'oid', 'amount', 'status', 'remark', 'refundTime'],
  properties: {
    id: { type: 'string' },
    oid: { type: 'string' },
    amount: { type: 'string' },
    status: { type: 'string', enum: ['REFUNDED'] },
    remark: { type: 'string' },
    refundTime: { type: 'integer' },
  },
};
const WITHDRAWAL = {
  type: 'object',
  required: ['id', 'uid', 'amount', 'to', 'chainId', 'chainType', 'token', 'status', 'txHash', 'blockNumber', 'remark', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    uid: { type: 'string' },
    amount: { type: 'string' },
    to: { type: 'string' },
    chainId: { type: 'string' },
    chainType: { type: 'string', enum: ['EVM', 'TRON'] },
    token: { type: 'string' },
    status: { type: 'string', enum: ['PENDING', 'CONFIRMED', 'REJECTED'] },
    txHash: { type: ['string', 'null'] },
    blockNumber: { type: ['integer', 'null'] },
    remark: { type: ['string', 'null'] },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
  },
};

function signedPost(summary: string, body: z.ZodObject, data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    post: {
      summary,
      requestBody: { required: true, content: { 'application/json': { schema: schema(body.extend(authFields)) } } },
      responses: {
        200: { description: 'success', content: { 'application/json': { schema: envelope(data) } } },
        400: errorResponse('malformed or invalid input; msg says which field'),
        401: errorResponse('signature, timestamp or nonce refused'),
        404: errorResponse('not found (also another merchant’s id)'),
        409: errorResponse('the current state forbids it (not Paid, not pending, duplicate)'),
        413: errorResponse('body over 64 KiB'),
        ...extra,
      },
    },
  };
}

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
      '/api/v1/order': signedPost('Create a payment order', createOrderSchema.extend({ mchId: z.string().min(1).max(64) }), CREATED_ORDER, {
        429: errorResponse('rate limited; see Retry-After'),
      }),
      '/api/v1/address/{id}': {
        get: {
          summary: "An order's payment addresses",
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'success', content: { 'application/json': { schema: envelope(ADDRESSES) } } }, 404: errorResponse('msg "Not found"') },
        },
      },
      '/api/v1/order/{id}/status': {
        get: {
          summary: "An order's status",
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            200: { description: 'success', content: { 'application/json': { schema: envelope({ type: 'string', enum: ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'] }) } } },
            404: errorResponse('msg "Order not found"'),
          },
        },
      },
      '/api/v1/refund': signedPost('Refund a paid order, in full or in part', refundSchema, REFUND),
      '/api/v1/withdraw/apply': signedPost('Apply for a withdrawal (holds the amount)', withdrawApplySchema, WITHDRAWAL),
      '/api/v1/withdraw/confirm': signedPost('Confirm a pending withdrawal with its transaction', withdrawConfirmSchema, WITHDRAWAL),
      '/api/v1/withdraw/reject': signedPost('Reject a pending withdrawal (releases the hold)', withdrawRejectSchema, WITHDRAWAL),
      '/pay/{id}': {
        get: {
          summary: 'The payment page of an order (HTML; no signature: the unguessable id is the capability)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            200: { description: 'the page, with a strict Content-Security-Policy', content: { 'text/html': { schema: { type: 'string' } } } },
            404: { description: 'a plain HTML page: no such order', content: { 'text/html': { schema: { type: 'string' } } } },
          },
        },
      },
      '/pay/{id}/state': {
        get: {
          summary: 'What the payment page polls: status, what arrived, what is still due',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'success', content: { 'application/json': { schema: envelope(PAY_STATE) } } }, 404: errorResponse('msg "Order not found"') },
        },
      },
      '/healthz': { get: { summary: 'Liveness and ledger check', responses: { 200: { description: 'ok' } } } },
    },
    components: {
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['code', 'msg', 'data', 'systemTime'],
          properties: { code: { const: 0 }, msg: { type: 'string' }, data: { type: 'null' }, systemTime: { type: 'integer' } },
        },
      },
    },
  };
  return cached;
}
