import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import type { OrderDetail } from '../../core/types.js';
import type { LocalPaymentService } from '../../store/local-service.js';

/**
 * The order a command names by its id or its merchant's oid (issue #15 item 2). Not found says
 * where else to look; under --json the message stays the interface's exact "Order not found".
 */
export async function orderByRef(ctx: Context, service: LocalPaymentService, ref: string): Promise<OrderDetail> {
  try {
    return await service.orderByRef(ref, ctx.globals.mchId);
  } catch (e) {
    if (!ctx.globals.json && e instanceof AppError && e.kind === 'not_found' && e.message === 'Order not found') {
      const scope = ctx.globals.mchId ? ` of merchant ${ctx.globals.mchId}` : '';
      throw new AppError('not_found', `Order not found: no order${scope} has the id or oid ${ref} (cryptopay order find ${ref} also searches uids, transaction hashes and deposit addresses)`);
    }
    throw e;
  }
}
