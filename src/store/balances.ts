import { invalid } from '../core/errors.js';
import type { BalanceView } from '../core/types.js';
import { formatAmount, parseSignedAmount } from '../core/money.js';
import { accountId, audit, balanceOf, postTransfer } from './ledger.js';
import { findMerchant } from './merchants.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

export type { BalanceView };

export function balance(s: StoreCtx, uid: string, opts: { asset?: string; mchId?: string } = {}): BalanceView {
  const m = findMerchant(s, s.db, opts.mchId);
  const asset = opts.asset ?? m.asset;
  const d = decimalsOf(asset);
  const b = balanceOf(s.db, { merchantId: m.id, asset, kind: 'user', uid });
  return { mchId: m.id, uid, asset, available: formatAmount(b.available, d), held: formatAmount(b.held, d) };
}

/** An operator's credit or debit of a user, with a required reason (decisions §4). */
export async function adjustBalance(
  s: StoreCtx,
  input: { uid: string; amount: string; reason: string; asset?: string; mchId?: string },
): Promise<BalanceView & { change: string }> {
  if (typeof input.uid !== 'string' || !input.uid || input.uid.length > 64) throw invalid('uid is required (1 to 64 characters)');
  if (typeof input.amount !== 'string') throw invalid('amount must be a signed decimal string such as "+5" or "-2.5"');
  const reason = input.reason?.trim();
  if (!reason) throw invalid('reason is required: say why the balance changes');
  const now = s.now();
  const m0 = findMerchant(s, s.db, input.mchId);
  const asset = input.asset ?? m0.asset;
  const d = decimalsOf(asset);
  const change = parseSignedAmount(input.amount, d);
  await s.write((tx) => {
    const user = accountId(tx, { merchantId: m0.id, asset, kind: 'user', uid: input.uid });
    const system = accountId(tx, { merchantId: m0.id, asset, kind: 'adjustments' });
    const before = balanceOf(tx, { merchantId: m0.id, asset, kind: 'user', uid: input.uid });
    postTransfer(tx, {
      merchantId: m0.id, asset, amount: change < 0n ? -change : change, kind: 'adjustment', ref: `adjust:${input.uid}`, now, decimals: d,
      debit: change < 0n ? user : system, credit: change < 0n ? system : user,
    });
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'balance.adjusted', merchantId: m0.id, subjectType: 'balance', subjectId: input.uid,
      detail: { asset, change: formatAmount(change, d), before: formatAmount(before.available, d), after: formatAmount(before.available + change, d), reason },
    });
  });
  return { ...balance(s, input.uid, { asset, mchId: m0.id }), change: formatAmount(change, d) };
}
