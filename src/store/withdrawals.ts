import { and, desc, eq, type SQL } from 'drizzle-orm';
import { checkNotifyUrl } from '../callbacks/guard.js';
import { conflict, invalid, notFound } from '../core/errors.js';
import { formatAmount, parseAmount } from '../core/money.js';
import { claimTxKey } from './tx-keys.js';
import type { WithdrawApplyRequest, WithdrawConfirmRequest, WithdrawRejectRequest } from '../core/schemas.js';
import { withdrawalAfter } from '../core/state.js';
import type { ChainType, Withdrawal, WithdrawalStatus } from '../core/types.js';
import { accountId, audit, holdTransfer, resolvePending, type Q } from './ledger.js';
import { findMerchant } from './merchants.js';
import { withdrawalEvent } from './outbox.js';
import { normalizeTxHash } from './payments.js';
import { withdrawals } from './schema.js';
import { decimalsOf, type StoreCtx } from './store-context.js';

type WithdrawalRow = typeof withdrawals.$inferSelect;

const heavy = () => import('./heavy.js');

export async function applyWithdrawal(s: StoreCtx, input: WithdrawApplyRequest): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawApplySchema, input);
  if (req.notifyUrl && !s.allowPrivateCallbacks) checkNotifyUrl(req.notifyUrl);
  const registry = await s.registry();
  const chain = registry.chain(req.chainId);
  if (chain.chainType !== req.chainType) {
    throw invalid(`chainType ${req.chainType} does not match chain ${chain.chainId} (${chain.name} is ${chain.chainType})`);
  }
  const token = registry.token(chain.chainId, req.token);
  const assetDecimals = decimalsOf(token.asset);
  parseAmount(req.amount, h.maxDecimals(token));
  const amount = parseAmount(req.amount, assetDecimals);
  const to = h.validateAddress(chain.chainType, req.to, 'to');
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const id = s.randomId('wd');
    const transferId = holdTransfer(tx, {
      merchantId: m.id, asset: token.asset, amount, kind: 'withdrawal', ref: id, now, decimals: assetDecimals,
      debit: accountId(tx, { merchantId: m.id, asset: token.asset, kind: 'user', uid: req.uid }),
      credit: accountId(tx, { merchantId: m.id, asset: token.asset, kind: 'withdrawals' }),
    });
    const row = tx.insert(withdrawals).values({
      id, merchantId: m.id, uid: req.uid, asset: token.asset, amount, to, chainId: chain.chainId, chainType: chain.chainType,
      token: token.address, status: 'PENDING', notifyUrl: req.notifyUrl ?? null, transferId, createdAt: now, updatedAt: now,
    }).returning().get();
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'withdrawal.applied', merchantId: m.id, subjectType: 'withdrawal', subjectId: id,
      detail: { uid: req.uid, amount: formatAmount(amount, assetDecimals), to, chainId: chain.chainId, token: token.address },
    });
    return withdrawalView(row);
  });
}

export async function confirmWithdrawal(s: StoreCtx, input: WithdrawConfirmRequest): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawConfirmSchema, input);
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const w = findWithdrawal(tx, m.id, req.logId);
    const status = withdrawalAfter(w.status as WithdrawalStatus, 'confirm');
    const txHash = normalizeTxHash(req.txHash, w.chainType as ChainType, 'txHash');
    claimTxKey(tx, txHash, 'withdrawal', { shared: false, now });
    resolvePending(tx, w.transferId, 'posted', now);
    const row = tx.update(withdrawals).set({ status, txHash, blockNumber: req.blockNumber, updatedAt: now }).where(eq(withdrawals.id, w.id)).returning().get();
    withdrawalEvent(tx, 'withdraw.confirmed', row, { ...withdrawalView(row) }, now);
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'withdrawal.confirmed', merchantId: m.id, subjectType: 'withdrawal', subjectId: w.id,
      detail: { txHash, blockNumber: req.blockNumber, amount: formatAmount(w.amount, decimalsOf(w.asset)) },
    });
    return withdrawalView(row);
  });
}

export async function rejectWithdrawal(s: StoreCtx, input: WithdrawRejectRequest): Promise<Withdrawal> {
  const h = await heavy();
  const req = h.parseInput(h.withdrawRejectSchema, input);
  const now = s.now();
  return s.write((tx) => {
    const m = findMerchant(s, tx, req.mchId);
    const w = findWithdrawal(tx, m.id, req.id);
    const status = withdrawalAfter(w.status as WithdrawalStatus, 'reject');
    resolvePending(tx, w.transferId, 'voided', now);
    const row = tx.update(withdrawals).set({ status, remark: req.remark ?? null, updatedAt: now }).where(eq(withdrawals.id, w.id)).returning().get();
    withdrawalEvent(tx, 'withdraw.rejected', row, { ...withdrawalView(row) }, now);
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'withdrawal.rejected', merchantId: m.id, subjectType: 'withdrawal', subjectId: w.id,
      detail: { remark: req.remark ?? null, amount: formatAmount(w.amount, decimalsOf(w.asset)) },
    });
    return withdrawalView(row);
  });
}

function findWithdrawal(q: Q, merchantId: string | undefined, id: string): WithdrawalRow {
  const w = q.select().from(withdrawals).where(merchantId ? and(eq(withdrawals.id, id), eq(withdrawals.merchantId, merchantId)) : eq(withdrawals.id, id)).get();
  if (!w) throw notFound('withdrawal not found');
  return w;
}

export function getWithdrawal(s: StoreCtx, id: string, mchId?: string): Withdrawal & { mchId: string } {
  const w = findWithdrawal(s.db, mchId, id);
  return { ...withdrawalView(w), mchId: w.merchantId };
}

export function listWithdrawals(s: StoreCtx, filter: { mchId?: string; status?: WithdrawalStatus; uid?: string; limit?: number }): Withdrawal[] {
  const where: SQL[] = [];
  if (filter.mchId) where.push(eq(withdrawals.merchantId, filter.mchId));
  if (filter.status) where.push(eq(withdrawals.status, filter.status));
  if (filter.uid) where.push(eq(withdrawals.uid, filter.uid));
  return s.db.select().from(withdrawals).where(and(...where)).orderBy(desc(withdrawals.createdAt), desc(withdrawals.id)).limit(filter.limit ?? 50).all().map(withdrawalView);
}

function withdrawalView(w: WithdrawalRow): Withdrawal {
  return {
    id: w.id, uid: w.uid, amount: formatAmount(w.amount, decimalsOf(w.asset)), to: w.to, chainId: w.chainId,
    chainType: w.chainType as ChainType, token: w.token, status: w.status as WithdrawalStatus, txHash: w.txHash,
    blockNumber: w.blockNumber, remark: w.remark, createdAt: w.createdAt, updatedAt: w.updatedAt,
  };
}
