import { z } from 'zod';

/** What a remote answers, checked at the edge like every other input. */
export const envelopeSchema = z.object({
  code: z.union([z.literal(0), z.literal(1)]),
  msg: z.string(),
  data: z.unknown(),
  systemTime: z.number(),
});

const chainType = z.enum(['EVM', 'TRON']);
const addresses = z.object({ EVM: z.string().optional(), TRON: z.string().optional() });
const orderStatus = z.enum(['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED']);

export const orderSchema = z.object({
  id: z.string(),
  oid: z.string(),
  uid: z.string(),
  amount: z.string(),
  status: orderStatus,
  expiredAt: z.number(),
  addresses,
  payUrl: z.string().optional(),
});
export const addressesSchema = addresses;
export const statusSchema = orderStatus;
export const refundResultSchema = z.object({
  id: z.string(),
  oid: z.string(),
  amount: z.string(),
  status: z.literal('REFUNDED'),
  remark: z.string(),
  refundTime: z.number(),
});
export const withdrawalSchema = z.object({
  id: z.string(),
  uid: z.string(),
  amount: z.string(),
  to: z.string(),
  chainId: z.string(),
  chainType,
  token: z.string(),
  status: z.enum(['PENDING', 'CONFIRMED', 'REJECTED']),
  txHash: z.string().nullable(),
  blockNumber: z.number().nullable(),
  remark: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
