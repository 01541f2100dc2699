/**
 * The callbacks of decisions §9 as OpenAPI 3.1 `webhooks`: what the service POSTs to a
 * merchant's notifyUrl. Fields may be added later (additionalProperties stays open); the
 * signature covers every top-level field but `sign`, as for requests.
 */
type Json = Record<string, unknown>;

const str: Json = { type: 'string' };
const strOrNull: Json = { type: ['string', 'null'] };
const amount: Json = { type: 'string', pattern: '^(?:0|[1-9]\\d*)(?:\\.\\d*[1-9])?$', description: 'canonical decimal, base units of the asset' };
const millis: Json = { type: 'integer', minimum: 0 };

const COMMON: Record<string, Json> = {
  eventId: { type: 'string', pattern: '^evt_[A-Za-z0-9_-]{16,}$', description: 'the same on every attempt of this event: drop duplicates by it' },
  mchId: str,
  timestamp: { ...millis, description: 'when this attempt was signed' },
  nonce: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$', description: 'new on every attempt' },
  sign: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 by the request rule, with the merchant secret' },
  test: { const: true, description: 'only on samples sent by `cryptopay callbacks test`' },
};

const ORDER: Record<string, Json> = { id: str, oid: str, uid: str, amount, paidAmount: amount, asset: str };

const WITHDRAWAL: Record<string, Json> = {
  id: str, uid: str, amount, to: str, chainId: str, chainType: { enum: ['EVM', 'TRON'] }, token: str,
  txHash: strOrNull, blockNumber: { type: ['integer', 'null'] }, remark: strOrNull, createdAt: millis, updatedAt: millis,
};

function event(name: string, summary: string, fields: Record<string, Json>): Json {
  const properties = { event: { const: name }, ...COMMON, ...fields };
  return {
    post: {
      summary,
      description: 'Answer any 2xx within 10 s to acknowledge; anything else is retried (15s, 1m, 5m, 15m, 1h, 3h, 6h, 12h, 24h, each ±10%), then marked failed. Redirects are not followed.',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: Object.keys(properties).filter((k) => k !== 'test'), properties },
          },
        },
      },
      responses: { '2XX': { description: 'acknowledged' } },
    },
  };
}

export function callbackWebhooks(): Json {
  return {
    'order.paid': event('order.paid', 'The order became PAID', {
      ...ORDER, status: { enum: ['PAID', 'REFUNDED'] }, late: { type: 'boolean' }, paidAt: millis,
      txHash: str, chainType: { enum: ['EVM', 'TRON', null] }, chainId: strOrNull, token: strOrNull,
    }),
    'order.expired': event('order.expired', 'An unpaid order passed its expiredAt', { ...ORDER, status: { const: 'EXPIRED' }, expiredAt: millis }),
    'order.refunded': event('order.refunded', 'A refund of the order', {
      ...ORDER, orderAmount: amount, refundId: str, refundedAmount: amount, status: { enum: ['PAID', 'REFUNDED'] }, remark: str, refundTime: millis,
    }),
    'withdraw.confirmed': event('withdraw.confirmed', 'The withdrawal was confirmed', { ...WITHDRAWAL, status: { const: 'CONFIRMED' } }),
    'withdraw.rejected': event('withdraw.rejected', 'The withdrawal was rejected', { ...WITHDRAWAL, status: { const: 'REJECTED' } }),
  };
}
