/**
 * The derivation thread of `cryptopay serve` (src/chains/derive-ahead.ts): works out ranges of
 * addresses ahead of demand so that creating an order finds its addresses ready. Addresses are
 * a pure function of (xpub, index): the same code as the main thread, on another core.
 */
import { parentPort } from 'node:worker_threads';
import type { ChainType } from '../core/types.js';
import { createDeriver, warmUpDerivation } from './derive.js';

export interface RangeRequest {
  chain: ChainType;
  xpub: string;
  start: number;
  count: number;
}
export type RangeReply = RangeRequest & ({ addresses: string[] } | { error: string });

warmUpDerivation();
parentPort!.on('message', (req: RangeRequest) => {
  try {
    const d = createDeriver(req.xpub);
    const addresses: string[] = new Array(req.count);
    for (let i = 0; i < req.count; i++) addresses[i] = req.chain === 'EVM' ? d.evm(req.start + i) : d.tron(req.start + i);
    parentPort!.postMessage({ ...req, addresses } satisfies RangeReply);
  } catch (e) {
    parentPort!.postMessage({ ...req, error: (e as Error).message } satisfies RangeReply);
  }
});
