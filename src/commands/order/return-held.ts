import type { Context } from '../../context.js';
import { confirmChange } from '../common.js';
import { printJson, printRecord } from '../output.js';
import { heldDecision, type HeldOptions } from './held-ref.js';

/** `order return-held <id>`: records that a held payment was sent back to its payer; no balance moves. */
export async function run(ctx: Context, opts: HeldOptions, id: string): Promise<void> {
  const { ref, service, p } = await heldDecision(ctx, opts, id, 'order return-held');
  if (p) {
    await confirmChange(ctx, 'Record a held payment as returned', [
      ['order', `${p.orderId} (oid ${p.oid})`],
      ['payment', `${p.amount} ${p.asset} in tx ${p.txHash} log ${p.logIndex} on chain ${p.chainId}`],
      ['ledger', 'it was never credited: no balance moves'],
      ['return tx', opts.returnTx],
      ['reason', ref.reason],
    ]);
  }
  const r = await service.returnHeldPayment({ ...ref, returnTx: opts.returnTx });
  const out = { ...r, status: 'returned', returnTx: r.returnTx };
  if (ctx.globals.json) return printJson(ctx, out);
  await printRecord(ctx, [
    ['order', r.orderId],
    ['payment', `${r.amount} ${r.asset} in tx ${r.txHash} log ${r.logIndex}`],
    ['status', 'returned'],
    ['return tx', r.returnTx],
  ]);
}
