import { CallbackWorker } from '../../callbacks/worker.js';
import type { Context } from '../../context.js';
import { printJson, printRecord } from '../output.js';
import { findCallback } from '../../store/callback-reads.js';

/**
 * A new attempt now, from this process, with the same eventId. Its lease keeps a running serve
 * from sending the same attempt; should it fail, serve (or `callbacks run`) retries it on the
 * schedule, started over.
 */
export async function run(ctx: Context, opts: { allowPrivateCallbacks?: boolean }, id: string): Promise<number> {
  const service = await ctx.local('callbacks resend');
  // The flag, else what the ledger's service allows (CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1, or the
  // public test wallet's merchant, whose callbacks serve --dev sends inward too).
  const { merchantId } = findCallback(service.ledger.db, id, ctx.globals.mchId);
  const allowPrivate = !!opts.allowPrivateCallbacks || service.inwardCallbacksAllowed(merchantId);
  const worker = new CallbackWorker({ ledger: service.ledger, now: ctx.now, allowPrivate });
  const r = await worker.resend(id, ctx.globals.mchId);
  if (ctx.globals.json) printJson(ctx, r);
  else {
    await printRecord(ctx, [
      ['id', r.id],
      ['status code', r.statusCode],
      ['latency', `${r.latencyMs}ms`],
      ['error', r.error],
      ['status', r.status],
    ]);
  }
  return r.status === 'delivered' ? 0 : 1;
}
