import { and, eq, sql } from 'drizzle-orm';
import { invalid, notFound } from '../core/errors.js';
import type { BalanceView } from '../core/types.js';
import { formatAmount, parseSignedAmount } from '../core/money.js';
import { BLANKS, blankRefusal, CONTROL, controlRefusal, echoRefusal, HIDDEN, hiddenRefusal, isEchoable } from '../core/text-rules.js';
import { accountId, audit, balanceOf, postTransfer } from './ledger.js';
import { findMerchant } from './merchants.js';
import { accounts, orders } from './schema.js';
import { decimalsOf, requestedAsset, type StoreCtx } from './store-context.js';

export type { BalanceView };

/**
 * A user's balance. With `known`, a uid the merchant never saw (no account, no order) is refused
 * instead of answered with zeros: `balance` on a mistyped uid must not look like an empty purse
 * (issue #15 item 2). The refusal names uids that differ only in case, when there are some.
 */
export function balance(s: StoreCtx, uid: string, opts: { asset?: string; mchId?: string; known?: boolean } = {}): BalanceView {
  const m = findMerchant(s, s.db, opts.mchId);
  const asset = opts.asset === undefined ? m.asset : requestedAsset(opts.asset);
  const d = decimalsOf(asset);
  if (opts.known) {
    const { seen, like } = userSeen(s, m.id, uid);
    if (!seen) throw notFound(`user ${uid} has no activity with merchant ${m.id}: no order, payment, refund, withdrawal or adjustment${didYouMean(like)}`);
  }
  const b = balanceOf(s.db, { merchantId: m.id, asset, kind: 'user', uid });
  return { mchId: m.id, uid, asset, available: formatAmount(b.available, d), held: formatAmount(b.held, d) };
}

/**
 * Whether the merchant ever saw this uid (an account or an order), and when not, up to three of
 * its uids equal to it but for case: `balance` refuses such a uid, `balance adjust` says it is new.
 */
export function userSeen(s: StoreCtx, merchantId: string, uid: string): { seen: boolean; like: string[] } {
  return hasActivity(s, merchantId, uid) ? { seen: true, like: [] } : { seen: false, like: similarUids(s, merchantId, uid) };
}

export const didYouMean = (like: string[]) => (like.length ? ` (did you mean ${like.join(', ')}?)` : '');

/** An operator's credit or debit of a user, with a required reason (decisions §4). */
export async function adjustBalance(
  s: StoreCtx,
  input: { uid: string; amount: string; reason: string; asset?: string; mchId?: string },
): Promise<BalanceView & { change: string }> {
  if (typeof input.uid !== 'string' || !input.uid || input.uid.length > 64) throw invalid('uid is required (1 to 64 characters)');
  // What every operation that names a user refuses: a user made by hand that no order or
  // withdrawal could ever name.
  if (CONTROL.test(input.uid)) throw invalid(controlRefusal('uid'));
  if (HIDDEN.test(input.uid)) throw invalid(hiddenRefusal('uid'));
  if (BLANKS.test(input.uid)) throw invalid(blankRefusal('uid'));
  if (!isEchoable(input.uid)) throw invalid(echoRefusal('uid'));
  if (typeof input.amount !== 'string') throw invalid('amount must be a signed decimal string such as "+5" or "-2.5"');
  const reason = input.reason?.trim();
  if (!reason) throw invalid('reason is required: say why the balance changes');
  const now = s.now();
  const m0 = findMerchant(s, s.db, input.mchId);
  const asset = input.asset === undefined ? m0.asset : requestedAsset(input.asset);
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

/** The merchant has an account or an order for this uid. */
export function hasActivity(s: StoreCtx, merchantId: string, uid: string): boolean {
  const account = s.db.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.merchantId, merchantId), eq(accounts.kind, 'user'), eq(accounts.uid, uid))).limit(1).get();
  return !!account || !!s.db.select({ id: orders.id }).from(orders).where(and(eq(orders.merchantId, merchantId), eq(orders.uid, uid))).limit(1).get();
}

/** Up to three uids of the merchant equal to `uid` but for case (a refusal's hint; a scan, so only on the way out). */
function similarUids(s: StoreCtx, merchantId: string, uid: string): string[] {
  const lower = uid.toLowerCase();
  const rows = s.db.all<{ uid: string }>(sql`select uid from accounts where merchant_id = ${merchantId} and kind = 'user' and lower(uid) = ${lower}
    union select uid from orders where merchant_id = ${merchantId} and lower(uid) = ${lower} limit 3`);
  return rows.map((r) => r.uid).filter((u) => u !== uid);
}
