import type { LocalPaymentService } from '../../store/local-service.js';
import { recordPayment } from '../../store/payments.js';
import { runWatchers, watchedChains } from './runner.js';
import type { TickResult } from './watcher.js';

/**
 * Starts the watchers of a ledger's chains (serve, watch). Returns a stop function that ends
 * them and gives their leases up, or undefined when no chain has an rpcUrl.
 */
export async function startWatching(
  service: LocalPaymentService,
  o: { only?: string[]; now: () => number; log: (line: string) => void; onTick?: (chainId: string, r: TickResult) => void },
): Promise<{ chains: string[]; stop: () => Promise<void> } | undefined> {
  const registry = await service.registry();
  const chains = watchedChains(registry, o.only);
  if (chains.length === 0) return undefined;
  const ac = new AbortController();
  const done = runWatchers({ ledger: service.ledger, registry, record: recordPayment, only: chains.map((c) => c.chainId), now: o.now, log: o.log, signal: ac.signal, onTick: o.onTick });
  return {
    chains: chains.map((c) => c.chainId),
    async stop() {
      ac.abort();
      await done;
    },
  };
}
