import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import type { DecidablePayment } from '../../store/held-payments.js';
import type { HeldPaymentRef, LocalPaymentService } from '../../store/local-service.js';
import { checked, need } from '../common.js';
import { orderByRef } from './ref.js';

export interface HeldOptions {
  txHash?: string;
  logIndex?: string;
  reason?: string;
  returnTx?: string;
}

/**
 * What `order credit-held` and `order return-held` share: the payment an operator names (asking
 * on a terminal for what is missing), the order by its id or oid as every other order command
 * takes it, the local ledger, and the held (or refused) payment the reference names, for the
 * question. The payment is undefined when the reference names none or several: deciding then
 * refuses with the reason and what to do, changing nothing.
 */
export async function heldDecision(
  ctx: Context,
  opts: HeldOptions,
  id: string,
  command: string,
): Promise<{ ref: HeldPaymentRef; service: LocalPaymentService; p: DecidablePayment | undefined }> {
  checked(opts.txHash, 'tx-hash');
  checked(opts.returnTx, 'return-tx');
  if (opts.logIndex !== undefined && !/^\d{1,9}$/.test(opts.logIndex)) throw usage('--log-index must be a whole number');
  const txHash = await need(ctx, opts.txHash, 'tx-hash', 'Transaction hash of the held payment');
  const reason = await need(ctx, opts.reason, 'reason', 'Reason (kept in the audit log)');
  const service = await ctx.local(command);
  const orderId = (await orderByRef(ctx, id)).id;
  const ref: HeldPaymentRef = { orderId, txHash, logIndex: opts.logIndex === undefined ? undefined : Number(opts.logIndex), mchId: ctx.globals.mchId, reason };
  return { ref, service, p: service.decidablePayment(ref) };
}
