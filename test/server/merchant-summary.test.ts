import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordError, reportDeepReorg } from '../../src/store/chain-state.js';
import { expectOk, startServer, type Merchant, type TestServer } from './helpers.js';

/**
 * The chains' part of a merchant's summary (POST /api/v1/summary) is the service's, not the
 * merchant's: a deep reorg's report named the first payment it left credited by its transaction
 * hash, so every merchant, one with no order at all, learned another merchant's payment
 * (attacker review of 2026-11-24, F2; a merchant must not learn what another did: decisions,
 * "Who holds a transaction"). A merchant reads that a deep reorg was reported, and when; the
 * operator's summary on the ledger keeps the report.
 */
const TX = `0x${'28'.repeat(32)}`;
const REPORT = `reorg deeper than 12 confirmations: 1 counted payment(s) in replaced blocks (first: tx ${TX} in block 14); they stay credited, check them by hand`;

describe("a deep reorg in a merchant's summary", () => {
  let s: TestServer;
  let m: Merchant;
  beforeAll(async () => {
    s = await startServer();
    m = await s.addMerchant({ name: 'Newcomer' });
    // As the watcher leaves it (src/chains/watch/watcher.ts rollBack): the cursor row holds the report.
    recordError(s.ledger.db, '1', 'node unreachable', s.clock.now);
    reportDeepReorg(s.ledger.db, { chainId: '1', actor: 'watcher:1', now: s.clock.now, message: REPORT, payments: [] });
  });
  afterAll(async () => {
    await s.close();
  });

  it('says a deep reorg was reported and when, without the transaction or the block', async () => {
    const r = await s.post('/api/v1/summary', s.signed(m, { op: 'summary' }));
    const chain = (expectOk(r) as { chains: { chainId: string; deepReorg: string | null }[] }).chains.find((c) => c.chainId === '1')!;
    const at = new Date(s.clock.now).toISOString();
    expect(chain.deepReorg).toBe(`${at} a reorg deeper than the chain's confirmations replaced blocks that held payments already counted; the operator is checking them`);
    expect(r.text).not.toContain(TX.slice(2, 20));
    expect(r.text).not.toContain('block 14');
  });

  it("the operator's summary on the ledger keeps the whole report", async () => {
    const summary = await s.service.summary({});
    expect(summary.chains.find((c) => c.chainId === '1')!.deepReorg).toBe(`${new Date(s.clock.now).toISOString()} ${REPORT}`);
  });
});
