import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../../src/chains/registry.js';
import { RpcError } from '../../../src/chains/watch/rpc.js';
import { runWatchers } from '../../../src/chains/watch/runner.js';
import type { PaymentSink } from '../../../src/chains/watch/watcher.js';
import { recordPayment } from '../../../src/store/payments.js';
import { addOtherMerchant, order, useHarness } from '../../helpers/service.js';
import { SimChain } from './sim-chain.js';

const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3';

/** The simulated node behind the runner's own JSON-RPC client, as a fetch. */
const fetchOf = (sim: SimChain) => async (_url: string, init: { body: string }) => {
  if (sim.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
  const body = JSON.parse(init.body) as { id: number; method: string; params: unknown[] } | { id: number; method: string; params: unknown[] }[];
  const answer = (c: { id: number; method: string; params: unknown[] }) => {
    try {
      return { jsonrpc: '2.0', id: c.id, result: sim.handle(c.method, c.params as any[]) };
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      return { jsonrpc: '2.0', id: c.id, error: { code: e.code, message: e.rpcMessage } };
    }
  };
  const text = JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body));
  return { ok: true, status: 200, text: async () => text };
};

describe('the watchers serve runs', () => {
  const h = useHarness();

  // An outside attacker review: the ledger locked by another process was logged as the error it
  // is, and the recovery after it as "the node answers again", blaming the node.
  it('say the node answers again after a node error, and that they scan again after an error of the ledger', async () => {
    const { service, ledger } = h();
    const { mchId } = await addOtherMerchant(service);
    const o = await order(service, { mchId, uid: 'u', amount: '10' });
    const sim = new SimChain(3, () => h().clock.now);
    const registry = createRegistry({
      chains: [{ chainId: 31337, chainType: 'EVM', name: 'Local', confirmations: 1, rpcUrl: 'http://127.0.0.1:1', pollInterval: 50, startBlock: 0 }],
      tokens: [{ chainId: 31337, address: TOKEN, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    });
    let locked = 1;
    const record: PaymentSink = (tx, p, ctx) => {
      if (locked-- > 0) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      return recordPayment(tx, p, ctx);
    };
    const lines: string[] = [];
    const stop = new AbortController();
    const until = async (what: RegExp) => {
      for (let i = 0; i < 400 && !lines.some((l) => what.test(l)); i++) await new Promise((r) => setTimeout(r, 10));
      expect(lines.join('\n')).toMatch(what);
    };
    const run = runWatchers({ ledger, registry, record, now: () => h().clock.now, log: (l) => lines.push(l), signal: stop.signal, fetch: fetchOf(sim) as never });
    try {
      sim.mine([{ token: TOKEN, to: o.addresses.EVM!, value: 10_000_000n }]);
      await until(/chain 31337: database is locked; retrying in \d+ ms/);
      await until(/chain 31337: scanning again/);
      expect(lines.join('\n')).not.toMatch(/answers again/);
      for (let i = 0; i < 200 && (await service.getOrderStatus(o.id)) !== 'PAID'; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await service.getOrderStatus(o.id)).toBe('PAID');
      // A node that cannot be reached, then can: that one is the node's.
      sim.down = true;
      await until(/chain 31337: .*cannot be reached.*; retrying in \d+ ms/);
      sim.down = false;
      await until(/chain 31337: the node answers again/);
    } finally {
      stop.abort();
      await run;
    }
  });
});
