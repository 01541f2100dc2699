import type { Context } from '../../context.js';
import { formatAmount, parseLedgerAmount, parseSignedAmount } from '../../core/money.js';
import { ASSETS } from '../../core/assets.js';
import { asking, checked, need } from '../common.js';
import { confirmChange } from '../common.js';
import { FIELDS, SIGNED_AMOUNT } from '../fields.js';
import { didYouMean } from '../../store/balances.js';
import { printJson, printRecord } from '../output.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>, uid: string): Promise<void> {
  checked(uid, FIELDS.uid!);
  checked(opts.amount, SIGNED_AMOUNT);
  checked(opts.reason, 'reason');
  const amount = await need(ctx, opts.amount, SIGNED_AMOUNT, 'Signed amount (+5 credits, -5 debits)');
  const reason = await need(ctx, opts.reason, 'reason', 'Reason (kept in the audit log)');
  const service = await ctx.local('balance adjust');
  const before = await service.balance(uid, { asset: opts.asset?.toUpperCase(), mchId: ctx.globals.mchId });
  // A uid the merchant never saw may be a typo of one it did: said before the money moves, as
  // `balance` says it (a new-user trial credited "uSer-7" with no word). Still allowed.
  const { seen, like } = service.userSeen(uid, before.mchId);
  const unseen = seen ? undefined : `a new user: no activity yet${didYouMean(like)}`;
  // Without the question, said when it looks like a typo: a uid like one the merchant has.
  if (unseen && like.length && !asking(ctx)) ctx.io.stderr.write(`note: user ${uid} of merchant ${before.mchId} is ${unseen}\n`);
  const d = ASSETS[before.asset]?.decimals ?? 6;
  const change = parseSignedAmount(amount, d);
  // The balance is read back without the one-operation cap: a user may hold more than 10^12.
  const after = parseLedgerAmount(before.available, d) + change;
  await confirmChange(ctx, change < 0n ? 'Debit a user' : 'Credit a user', [
    ['user', `${uid} (merchant ${before.mchId})${unseen ? `, ${unseen}` : ''}`],
    ['available', `${before.available} -> ${formatAmount(after, d)} ${before.asset}`],
    ['reason', reason],
  ]);
  const b = await service.adjustBalance({ uid, amount, reason, asset: before.asset, mchId: before.mchId });
  if (ctx.globals.json) return printJson(ctx, b);
  await printRecord(ctx, [
    ['uid', b.uid],
    ['change', `${b.change.startsWith('-') ? '' : '+'}${b.change} ${b.asset}`],
    ['available', `${b.available} ${b.asset}`],
    ['held', `${b.held} ${b.asset}`],
  ]);
}
