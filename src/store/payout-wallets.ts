import { and, asc, eq } from 'drizzle-orm';
import { validateAddress } from '../chains/address.js';
import { conflict, invalid } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { audit, type Q } from './ledger.js';
import { findMerchant } from './merchants.js';
import { payoutWallets } from './schema.js';
import type { StoreCtx } from './store-context.js';

/**
 * The wallets a merchant pays its users out from (docs/decisions.md, "A payout is sent from the
 * merchant's wallet"). Once a merchant names any for a chain type, a payout on that chain type
 * verifies only when one of them sent it: before, a transfer of the same amount to the same
 * address from anybody (the payee's own second wallet, another merchant's payout) verified.
 * None named: the sender is not checked, and `withdraw verify` says so.
 */

export type PayoutWallets = Record<ChainType, string[]>;

/** A payout wallet as given: its chain type by its form (0x… is EVM, T… is TRON), checked and in the ledger's spelling. */
export function payoutAddress(given: unknown): { chainType: ChainType; address: string } {
  if (typeof given !== 'string' || !given.trim()) throw invalid('address is required');
  const a = given.trim();
  const chainType: ChainType | undefined = /^0x/i.test(a) ? 'EVM' : /^T/.test(a) ? 'TRON' : undefined;
  if (!chainType) throw invalid(`address ${a.slice(0, 64)} is neither an EVM address (0x…) nor a TRON address (T…)`);
  return { chainType, address: validateAddress(chainType, a, 'address') };
}

export function listPayoutWallets(q: Q, merchantId: string): PayoutWallets {
  const out: PayoutWallets = { EVM: [], TRON: [] };
  for (const r of q.select().from(payoutWallets).where(eq(payoutWallets.merchantId, merchantId)).orderBy(asc(payoutWallets.createdAt), asc(payoutWallets.address)).all()) {
    out[r.chainType as ChainType].push(r.address);
  }
  return out;
}

export type PayoutWalletChange = { mchId: string; chainType: ChainType; address: string; wallets: PayoutWallets };

/**
 * Adds or removes one payout wallet, with its audit entry, in one transaction; refused (409) when
 * there is nothing to change (already there, or not there).
 */
export async function changePayoutWallet(s: StoreCtx, input: { mchId?: string; address: string }, change: 'add' | 'remove'): Promise<PayoutWalletChange> {
  const { chainType, address } = payoutAddress(input.address);
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, input.mchId);
    const changed = change === 'add'
      ? tx.insert(payoutWallets).values({ merchantId: m.id, chainType, address, createdAt: now }).onConflictDoNothing().run().changes
      : tx.delete(payoutWallets).where(and(eq(payoutWallets.merchantId, m.id), eq(payoutWallets.chainType, chainType), eq(payoutWallets.address, address))).run().changes;
    if (changed !== 1) throw conflict(`${address} is ${change === 'add' ? 'already' : 'not'} a payout wallet of merchant ${m.id}`);
    audit(tx, {
      at: now, actor: s.caller.actor, action: change === 'add' ? 'merchant.payout_wallet_added' : 'merchant.payout_wallet_removed',
      merchantId: m.id, subjectType: 'merchant', subjectId: m.id, detail: { chainType, address },
    });
    return { mchId: m.id, chainType, address, wallets: listPayoutWallets(tx, m.id) };
  });
}
