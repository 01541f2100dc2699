import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handler } from '../../helpers/handler.js';

/**
 * A JSON-RPC proxy on 127.0.0.1 in front of a real anvil, to play the nodes a watcher meets in
 * production: one that is down (connections cut), one that answers garbage, and one that refuses
 * eth_getLogs over more than `maxRange` blocks as public RPC providers do. Stopped by the test.
 */
export interface RpcProxy {
  url: string;
  mode: 'pass' | 'down' | 'garbage';
  maxRange: number;
  /** eth_getLogs ranges refused so far. */
  refusedRanges: number;
  /** The next this many eth_getLogs calls are refused as a rate limiter does (-32005 "limit exceeded"). */
  rateLimited: number;
  /** Every eth_getLogs range asked for, in blocks. */
  spans: number[];
  /** Awaited before an eth_getLogs call is forwarded (its number, from 1): a test holds a range in flight. */
  beforeLogs?: (n: number) => Promise<void>;
  /** Blocks' timestamps answered in milliseconds, as some java-tron versions answer TRON's own clock. */
  millisTimestamps: boolean;
  /**
   * The node plays this many blocks behind anvil (syncing, restarted, a load balancer's slower
   * backend): its head is that much lower, and it answers nothing of the blocks above it (no
   * header, no logs, no receipt).
   */
  behind: number;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const state = { mode: 'pass' as RpcProxy['mode'], maxRange: Infinity, refusedRanges: 0, rateLimited: 0, spans: [] as number[], logsCalls: 0, beforeLogs: undefined as RpcProxy['beforeLogs'], millisTimestamps: false, behind: 0 };
  const server: Server = createServer(handler(async (req, res) => {
    if (state.mode === 'down') {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (state.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","result":');
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const calls: any[] = Array.isArray(body) ? body : [body];
    const refused = new Map<unknown, unknown>();
    for (const c of calls) {
      if (c.method !== 'eth_getLogs') continue;
      const f = c.params[0];
      const span = Number.parseInt(f.toBlock, 16) - Number.parseInt(f.fromBlock, 16) + 1;
      state.spans.push(span);
      await state.beforeLogs?.(++state.logsCalls);
      if (state.rateLimited > 0) {
        state.rateLimited--;
        refused.set(c.id, { jsonrpc: '2.0', id: c.id, error: { code: -32005, message: 'limit exceeded' } });
        continue;
      }
      if (span > state.maxRange) {
        state.refusedRanges++;
        refused.set(c.id, { jsonrpc: '2.0', id: c.id, error: { code: -32005, message: `query exceeds max block range ${state.maxRange}` } });
      }
    }
    // Behind: the calls rewritten to what a node that far back knows, their answers cut to it.
    let known = Infinity;
    if (state.behind > 0) {
      const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] }) });
      known = Number.parseInt(((await r.json()) as { result: string }).result, 16) - state.behind;
      const hex = `0x${known.toString(16)}`;
      for (const c of calls) {
        if (c.method === 'eth_getBlockByNumber' && !/^0x/.test(c.params[0])) c.params[0] = hex;
        if (c.method === 'eth_getLogs') {
          const f = c.params[0];
          if (Number.parseInt(f.fromBlock, 16) > known) refused.set(c.id, { jsonrpc: '2.0', id: c.id, result: [] });
          else if (Number.parseInt(f.toBlock, 16) > known) f.toBlock = hex;
        }
      }
    }
    const forward = calls.filter((c) => !refused.has(c.id));
    let answers: any[] = [];
    if (forward.length) {
      const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forward) });
      answers = (await r.json()) as any[];
    }
    const byId = new Map(answers.map((a) => [a.id, a]));
    for (const c of calls) {
      const block = byId.get(c.id)?.result;
      if (state.millisTimestamps && /^eth_getBlockBy(Hash|Number)$/.test(c.method) && block && typeof block.timestamp === 'string') {
        block.timestamp = `0x${(BigInt(block.timestamp) * 1000n).toString(16)}`;
      }
    }
    for (const c of calls) {
      const a = byId.get(c.id);
      if (!a || known === Infinity) continue;
      if (c.method === 'eth_blockNumber') a.result = `0x${known.toString(16)}`;
      const at = a.result && typeof a.result === 'object' ? Number.parseInt(a.result.number ?? a.result.blockNumber ?? '0x0', 16) : -1;
      if (/^eth_getBlockBy(Hash|Number)$|^eth_getTransactionReceipt$/.test(c.method) && at > known) a.result = null;
    }
    const out = calls.map((c) => refused.get(c.id) ?? byId.get(c.id));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? out : out[0]));
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    get maxRange() {
      return state.maxRange;
    },
    set maxRange(n) {
      state.maxRange = n;
    },
    get refusedRanges() {
      return state.refusedRanges;
    },
    get rateLimited() {
      return state.rateLimited;
    },
    set rateLimited(n) {
      state.rateLimited = n;
    },
    get spans() {
      return state.spans;
    },
    get beforeLogs() {
      return state.beforeLogs;
    },
    set beforeLogs(f) {
      state.beforeLogs = f;
    },
    get behind() {
      return state.behind;
    },
    set behind(n) {
      state.behind = n;
    },
    get millisTimestamps() {
      return state.millisTimestamps;
    },
    set millisTimestamps(b) {
      state.millisTimestamps = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
