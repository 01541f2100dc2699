/**
 * The derivation thread of `cryptopay serve` (src/chains/derive-ahead.ts): works out the key
 * hashes of ranges of addresses ahead of demand, so that creating an order finds its addresses
 * ready. Only noble and Node's HMAC are loaded here (src/chains/ckd.ts, the same arithmetic as
 * the main thread); the main thread turns a hash into an address.
 */
import { parentPort } from 'node:worker_threads';
import type { ChainType } from '../core/types.js';
import { type ChangeNode, hashRange, warmUpDerivation } from './ckd.js';

export interface RangeRequest {
  chain: ChainType;
  xpub: string;
  node: ChangeNode;
  start: number;
  count: number;
}
export type RangeReply = Omit<RangeRequest, 'node'> & ({ hashes: Uint8Array } | { error: string });

warmUpDerivation();
parentPort!.on('message', ({ node, ...req }: RangeRequest) => {
  try {
    const hashes = hashRange(node, req.start, req.count);
    parentPort!.postMessage({ ...req, hashes } satisfies RangeReply, [hashes.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ ...req, error: (e as Error).message } satisfies RangeReply);
  }
});
