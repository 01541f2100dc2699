/**
 * The derivation thread of `cryptopay serve` (src/chains/derive-ahead.ts): works out ranges of
 * addresses ahead of demand, so that creating an order finds its addresses ready. Only noble and Node's HMAC are loaded here (src/chains/ckd.ts, the same arithmetic as
 * the main thread) and src/chains/encode.ts.
 */
import { parentPort } from 'node:worker_threads';
import type { ChainType } from '../core/types.js';
import { type ChangeNode, hashRange, warmUpDerivation } from './ckd.js';
import { formatAddress } from './encode.js';

export interface RangeRequest {
  chain: ChainType;
  xpub: string;
  node: ChangeNode;
  start: number;
  count: number;
}
export type RangeReply = Omit<RangeRequest, 'node'> & ({ addresses: string[] } | { error: string });

warmUpDerivation();
parentPort!.on('message', ({ node, ...req }: RangeRequest) => {
  try {
    const hashes = hashRange(node, req.start, req.count);
    const addresses: string[] = new Array(req.count);
    for (let i = 0; i < req.count; i++) addresses[i] = formatAddress(req.chain, hashes.subarray(20 * i, 20 * i + 20));
    parentPort!.postMessage({ ...req, addresses } satisfies RangeReply);
  } catch (e) {
    parentPort!.postMessage({ ...req, error: (e as Error).message } satisfies RangeReply);
  }
});
