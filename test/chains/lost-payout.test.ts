import { describe, expect, it } from 'vitest';
import { lostPayoutFate, TRON_MAX_EXPIRATION_MS } from '../../src/chains/withdrawal-check.js';

/**
 * What the watcher decides for a confirming withdrawal whose transaction a reorg took out of the
 * chain (src/chains/watch/watcher.ts, settleWithdrawals). The EVM paths run against anvil in
 * withdraw-verify.test.ts; TRON has no local node, so its rule is pinned here.
 */
const T = 1_800_000_000_000;
const base = { depth: 19, known: false, lostAt: null, now: T, nonce: null, nonceUsedAtDepth: false } as const;

describe('a payout out of the chain: can it still be mined?', () => {
  it('TRON: waits while it may still be mined, released only 24 h after the loss and while the node does not hold it', () => {
    expect(lostPayoutFate({ ...base, chainType: 'TRON' })).toEqual({ gone: false, why: 'a TRON transaction can be mined until it expires, 24 h at most' });
    const lostAt = T - TRON_MAX_EXPIRATION_MS;
    expect(lostPayoutFate({ ...base, chainType: 'TRON', lostAt: lostAt + 1 }).gone).toBe(false);
    expect(lostPayoutFate({ ...base, chainType: 'TRON', lostAt, known: true }).gone).toBe(false);
    expect(lostPayoutFate({ ...base, chainType: 'TRON', lostAt })).toEqual({
      gone: true, why: 'a reorg took it away more than 24 h ago and a TRON transaction expires within 24 h: it can never be mined',
    });
  });

  it('EVM: released only once its nonce is used at depth; an unknown nonce waits for good', () => {
    expect(lostPayoutFate({ ...base, chainType: 'EVM', nonce: 7 })).toEqual({ gone: false, why: "its sender's nonce 7 is not used by another transaction yet" });
    expect(lostPayoutFate({ ...base, chainType: 'EVM', nonce: 7, nonceUsedAtDepth: true })).toEqual({
      gone: true, why: "a reorg took it away, and its sender's nonce 7 is used by another transaction 19 blocks deep: it can never be mined",
    });
    // Time alone never releases an EVM transaction: a signed one stays valid until its nonce is used.
    expect(lostPayoutFate({ ...base, chainType: 'EVM', nonce: null, lostAt: T - 10 * TRON_MAX_EXPIRATION_MS }).gone).toBe(false);
  });
});
