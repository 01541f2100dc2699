import type { Context } from '../../context.js';
import { printOrder } from '../views.js';
import { orderByRef } from './ref.js';

/** `order show ID|OID`. */
export async function run(ctx: Context, _opts: unknown, ref: string): Promise<void> {
  await printOrder(ctx, await orderByRef(ctx, ref, { onChain: true }));
}
