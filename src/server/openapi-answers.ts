import { PAYOUT_CLOCK_SKEW_MS, REFUSED_ORDERS_LISTED } from '../core/types.js';
import { ADDRESS, EVM_ADDRESS_PATTERN, type Json, TRON_ADDRESS_PATTERN, TX_HASH_PATTERN } from './openapi-request.js';

/**
 * The shapes of the service's answers in the OpenAPI document (src/server/openapi.ts): the
 * records of the interface and of the extensions, each as the `data` of a success envelope.
 */
const CANONICAL_AMOUNT = { type: 'string', pattern: '^(?:0|[1-9]\\d*)(?:\\.\\d*[1-9])?$', description: 'canonical decimal' };
const ORDER_ID = { type: 'string', pattern: '^ord_[A-Za-z0-9_-]+$' };
export const ADDRESSES = {
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
export const CREATED_ORDER = {
  ...ORDER,
  required: [...ORDER.required, 'payUrl'],
  properties: { ...ORDER.properties, payUrl: { type: 'string', format: 'uri', description: 'absolute address of the payment page GET /pay/{id}' } },
};
export const PAY_STATE = {
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
export const REFUND = {
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
export const WITHDRAWAL = {
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
export const VERIFICATION = {
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
      required: ['token', 'tokenSymbol', 'amount', 'rawAmount', 'to', 'blockNumber', 'confirmations', 'requestedAt', 'payoutWallets'],
      properties: {
        token: ADDRESS, tokenSymbol: { type: 'string' }, amount: CANONICAL_AMOUNT, rawAmount: { type: 'string', pattern: '^\\d+$' }, to: ADDRESS,
        blockNumber: { type: 'integer', minimum: 1 }, confirmations: { type: 'integer', minimum: 1 },
        requestedAt: { type: 'integer', minimum: 0, description: `when the withdrawal was requested (ms); a transaction mined more than ${PAYOUT_CLOCK_SKEW_MS / 60_000} minutes before it cannot pay it` },
        payoutWallets: { type: 'array', items: ADDRESS, description: "the merchant's payout wallets on this chain type; when any, the tokens must move from one of them" },
      },
    },
    chain: {
      type: 'object',
      additionalProperties: false,
      required: ['known', 'mined', 'succeeded', 'blockNumber', 'blockHash', 'blockTime', 'head', 'confirmations', 'transfers'],
      properties: {
        known: { type: 'boolean' }, mined: { type: 'boolean' }, succeeded: { type: ['boolean', 'null'] }, blockNumber: NULLABLE_INT,
        blockHash: { anyOf: [{ type: 'string', pattern: '^0x[0-9a-f]{64}$' }, { type: 'null' }] }, blockTime: { ...NULLABLE_INT, description: "the block's timestamp (ms); null when not mined" },
        head: { type: 'integer', minimum: 0 },
        confirmations: { type: 'integer', minimum: 0 },
        transfers: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['token', 'from', 'to', 'rawAmount', 'amount'],
            properties: { token: ADDRESS, from: ADDRESS, to: ADDRESS, rawAmount: { type: 'string', pattern: '^\\d+$' }, amount: { anyOf: [CANONICAL_AMOUNT, { type: 'null' }] } },
          },
        },
      },
    },
  },
};

// The extensions' answers (decisions §12): the ledger's own records, as the CLI prints them with --json.
const NULLABLE_STRING = { type: ['string', 'null'] };
const NULLABLE_TIME = { anyOf: [{ type: 'integer' }, { type: 'null' }] };
export const ORDER_DETAIL = {
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
export const ORDER_SHOW = {
  ...ORDER_DETAIL,
  required: [...ORDER_DETAIL.required, 'onChain'],
  properties: {
    ...ORDER_DETAIL.properties,
    onChain: {
      type: 'array',
      description: 'payments as the chain watcher saw them: seen (k of n confirmations), counted, held, returned or refused',
      items: {
        type: 'object',
        required: ['chainId', 'txHash', 'logIndex', 'blockNumber', 'token', 'amount', 'rawAmount', 'status', 'confirmations', 'required', 'blockTime', 'from'],
        properties: {
          chainId: { type: 'string' }, txHash: { type: 'string', pattern: TX_HASH_PATTERN }, logIndex: { type: 'integer', minimum: 0 }, blockNumber: { type: 'integer', minimum: 0 },
          token: ADDRESS, amount: CANONICAL_AMOUNT, rawAmount: { type: 'string', pattern: '^\\d+$' }, status: { type: 'string', enum: ['seen', 'counted', 'held', 'returned', 'refused'] },
          confirmations: { type: 'integer', minimum: 0 }, required: { type: 'integer', minimum: 0 },
          blockTime: { type: ['integer', 'null'], description: "when it arrived on chain: its block's timestamp, ms (null: seen before the ledger kept it)" },
          from: { type: ['string', 'null'], description: "who paid: whose tokens the transfer moved (the payer's wallet, or the exchange it paid from); null: seen before the ledger kept it" },
        },
      },
    },
  },
};
/** The extension reads' withdrawal: the record with the asset its amount is in and whose it is. */
export const LISTED_WITHDRAWAL = {
  ...WITHDRAWAL,
  required: [...WITHDRAWAL.required, 'asset', 'mchId'],
  properties: { ...WITHDRAWAL.properties, asset: { type: 'string', description: 'the asset the amount is in, as an order\'s asset' }, mchId: { type: 'string' } },
};
export const WITHDRAWAL_DETAIL = {
  ...LISTED_WITHDRAWAL,
  required: [...LISTED_WITHDRAWAL.required, 'verification', 'verificationNote'],
  properties: {
    ...LISTED_WITHDRAWAL.properties,
    verification: { anyOf: [{ type: 'string', enum: ['confirming', 'verified', 'unverified'] }, { type: 'null' }] },
    verificationNote: NULLABLE_STRING,
  },
};
export const REFUND_VIEW = {
  ...REFUND,
  required: ['refundId', 'mchId', ...REFUND.required],
  properties: { refundId: { type: 'string', pattern: '^rf_[A-Za-z0-9_-]+$' }, mchId: { type: 'string' }, ...REFUND.properties },
};
export const HELD = {
  type: 'object',
  required: ['orderId', 'oid', 'uid', 'mchId', 'chainId', 'txHash', 'logIndex', 'blockNumber', 'token', 'amount', 'asset', 'rawAmount', 'expiredAt', 'heldAt'],
  properties: {
    orderId: ORDER_ID, oid: { type: 'string' }, uid: { type: 'string' }, mchId: { type: 'string' }, chainId: { type: 'string' }, txHash: { type: 'string', pattern: TX_HASH_PATTERN },
    logIndex: { type: 'integer', minimum: 0 }, blockNumber: { type: 'integer', minimum: 0 }, token: ADDRESS, amount: CANONICAL_AMOUNT, asset: { type: 'string' },
    rawAmount: { type: 'string', pattern: '^\\d+$' }, expiredAt: { type: 'integer' }, heldAt: NULLABLE_TIME,
  },
};
export const BALANCE = {
  type: 'object',
  required: ['mchId', 'uid', 'asset', 'available', 'held'],
  properties: { mchId: { type: 'string' }, uid: { type: 'string' }, asset: { type: 'string' }, available: CANONICAL_AMOUNT, held: CANONICAL_AMOUNT },
};
export const AUDIT_ENTRY = {
  type: 'object',
  required: ['id', 'at', 'actor', 'action', 'mchId', 'subject', 'detail'],
  properties: {
    id: { type: 'integer', description: "the entry's number in the signing merchant's own log: 1, 2, 3 ... in commit order" }, at: { type: 'integer' },
    actor: { type: 'string', description: 'api:<mchId> for a signed request, chain:<chainId> for what a chain watcher recorded, operator for anything an operator did' },
    action: { type: 'string' }, mchId: NULLABLE_STRING, subject: { type: 'string', description: 'type:id, such as order:ord_…' }, detail: { type: 'object' },
  },
};
export const CALLBACK = {
  type: 'object',
  required: ['id', 'eventId', 'mchId', 'event', 'subject', 'url', 'status', 'attempts', 'nextAttemptAt', 'lastStatus', 'lastError', 'createdAt', 'deliveredAt'],
  properties: {
    id: { type: 'string' }, eventId: { type: 'string' }, mchId: { type: 'string' },
    event: { type: 'string', enum: ['order.paid', 'order.expired', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected'] },
    subject: { type: 'string' }, url: { type: 'string', description: 'the notifyUrl, a password in it shown as ***' }, status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer', minimum: 0 }, nextAttemptAt: NULLABLE_TIME, lastStatus: NULLABLE_TIME, lastError: NULLABLE_STRING, createdAt: { type: 'integer' }, deliveredAt: NULLABLE_TIME,
  },
};
export const CALLBACK_SHOW = {
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
export const listOf = (item: Json) => ({ type: 'array', maxItems: 1000, items: item });
/** A list endpoint answers its array, or with "page": true in the body the page. */
export const listOrPage = (item: Json) => ({
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
const MATCHED_BY = { type: 'array', items: { type: 'string', enum: ['id', 'oid', 'uid', 'txHash', 'address', 'payer', 'refund'] } };
export const FIND = {
  type: 'object',
  required: ['orders', 'withdrawals', 'more'],
  properties: {
    orders: listOf({ ...ORDER_DETAIL, required: [...ORDER_DETAIL.required, 'matchedBy'], properties: { ...ORDER_DETAIL.properties, matchedBy: MATCHED_BY } }),
    withdrawals: listOf({ ...LISTED_WITHDRAWAL, required: [...LISTED_WITHDRAWAL.required, 'matchedBy'], properties: { ...LISTED_WITHDRAWAL.properties, matchedBy: MATCHED_BY } }),
    more: { type: 'boolean', description: 'more orders match than were answered' },
  },
};
export const LOG_FOLLOW = {
  type: 'object',
  required: ['entries', 'mark'],
  properties: {
    entries: listOf(AUDIT_ENTRY),
    mark: { type: 'integer', minimum: 0, description: 'ask next with "after": mark; every entry up to it has been answered' },
  },
};
const TOTALS = { type: 'object', description: 'amounts (canonical decimals) by asset', additionalProperties: CANONICAL_AMOUNT };
const TALLY = { type: 'object', required: ['count', 'total'], properties: { count: { type: 'integer', minimum: 0 }, total: TOTALS } };
const ADJUSTED = {
  type: 'object',
  description: "an operator's balance adjustments of the period (balance adjust, a refused payment credited by hand): with them the period's figures add up to what users hold",
  required: ['count', 'credited', 'debited'],
  properties: { count: { type: 'integer', minimum: 0 }, credited: TOTALS, debited: TOTALS },
};
const PERIOD = {
  type: 'object',
  required: ['since', 'payments', 'refunds', 'withdrawals', 'adjustments'],
  properties: { since: { type: 'integer' }, payments: TALLY, refunds: TALLY, withdrawals: TALLY, adjustments: ADJUSTED },
};
const NULLABLE_COUNT = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] };
export const SUMMARY = {
  type: 'object',
  required: ['at', 'mchId', 'pendingWithdrawals', 'today', 'week', 'balances', 'heldPayments', 'refusedPayments', 'chains', 'failedCallbacks', 'retryingCallbacks'],
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
    retryingCallbacks: {
      type: 'object', additionalProperties: false, required: ['count', 'since'],
      description: 'callbacks still retried after a failed attempt, and when the oldest was made',
      properties: { count: { type: 'integer', minimum: 0 }, since: NULLABLE_TIME },
    },
  },
};

export const KNOWN_CHAINS = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    required: ['chainId', 'chainType', 'name', 'confirmations', 'development', 'tokens'],
    additionalProperties: false,
    properties: {
      chainId: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
      chainType: { type: 'string', enum: ['EVM', 'TRON'] },
      name: { type: 'string', minLength: 1 },
      confirmations: { type: 'integer', minimum: 1, description: 'blocks a payment waits for before it counts' },
      development: { type: 'boolean', description: 'a local chain whose test token anyone can mint (serve --dev); it pays only the public test wallet’s merchant' },
      tokens: {
        type: 'array',
        items: {
          type: 'object',
          required: ['address', 'symbol', 'asset', 'decimals'],
          additionalProperties: false,
          properties: { address: ADDRESS, symbol: { type: 'string' }, asset: { type: 'string', description: 'the ledger asset its amounts are booked in' }, decimals: { type: 'integer', minimum: 0 } },
        },
      },
    },
  },
};
