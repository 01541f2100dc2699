import { base58check, evmAddressOf } from '../chains/encode.js';
import { REFUSED_ORDERS_LISTED } from '../core/types.js';
import { isTxHash } from '../chains/tx-hash.js';
import { z } from 'zod';
import { withArticle } from '../core/words.js';

/**
 * What a remote answers, checked at the edge like every other input. A remote is not trusted
 * to be right (issue #10 item 5): every address, hash, amount, id and time in its data must be
 * well-formed before anything of it is printed, because a user pays to the address this prints.
 * Free text (oid, uid, remark, msg) is not refused but made printable (see text.ts).
 */
export const envelopeSchema = z.object({
  code: z.union([z.literal(0), z.literal(1)]),
  msg: z.string(),
  data: z.unknown(),
  systemTime: z.number(),
});

const chainType = z.enum(['EVM', 'TRON']);
const orderStatus = z.enum(['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED']);

/** Ids the service makes: a prefix and base64url (decisions.md), never anything to escape. */
const id = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, 'not an id of the service');
/** Canonical and positive (decisions §2): no sign, exponent, leading or trailing zeros. */
const amount = z
  .string()
  .regex(/^(0|[1-9]\d{0,12})(\.\d{0,17}[1-9])?$/, 'not a canonical decimal amount')
  .refine((s) => /[1-9]/.test(s), 'not a positive amount');
const millis = z.number().int('not whole milliseconds').min(0, 'not a time');
const chainId = z.string().regex(/^[1-9]\d{0,19}$/, 'not a chain id');
const text = z.string().max(4096, 'longer than any field of the service');

/** EIP-55 exactly as the service writes it: the checksum guards against a corrupted digit. */
export function isChecksummedEvmAddress(s: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(s) && evmAddressOf(Buffer.from(s.slice(2), 'hex')) === s;
}

export function isTronAddress(s: string): boolean {
  if (s.length < 25 || s.length > 40) return false;
  try {
    const payload = base58check.decode(s);
    return payload.length === 21 && payload[0] === 0x41;
  } catch {
    return false;
  }
}

const evmAddress = z.string().refine(isChecksummedEvmAddress, 'not an EVM address with its EIP-55 checksum');
const tronAddress = z.string().refine(isTronAddress, 'not a TRON address: base58check with the 0x41 prefix');
const addressOn = (chain: 'EVM' | 'TRON', s: string) => (chain === 'EVM' ? isChecksummedEvmAddress(s) : isTronAddress(s));

const addresses = z.object({ EVM: evmAddress.optional(), TRON: tronAddress.optional() });

/** The payment page of this very order: the CLI prints it for a payer to open. */
function isPayUrlOf(url: string, orderId: string): boolean {
  if (url.length > 4096 || /[\u0000-\u0020\u007f-\u009f]/.test(url)) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.search && !u.hash && u.pathname.endsWith(`/pay/${orderId}`);
  } catch {
    return false;
  }
}

export const orderSchema = z
  .object({
    id,
    oid: text,
    uid: text,
    amount,
    status: orderStatus,
    expiredAt: millis,
    addresses,
    payUrl: z.string().optional(),
  })
  .superRefine((o, ctx) => {
    if (o.payUrl !== undefined && !isPayUrlOf(o.payUrl, o.id)) {
      ctx.addIssue({ code: 'custom', path: ['payUrl'], message: "not an http or https address of this order's payment page" });
    }
  });
export const addressesSchema = addresses;
export const statusSchema = orderStatus;
export const refundResultSchema = z.object({
  id,
  oid: text,
  amount,
  status: z.literal('REFUNDED'),
  remark: text,
  refundTime: millis,
});
const withdrawalStatus = z.enum(['PENDING', 'CONFIRMED', 'REJECTED']);
const withdrawalFields = {
  id,
  uid: text,
  amount,
  to: z.string(),
  chainId,
  chainType,
  token: z.string(),
  status: withdrawalStatus,
  txHash: z.string().nullable(),
  blockNumber: z.number().int('not a block number').positive('not a block number').nullable(),
  remark: text.nullable(),
  createdAt: millis,
  updatedAt: millis,
};

/**
 * The extension reads' withdrawal: the record with its asset and merchant. Both are optional
 * here: a server from before them answered without, which leaves this CLI to its own registry
 * (src/commands/withdraw/asset.ts) and a list without a merchant column, not to a refusal.
 */
const listedWithdrawalFields = { ...withdrawalFields, asset: text.optional(), mchId: text.optional() };

/** Which address and hash forms are right depends on the chain the record names. */
function checkWithdrawal(w: { chainType: 'EVM' | 'TRON'; to: string; token: string; txHash: string | null }, ctx: z.RefinementCtx): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const a = withArticle(w.chainType);
  if (!addressOn(w.chainType, w.to)) problem('to', `not ${a} address`);
  if (!addressOn(w.chainType, w.token)) problem('token', `not ${a} token contract address`);
  if (w.txHash !== null && !isTxHash(w.chainType, w.txHash.replace(w.chainType === 'TRON' ? /^0x/ : /^$/, ''))) {
    problem('txHash', `not ${a} transaction hash`);
  }
}

export const withdrawalSchema = z.object(withdrawalFields).superRefine(checkWithdrawal);

const anyAddress = z.string().refine((s) => isChecksummedEvmAddress(s) || isTronAddress(s), 'not an EVM or TRON address as the service writes it');
const decimal = z.string().regex(/^\d{1,80}(\.\d{1,80})?$/, 'not a decimal amount');
const units = z.string().regex(/^\d{1,80}$/, 'not a whole number of base units');
const block = z.number().int('not a block number').min(0, 'not a block number');

/** The verify extension's answer (src/core/types.ts VerificationReport). */
export const verificationReportSchema = z.object({
  id,
  status: z.enum(['PENDING', 'CONFIRMED', 'REJECTED']),
  verification: z.enum(['confirming', 'verified', 'unverified']).nullable(),
  txHash: z.string().refine((h) => isTxHash('EVM', h) || isTxHash('TRON', h), 'not a transaction hash'),
  blockNumber: block,
  matches: z.boolean(),
  deep: z.boolean(),
  verdict: z.enum(['match', 'mismatch', 'unknown', 'unmined']),
  message: text,
  expected: z.object({ token: anyAddress, tokenSymbol: text, amount: decimal, rawAmount: units, to: anyAddress, blockNumber: block, confirmations: block, requestedAt: millis.optional(), payoutWallets: z.array(anyAddress).max(1000).optional() }),
  chain: z.object({
    known: z.boolean(),
    mined: z.boolean(),
    succeeded: z.boolean().nullable(),
    blockNumber: block.nullable(),
    blockHash: z.string().regex(/^0x[0-9a-f]{64}$/, 'not a block hash').nullable(),
    blockTime: millis.max(8.64e15, 'not a time').nullable().optional(),
    head: block,
    confirmations: block,
    // Optional: a server from before they were answered (session 21) is still read.
    transfers: z.array(z.object({ token: anyAddress, from: anyAddress.optional(), to: anyAddress, rawAmount: units, amount: decimal.nullable() })).max(1000),
  }),
});

// ------------------------------------------------------------------ the extensions (decisions §12)
// Key order follows the ledger's own records: --json prints what the schema gives back, and it
// must read the same locally and remotely.

/** "0" is a balance or a total, never an amount of an operation. */
const total = z.string().regex(/^(0|[1-9]\d{0,18})(\.\d{0,17}[1-9])?$/, 'not a canonical decimal amount');
const txHashAny = z.string().refine((h) => isTxHash('EVM', h) || isTxHash('TRON', h), 'not a transaction hash');
const count = z.number().int('not a whole number').min(0, 'not a whole number');
const list = <T extends z.ZodType>(item: T) => z.array(item).max(1000, 'more rows than any list of the service');
/** A list answered with `page: true`: the rows, how many match in all, how many come before, the next cursor. */
const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: list(item), total: count, before: count, next: id.nullable() });

export const merchantIdentitySchema = z.object({ mchId: text, name: text, asset: text });

/** The service's chains and tokens: checked here, then again by the registry the CLI builds of them. */
export const knownChainsSchema = z
  .array(
    z.object({
      chainId,
      chainType,
      name: z.string().min(1).max(64),
      confirmations: z.number().int().min(1).max(100_000),
      development: z.boolean(),
      tokens: z.array(z.object({ address: anyAddress, symbol: z.string().min(1).max(32), asset: z.string().min(1).max(16), decimals: z.number().int().min(0).max(36) })).max(1000),
    }),
  )
  .max(1000, 'more chains than any service knows');

const paymentSchema = z.object({
  txHash: txHashAny,
  amount: total,
  chainType: chainType.nullable(),
  chainId: chainId.nullable(),
  token: anyAddress.nullable(),
  late: z.boolean(),
  source: z.enum(['manual', 'chain']),
  createdAt: millis,
});

const orderDetailFields = {
  id,
  oid: text,
  uid: text,
  amount,
  status: orderStatus,
  expiredAt: millis,
  addresses,
  mchId: text,
  asset: text,
  memo: text.nullable(),
  notifyUrl: text.nullable(),
  redirectUrl: text.nullable(),
  logo: text.nullable(),
  paidAmount: total,
  refundedAmount: total,
  paidAt: millis.nullable(),
  late: z.boolean(),
  createdAt: millis,
  payments: list(paymentSchema),
};
export const orderDetailSchema = z.object(orderDetailFields);
export const orderListSchema = list(orderDetailSchema);
export const orderPageSchema = pageOf(orderDetailSchema);

const matchedBy = list(z.enum(['id', 'oid', 'uid', 'txHash', 'address', 'payer', 'refund']));
export const findResultSchema = z.object({
  orders: list(z.object({ ...orderDetailFields, matchedBy })),
  withdrawals: list(z.object({ ...listedWithdrawalFields, mchId: text, matchedBy }).superRefine(checkWithdrawal)),
  more: z.boolean(),
});

const onChainSchema = z.object({
  chainId,
  txHash: txHashAny,
  logIndex: count,
  blockNumber: block,
  token: anyAddress,
  amount: total,
  rawAmount: units,
  status: z.enum(['seen', 'counted', 'held', 'returned', 'refused']),
  confirmations: count,
  required: count,
  // A server of an earlier release does not send it.
  blockTime: z.number().int().nonnegative().nullable().default(null),
  from: anyAddress.nullable().default(null),
});
export const orderShowSchema = z.object({ ...orderDetailFields, onChain: list(onChainSchema) });

export const heldListSchema = list(
  z.object({
    orderId: id,
    oid: text,
    uid: text,
    mchId: text,
    chainId,
    txHash: txHashAny,
    logIndex: count,
    blockNumber: block,
    token: anyAddress,
    amount: total,
    asset: text,
    rawAmount: units,
    expiredAt: millis,
    heldAt: millis.nullable(),
  }),
);

const listedWithdrawalSchema = z.object(listedWithdrawalFields).superRefine(checkWithdrawal);
export const withdrawalListSchema = list(listedWithdrawalSchema);
export const withdrawalPageSchema = pageOf(listedWithdrawalSchema);
export const withdrawalDetailSchema = z
  .object({
    ...listedWithdrawalFields,
    mchId: text,
    verification: z.enum(['confirming', 'verified', 'unverified']).nullable(),
    verificationNote: text.nullable(),
  })
  .superRefine(checkWithdrawal);

const refundView = z.object({ refundId: id, mchId: text, id, oid: text, amount, status: z.literal('REFUNDED'), remark: text, refundTime: millis });
export const refundListSchema = list(refundView);
export const refundPageSchema = pageOf(refundView);

export const balanceSchema = z.object({ mchId: text, uid: text, asset: text, available: total, held: total });

const logEntry = z.object({
  id: count,
  at: millis,
  actor: text,
  action: text,
  mchId: text.nullable(),
  subject: text,
  detail: z.record(z.string().max(200), z.unknown()),
});
export const logSchema = list(logEntry);
export const logPageSchema = pageOf(logEntry);
export const logFollowSchema = z.object({ entries: list(logEntry), mark: count });

/** Amounts by asset. */
const totals = z.record(z.string().regex(/^[A-Za-z0-9]{1,16}$/, 'not an asset'), total);
const tally = z.object({ count, total: totals });
// A server from before adjustments answers without them: summary then says it cannot tell.
const period = z.object({ since: millis, payments: tally, refunds: tally, withdrawals: tally, adjustments: z.object({ count, credited: totals, debited: totals }).optional() });
export const summarySchema = z.object({
  at: millis,
  mchId: text.nullable(),
  pendingWithdrawals: tally.extend({ confirming: count }),
  today: period,
  week: period,
  balances: z.object({ available: totals, held: totals }),
  heldPayments: tally,
  // A server from before this field answers without it: none it could tell.
  refusedPayments: tally.extend({ orders: list(id).max(REFUSED_ORDERS_LISTED) }).default({ count: 0, total: {}, orders: [] }),
  chains: list(
    z.object({
      chainId,
      name: text.nullable(),
      head: block.nullable(),
      scannedTo: block.nullable(),
      lag: count.nullable(),
      headAt: millis.nullable(),
      lastError: text.nullable(),
      deepReorg: text.nullable(),
    }),
  ),
  failedCallbacks: count,
  retryingCallbacks: z.object({ count, since: millis.nullable() }).optional(),
});

const callbackFields = {
  id,
  eventId: id,
  mchId: text,
  event: z.enum(['order.paid', 'order.expired', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected']),
  subject: text,
  url: text,
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: count,
  nextAttemptAt: millis.nullable(),
  lastStatus: count.nullable(),
  lastError: text.nullable(),
  createdAt: millis,
  deliveredAt: millis.nullable(),
};
export const callbackListSchema = list(z.object(callbackFields));
export const callbackPageSchema = pageOf(z.object(callbackFields));
export const callbackShowSchema = z.object({
  ...callbackFields,
  payload: z.record(z.string().max(200), z.union([text, z.number(), z.boolean(), z.null()])),
  history: list(z.object({ at: millis, statusCode: count.nullable(), latencyMs: count, error: text.nullable(), by: text })),
});
