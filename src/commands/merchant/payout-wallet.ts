import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { payoutAddress } from '../../store/payout-wallets.js';
import { printJson, printRecord, success } from '../output.js';
import { payoutWalletRows } from '../views.js';

/**
 * `merchant payout-wallet add|remove ADDRESS`, `merchant payout-wallet list`: the addresses a
 * merchant pays its users out from. Once a merchant names any for a chain type, a withdrawal on
 * that chain type is confirmed (verified on chain) only by a transfer of tokens from one of them
 * (docs/decisions.md, "A payout comes from the merchant's payout wallets"). The address's form is
 * judged before the ledger is opened: a usage error (exit 2), as every CLI input is.
 */
async function change(ctx: Context, address: string, how: 'add' | 'remove'): Promise<void> {
  try {
    payoutAddress(address);
  } catch (e) {
    throw usage((e as Error).message);
  }
  const r = await (await ctx.local(`merchant payout-wallet ${how}`)).changePayoutWallet({ mchId: ctx.globals.mchId, address }, how);
  if (ctx.globals.json) return printJson(ctx, r);
  await printRecord(ctx, [['merchant', r.mchId], ...payoutWalletRows(r.wallets)]);
  const t = r.chainType;
  await success(ctx, how === 'add'
    ? `${r.address} added: withdrawals of merchant ${r.mchId} on ${t} chains verify only when paid from one of its ${t} payout wallets`
    : r.wallets[t].length ? `${r.address} removed` : `${r.address} removed: merchant ${r.mchId} names no ${t} payout wallet now, so who paid a withdrawal on ${t} chains is not checked`);
}

export const add = (ctx: Context, _opts: unknown, address: string) => change(ctx, address, 'add');
export const remove = (ctx: Context, _opts: unknown, address: string) => change(ctx, address, 'remove');

export async function list(ctx: Context): Promise<void> {
  const r = await (await ctx.local('merchant payout-wallet list')).payoutWallets(ctx.globals.mchId);
  if (ctx.globals.json) return printJson(ctx, r);
  await printRecord(ctx, [['merchant', r.mchId], ...payoutWalletRows(r.wallets)]);
}
