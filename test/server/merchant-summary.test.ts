import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordError, reportDeepReorg } from '../../src/store/chain-state.js';
import { groupCommit } from '../../src/store/group-commit.js';
import { MINUTE, T0, addOtherMerchant, addTestMerchant, evmTx, order, useHarness } from '../helpers/service.js';
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
    recordError(s.ledger.db, '1', 'the node at http://10.0.3.7:8545 cannot be reached: ECONNREFUSED', s.clock.now);
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
    // The node's error names the node (an internal address for a node of one's own): not the merchant's.
    expect((expectOk(r) as { chains: { chainId: string; lastError: string | null }[] }).chains.find((c) => c.chainId === '1')!.lastError).toBe(
      "the service could not read this chain's node at its last try (the operator's summary says why)",
    );
    expect(r.text).not.toContain('10.0.3.7');
  });

  it("the operator's summary on the ledger keeps the whole report", async () => {
    const summary = await s.service.summary({});
    expect(summary.chains.find((c) => c.chainId === '1')!.deepReorg).toBe(`${new Date(s.clock.now).toISOString()} ${REPORT}`);
  });
});

/**
 * The same report in the audit log (code review of the above): each order hit by the reorg gets
 * a `chain.deep_reorg` entry, which its merchant reads through the signed log. The entry held the
 * ledger-wide report, naming the first payment of all, another merchant's as likely as not. Each
 * entry now speaks of its own order's payments only.
 */
describe("a deep reorg in a merchant's audit log", () => {
  const h = useHarness();
  it("names the merchant's own payments, never another merchant's transaction", async () => {
    const { service, ledger } = h();
    const a = await addTestMerchant(service, 'A');
    const b = await addOtherMerchant(service, 'B');
    const oa = await order(service, { mchId: a.mchId, oid: 'a1', uid: 'u', amount: '1' });
    const ob = await order(service, { mchId: b.mchId, oid: 'b1', uid: 'u', amount: '1' });
    const theirs = evmTx(0xa11ce);
    const mine = evmTx(0xb0b);
    const rows = [
      { orderId: oa.id, txHash: theirs, logIndex: 0, blockNumber: 10, blockHash: evmTx(1) },
      { orderId: ob.id, txHash: mine, logIndex: 0, blockNumber: 11, blockHash: evmTx(2) },
    ];
    const report = `reorg deeper than 12 confirmations: 2 counted payment(s) in replaced blocks (first: tx ${theirs} in block 10); they stay credited, check them by hand`;
    await groupCommit(ledger.sqlite).submit(() => reportDeepReorg(ledger.db, { chainId: '1', actor: 'chain:1', now: T0, message: report, payments: rows as never }));
    const asB = service.as({ actor: `api:${b.mchId}`, nonce: { merchantId: b.mchId, value: 'l1', expiresAt: T0 + 5 * MINUTE } });
    const entry = (await asB.log({ mchId: b.mchId })).find((e) => e.action === 'chain.deep_reorg')!;
    expect(entry.detail).toEqual({
      chainId: '1',
      message: `a reorg deeper than the chain's confirmations replaced the block of 1 counted payment of this order (first: tx ${mine} in block 11); it stays credited`,
      payments: [{ txHash: mine, logIndex: 0, blockNumber: 11, blockHash: evmTx(2) }],
    });
    expect(JSON.stringify(entry)).not.toContain(theirs.slice(2));
  });
});
