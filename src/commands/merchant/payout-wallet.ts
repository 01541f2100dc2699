import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { payoutAddress, type PayoutWallets } from '../../store/payout-wallets.js';
import { printJson, printRecord, success } from '../output.js';

/**
 * `merchant payout-wallet add|remove ADDRESS`, `merchant payout-wallet list`: the addresses a
 * merchant pays its users out from. Once a merchant names any for a chain type, a withdrawal on
 * that chain type is confirmed (verified on chain) only by a transfer of tokens from one of them
 * (docs/decisions.md, "A payout comes from the merchant's payout wallets").
 */
/** The address's form is judged before the ledger is opened: a usage error (exit 2), as every CLI input is. */
function checkedAddress(address: string): void {
  try {
    payoutAddress(address);
  } catch (e) {
    throw usage((e as Error).message);
  }
}

export async function add(ctx: Context, _opts: unknown, address: string): Promise<void> {
  checkedAddress(address);
  const r = await (await ctx.local('merchant payout-wallet add')).addPayoutWallet({ mchId: ctx.globals.mchId, address });
  if (ctx.globals.json) return printJson(ctx, r);
  await show(ctx, r.mchId, r.wallets);
  await success(ctx, `${r.address} added: withdrawals of merchant ${r.mchId} on ${r.chainType} chains verify only when paid from one of its ${r.chainType} payout wallets`);
}

export async function remove(ctx: Context, _opts: unknown, address: string): Promise<void> {
  checkedAddress(address);
  const r = await (await ctx.local('merchant payout-wallet remove')).removePayoutWallet({ mchId: ctx.globals.mchId, address });
  if (ctx.globals.json) return printJson(ctx, r);
  await show(ctx, r.mchId, r.wallets);
  await success(ctx, r.wallets[r.chainType].length
    ? `${r.address} removed`
    : `${r.address} removed: merchant ${r.mchId} names no ${r.chainType} payout wallet now, so who paid a withdrawal on ${r.chainType} chains is not checked`);
}

export async function list(ctx: Context): Promise<void> {
  const r = await (await ctx.local('merchant payout-wallet list')).payoutWallets(ctx.globals.mchId);
  if (ctx.globals.json) return printJson(ctx, r);
  await show(ctx, r.mchId, r.wallets);
}

async function show(ctx: Context, mchId: string, w: PayoutWallets): Promise<void> {
  await printRecord(ctx, [['merchant', mchId], ...(['EVM', 'TRON'] as const).map((t): [string, string] => [`${t} payout wallets`, w[t].length ? w[t].join(', ') : 'none: the sender is not checked'])]);
}
