import type { Context } from '../../context.js';

/** The payment page of an order of the local ledger: where `serve` last said it serves them. */
export async function localPayUrl(ctx: Context, id: string): Promise<string> {
  const [{ readSetting }, { DEFAULT_PUBLIC_URL, payUrlOf }] = await Promise.all([import('../../store/settings.js'), import('../../server/pay-url.js')]);
  const service = await ctx.local('order');
  return payUrlOf(readSetting(service.ledger, 'public_url') ?? DEFAULT_PUBLIC_URL, id);
}
