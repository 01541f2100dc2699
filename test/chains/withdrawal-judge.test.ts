import { describe, expect, it } from 'vitest';
import { judge, type ChainObservation, type ExpectedPayout } from '../../src/chains/withdrawal-check.js';
import { PAYOUT_CLOCK_SKEW_MS } from '../../src/core/types.js';

/**
 * The edges of judge's rules that the anvil tests (test/chains/withdraw-verify.test.ts) cannot
 * place exactly: how early before the request a block may be, and which transfer of several pays.
 */
const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const TOKEN = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const WALLET = '0x000000000000000000000000000000000000bEEF';
const T = Date.UTC(2026, 10, 24, 12);
const expected: ExpectedPayout = {
  chainType: 'EVM', chainId: '1', token: TOKEN, tokenSymbol: 'USDT', tokenDecimals: 6, to: TO, rawAmount: 10_000_000n,
  txHash: `0x${'ab'.repeat(32)}`, blockNumber: 100, confirmations: 1, requestedAt: T, payoutWallets: [],
};
const transfer = (from: string, to = TO) => ({ token: TOKEN, from, to, rawAmount: '10000000', amount: '10' });
const observed = (o: Partial<ChainObservation>): ChainObservation => ({
  known: true, mined: true, succeeded: true, blockNumber: 100, blockHash: `0x${'cd'.repeat(32)}`, blockTime: T, head: 100, confirmations: 1,
  transfers: [transfer(WALLET)], ...o,
});

describe('judge', () => {
  it(`a block up to ${PAYOUT_CLOCK_SKEW_MS / 60_000} minutes before the request pays it; a millisecond earlier does not`, () => {
    expect(judge(expected, observed({ blockTime: T - PAYOUT_CLOCK_SKEW_MS })).verdict).toEqual({ kind: 'match', deep: true });
    expect(judge(expected, observed({ blockTime: T - 4 * 60_000 })).verdict.kind).toBe('match');
    const early = judge(expected, observed({ blockTime: T - PAYOUT_CLOCK_SKEW_MS - 1 }));
    expect(early.verdict.kind).toBe('mismatch');
    expect(early.message).toMatch(/was mined at 2026-11-24T11:54:59\.999Z, before this withdrawal was requested at 2026-11-24T12:00:00\.000Z: it cannot be its payout$/);
  });

  it('one transfer from a payout wallet among others pays it; a self-transfer beside it does not stop it, a stranger\'s to the payee does', () => {
    const withWallets = { ...expected, payoutWallets: [WALLET.toLowerCase()] };
    expect(judge(withWallets, observed({ transfers: [transfer(TO), transfer(WALLET)] })).verdict.kind).toBe('match');
    // The payee received 20: not "exactly that amount", whoever sent the other 10 (a reviewer:
    // with wallets named, a second sender's part was neither counted nor in the way).
    expect(judge(withWallets, observed({ transfers: [transfer(TO), transfer('0x0000000000000000000000000000000000000001'), transfer(WALLET)] })).message)
      .toBe(`transaction ${expected.txHash} moved 20 USDT in all to ${TO}, in 2 transfers (10 USDT from 0x0000000000000000000000000000000000000001, 10 USDT from ${WALLET}); this withdrawal pays 10 USDT to ${TO}`);
    expect(judge(withWallets, observed({ transfers: [transfer(TO)] })).message)
      .toMatch(/moved 10 USDT from 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed to itself: the recipient's own tokens, not a payout$/);
    // Beside a self-transfer, the stranger's transfer is what is said: it is the one that arrived.
    expect(judge(withWallets, observed({ transfers: [transfer(TO), transfer('0x0000000000000000000000000000000000000001')] })).message)
      .toMatch(/moved 10 USDT from 0x0000000000000000000000000000000000000001, which is not a payout wallet of this merchant/);
    expect(judge(withWallets, observed({ transfers: [transfer('0x0000000000000000000000000000000000000001')] })).message)
      .toMatch(/from 0x0000000000000000000000000000000000000001, which is not a payout wallet of this merchant \(0x000000000000000000000000000000000000beef\): it is not the merchant's payout$/);
    // No wallets named: any sender but the recipient.
    expect(judge(expected, observed({ transfers: [transfer('0x0000000000000000000000000000000000000001')] })).verdict.kind).toBe('match');
  });

  it('"exactly that amount" is what the merchant\'s transfers moved to the recipient in all (decisions §6)', () => {
    const part = (rawAmount: string, amount: string, from = WALLET) => ({ ...transfer(from), rawAmount, amount });
    const withWallets = { ...expected, payoutWallets: [WALLET.toLowerCase()] };
    // Twice the amount in two transfers: refused, with both parts and the sum.
    const twice = judge(expected, observed({ transfers: [transfer(WALLET), transfer(WALLET)] }));
    expect(twice.verdict.kind).toBe('mismatch');
    expect(twice.message).toBe(`transaction ${expected.txHash} moved 20 USDT in all to ${TO}, in 2 transfers (10 USDT from ${WALLET}, 10 USDT from ${WALLET}); this withdrawal pays 10 USDT to ${TO}`);
    // Parts that add up pay it; with wallets named, every part comes from one of them.
    expect(judge(expected, observed({ transfers: [part('4000000', '4'), part('6000000', '6')] })).verdict.kind).toBe('match');
    expect(judge(withWallets, observed({ transfers: [part('4000000', '4'), part('6000000', '6')] })).verdict.kind).toBe('match');
    expect(judge(withWallets, observed({ transfers: [part('4000000', '4'), part('6000000', '6', '0x0000000000000000000000000000000000000001')] })).message)
      .toMatch(/moved 6 USDT from 0x0000000000000000000000000000000000000001, which is not a payout wallet of this merchant \(0x000000000000000000000000000000000000beef\): it is not the merchant's payout$/);
    // Less in all than the amount, in parts: the parts and the sum.
    expect(judge(expected, observed({ transfers: [part('4000000', '4'), part('5000000', '5')] })).message).toContain('moved 9 USDT in all');
    // TRON: base58 addresses, one spelling; parts add up as on EVM.
    const TRON_TO = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
    const TRON_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    const TRON_FROM = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
    const onTron = { ...expected, chainType: 'TRON' as const, chainId: '728126428', token: TRON_USDT, to: TRON_TO };
    const tronPart = (rawAmount: string, amount: string) => ({ token: TRON_USDT, from: TRON_FROM, to: TRON_TO, rawAmount, amount });
    expect(judge(onTron, observed({ transfers: [tronPart('2500000', '2.5'), tronPart('7500000', '7.5')] })).verdict.kind).toBe('match');
    expect(judge(onTron, observed({ transfers: [tronPart('10000000', '10'), tronPart('10000000', '10')] })).message).toContain(`moved 20 USDT in all to ${TRON_TO}, in 2 transfers`);
    // Another address's transfer in the same transaction is not counted.
    expect(judge(expected, observed({ transfers: [transfer(WALLET), transfer(WALLET, WALLET.replace('bEEF', 'cafe'))] })).verdict.kind).toBe('match');
  });
});
