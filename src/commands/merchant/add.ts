import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { parseDuration } from '../../core/duration.js';
import { checked, need } from '../common.js';
import { printJson, printRecord, warn } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<void> {
  if (typeof opts.orderLifetime === 'string') {
    try {
      parseDuration(opts.orderLifetime, '--order-lifetime');
    } catch (e) {
      throw usage((e as Error).message);
    }
  }
  const rate = String(opts.rateLimit ?? '60');
  if (!/^\d{1,7}$/.test(rate) || Number(rate) > 1_000_000) throw usage('--rate-limit must be a whole number of requests per minute, at most 1000000 (0 means no limit)');
  // The wallet is judged by its form (an xpub's checksum, depth and kind) before the ledger is
  // opened: a refused merchant add leaves no ledger file behind, and says so with exit 2.
  const evmXpub = opts.evmXpub as string | undefined;
  const tronXpub = opts.tronXpub as string | undefined;
  const refused = await (await import('../../store/merchants.js')).walletRefusal({ generateWallet: !!opts.generateWallet, evmXpub, tronXpub });
  if (refused) throw usage(refused);
  checked(opts.name as string | undefined, 'name');
  const name = await need(ctx, opts.name as string | undefined, 'name', 'Merchant name');
  const service = await ctx.local('merchant add', { create: true });
  const created = await service.addMerchant({
    name,
    evmXpub,
    tronXpub,
    generateWallet: !!opts.generateWallet,
    orderLifetime: opts.orderLifetime as string | undefined,
    rateLimit: Number(rate),
  });
  if (ctx.globals.json) {
    return printJson(ctx, { mchId: created.merchant.mchId, secret: created.secret, ...(created.mnemonic ? { mnemonic: created.mnemonic } : {}) });
  }
  await printRecord(ctx, [
    ['mchId', created.merchant.mchId],
    ['secret', created.secret],
  ]);
  await warn(ctx, 'the secret is shown this once: keep it in a file with mode 0600 or a secrets manager; `cryptopay merchant rotate-secret` issues a new one');
  if (created.mnemonic) {
    ctx.io.stdout.write(`\nwallet words  ${created.mnemonic}\n`);
    await warn(
      ctx,
      'warning: these 24 words are the wallet that receives every payment; they are shown once and are NOT stored anywhere: write them down offline now (anyone who has them can take the funds)',
    );
  }
}
