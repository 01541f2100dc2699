import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import type { DecidablePayment } from '../../store/held-payments.js';
import type { HeldPaymentRef, LocalPaymentService } from '../../store/local-service.js';
import { checked, need } from '../common.js';

export interface HeldOptions {
  txHash?: string;
  logIndex?: string;
  reason?: string;
  returnTx?: string;
}

/** The held payment an operator names (`order credit-held`, `order return-held`), asking on a terminal for what is missing. */
export async function heldReference(ctx: Context, opts: HeldOptions, id: string): Promise<HeldPaymentRef> {
  checked(opts.txHash, 'tx-hash');
  checked(opts.returnTx, 'return-tx');
  if (opts.logIndex !== undefined && !/^\d{1,9}$/.test(opts.logIndex)) throw usage('--log-index must be a whole number');
  const txHash = await need(ctx, opts.txHash, 'tx-hash', 'Transaction hash of the held payment');
  const reason = await need(ctx, opts.reason, 'reason', 'Reason (kept in the audit log)');
  return { orderId: id, txHash, logIndex: opts.logIndex === undefined ? undefined : Number(opts.logIndex), mchId: ctx.globals.mchId, reason };
}

/**
 * The held (or refused) payment the reference names, for the confirmation to show. Undefined
 * when it names none or several: the service then refuses with the reason and what to do,
 * changing nothing.
 */
export function findHeld(service: LocalPaymentService, ref: HeldPaymentRef): DecidablePayment | undefined {
  return service.decidablePayment(ref);
}
