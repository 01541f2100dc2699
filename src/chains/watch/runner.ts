import { hostname } from 'node:os';
import { AppError } from '../../core/errors.js';
import { randomBytes } from 'node:crypto';
import type { Ledger } from '../../store/db.js';
import { LeaseLost } from '../../store/chain-state.js';
import type { Registry } from '../registry.js';
import { createRpcClient, redactUrl, RpcError, RpcTransportError, type Fetch } from './rpc.js';
import { ChainWatcher, type PaymentSink, type TickResult } from './watcher.js';

export interface RunWatchersOptions {
  ledger: Ledger;
  registry: Registry;
  record: PaymentSink;
  /** Only these chains (`watch --chain`); default every chain with an rpcUrl. */
  only?: string[];
  now: () => number;
  log: (line: string) => void;
  signal: AbortSignal;
  fetch?: Fetch;
  onTick?: (chainId: string, r: TickResult) => void;
}

/** The most a failing node is waited for before the next attempt. */
const MAX_BACKOFF_MS = 60_000;

export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The chains a watcher runs for: every chain with an rpcUrl, or the ones asked for. */
export function watchedChains(registry: Registry, only?: string[]) {
  // A chain without tokens is never scanned: eth_getLogs with an empty address list means every
  // contract's Transfer logs, the whole chain's traffic.
  const hasTokens = (id: string) => registry.tokens().some((t) => t.chainId === id);
  const all = registry.chains().filter((c) => c.rpcUrl && hasTokens(c.chainId));
  if (!only || only.length === 0) return all;
  return only.map((id) => {
    const c = registry.chain(id);
    if (!c.rpcUrl) throw new AppError('invalid', `chain ${c.chainId} (${c.name}) has no rpcUrl in the chains config: nothing to watch`);
    if (!hasTokens(c.chainId)) throw new AppError('invalid', `chain ${c.chainId} (${c.name}) has no token in the registry: nothing to watch`);
    return c;
  });
}

/**
 * Runs one watcher per chain until the signal aborts. A node that is down, slow or answers
 * garbage never ends this: the error is kept in the ledger (`cryptopay chains`), written once to
 * the log, and the chain is retried with a growing delay.
 */
export async function runWatchers(o: RunWatchersOptions): Promise<void> {
  const holder = leaseHolder();
  const chains = watchedChains(o.registry, o.only);
  await Promise.all(
    chains.map(async (chain) => {
      const poll = chain.pollIntervalMs ?? 2_000;
      const watcher = new ChainWatcher({
        chain, tokens: o.registry.tokens().filter((t) => t.chainId === chain.chainId),
        rpc: createRpcClient({ url: chain.rpcUrl!, fetch: o.fetch, timeoutMs: Math.max(5_000, 2 * poll) }),
        ledger: o.ledger, record: o.record, holder, now: o.now, log: o.log,
        onProgress: o.onTick && ((nextBlock, head) => o.onTick!(chain.chainId, { nextBlock, head, caughtUp: nextBlock > head, counted: 0 })),
      });
      o.log(`watching chain ${chain.chainId} (${chain.name}) at ${redactUrl(chain.rpcUrl!)}, ${chain.confirmations} confirmation${chain.confirmations === 1 ? '' : 's'}, every ${poll} ms`);
      let failures = 0;
      // Whether the last failure was the node's (down, garbage, an error answer) or this side's
      // (the ledger locked by another process): the recovery is said of the one that failed.
      let nodeFailed = false;
      let lastMessage = '';
      let leasedBy: string | undefined;
      while (!o.signal.aborted) {
        let delay = poll;
        try {
          const r = await watcher.tick();
          if (failures > 0) o.log(`chain ${chain.chainId}: ${nodeFailed ? 'the node answers again' : 'scanning again'}`);
          failures = 0;
          lastMessage = '';
          if (r.leasedBy !== leasedBy) {
            if (r.leasedBy) o.log(`chain ${chain.chainId}: scanned by ${r.leasedBy}; this process stands by`);
            leasedBy = r.leasedBy;
          }
          o.onTick?.(chain.chainId, r);
          if (!r.caughtUp) delay = 0;
        } catch (e) {
          const message = (e as Error).message ?? String(e);
          if (e instanceof LeaseLost) {
            o.log(message);
          } else {
            failures++;
            nodeFailed = e instanceof RpcTransportError || e instanceof RpcError;
            delay = Math.min(MAX_BACKOFF_MS, poll * 2 ** Math.min(failures, 10));
            if (message !== lastMessage) o.log(`chain ${chain.chainId}: ${message}; retrying in ${delay} ms`);
            lastMessage = message;
            await watcher.recordError(message).catch(() => {});
          }
        }
        if (delay > 0) await sleep(delay, o.signal);
      }
      await watcher.release().catch(() => {});
    }),
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
