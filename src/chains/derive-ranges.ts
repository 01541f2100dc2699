import type { MessagePort } from 'node:worker_threads';
import type { ChainType } from '../core/types.js';
import { batchCurve, type ChangeNode, hashRange, nativeCurve, warmUpDerivation } from './ckd.js';
import { formatAddress } from './encode.js';

export interface RangeRequest {
  chain: ChainType;
  xpub: string;
  node: ChangeNode;
  start: number;
  count: number;
}
export type RangeReply = Omit<RangeRequest, 'node'> & ({ addresses: string[] } | { error: string });
/** 'close' ends the answering: what is queued is dropped and the port closes (src/core/end-worker.ts). */
export type RangeMessage = RangeRequest | 'close';

/**
 * Work is done this many addresses at a time, and the thread's messages (a 'close', new ranges)
 * are read between two slices: ~1-1.5 ms of work each. The batch addon (native/derive.c) shares
 * one inversion over the slice, ~9 µs a child at 128 (~14 at 32); libsecp256k1's tweak-add is one
 * call a child, ~22-40 µs; the noble path keeps 256, the batch over which its shared inversion
 * pays off (ckd.ts). (When the WAL checkpoints shared this thread, 256 held one up to ~14 ms:
 * bench/CHANGES.md, thirteenth round.)
 */
const SLICE_BATCH = 128;
const SLICE_NATIVE = 32;
const SLICE_NOBLE = 256;

/**
 * Answers the address ranges asked for on `port` (src/chains/derive-ahead.ts), in order, one
 * reply per range. Only src/chains/ckd.ts (the batch addon when it was built, else libsecp256k1
 * when its addon loads, else noble, the main thread's arithmetic), Node's HMAC and
 * src/chains/encode.ts are loaded for it.
 *
 * Once the port closes (the other side closed it, or 'close' came), the range being derived is
 * dropped after the slice it is on, and nothing more is scheduled: the thread's event loop
 * empties and the thread returns by itself, never stopped inside a call into the addon.
 */
export function answerRanges(port: Pick<MessagePort, 'on' | 'postMessage' | 'close'>): void {
  // The noble path's table of multiples of G (~100 ms, ~2 MB) only when it is the one used.
  const batched = batchCurve() !== null;
  const native = batched || nativeCurve() !== null;
  if (!native) warmUpDerivation();
  const SLICE = batched ? SLICE_BATCH : native ? SLICE_NATIVE : SLICE_NOBLE;
  const queue: RangeRequest[] = [];
  let addresses: string[] = [];
  let scheduled = false;
  const step = () => {
    scheduled = false;
    const req = queue[0];
    if (!req) return;
    const { node, ...head } = req;
    try {
      const from = req.start + addresses.length;
      const n = Math.min(SLICE, req.count - addresses.length);
      const hashes = hashRange(node, from, n);
      for (let i = 0; i < n; i++) addresses.push(formatAddress(req.chain, hashes.subarray(20 * i, 20 * i + 20)));
      if (addresses.length === req.count) {
        queue.shift();
        port.postMessage({ ...head, addresses } satisfies RangeReply);
        addresses = [];
      }
    } catch (e) {
      queue.shift();
      addresses = [];
      port.postMessage({ ...head, error: (e as Error).message } satisfies RangeReply);
    }
    next();
  };
  // setImmediate runs after the messages waiting on the thread's ports are read.
  const next = () => {
    if (!scheduled && queue.length > 0) {
      scheduled = true;
      setImmediate(step);
    }
  };
  const stop = () => {
    queue.length = 0;
    addresses = [];
  };
  port.on('close', stop);
  port.on('message', (req: RangeMessage) => {
    if (req === 'close') {
      stop();
      port.close();
      return;
    }
    queue.push(req);
    next();
  });
}
