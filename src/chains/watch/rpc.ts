/**
 * A plain Ethereum JSON-RPC client over an injected fetch (docs/decisions.md, "Reading the
 * chain"): every node error reaches the caller with its code and message, so the scanner can
 * tell "range too large" from a node that is down; several calls travel as one batch.
 */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<{
  ok: boolean;
  status: number;
  text(): Promise<string>;
}>;

/** The node answered this call with a JSON-RPC error. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`${method}: node error ${code}: ${rpcMessage.slice(0, 200)}`);
    this.name = 'RpcError';
  }
}

/** The node could not be reached, timed out, or answered something that is not JSON-RPC. */
export class RpcTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RpcTransportError';
  }
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** One answer of a batch: its result, or the node's error for that call alone. */
export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: RpcError };

export interface RpcClient {
  readonly url: string;
  call(method: string, params: unknown[]): Promise<unknown>;
  batch(calls: RpcCall[]): Promise<RpcOutcome[]>;
}

export interface RpcOptions {
  url: string;
  fetch?: Fetch;
  timeoutMs?: number;
}

/** The URL without credentials or query, for messages: an RPC URL often carries an API key. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname === '/' ? '' : u.pathname.replace(/\/[^/]{16,}$/, '/…');
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return 'the RPC endpoint';
  }
}

export function createRpcClient(opts: RpcOptions): RpcClient {
  const doFetch: Fetch = opts.fetch ?? ((url, init) => fetch(url, init));
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const where = redactUrl(opts.url);
  let nextId = 1;

  async function post(body: unknown): Promise<unknown> {
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), timeoutMs);
    let text: string;
    try {
      const res = await doFetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: ctrl.signal,
      });
      text = await res.text();
      if (!res.ok && !text.trimStart().startsWith('{') && !text.trimStart().startsWith('[')) {
        throw new RpcTransportError(`${where} answered HTTP ${res.status}`);
      }
    } catch (e) {
      if (e instanceof RpcTransportError) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const reason = ctrl.signal.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (e as Error).message);
      throw new RpcTransportError(`${where} cannot be reached: ${reason}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new RpcTransportError(`${where} answered something that is not JSON (${JSON.stringify(text.slice(0, 60))})`);
    }
  }

  function outcome(method: string, reply: unknown): RpcOutcome {
    if (typeof reply !== 'object' || reply === null) throw new RpcTransportError(`${where} answered ${method} with a malformed JSON-RPC reply`);
    const r = reply as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (r.error !== undefined && r.error !== null) {
      const code = typeof r.error.code === 'number' ? r.error.code : 0;
      const message = typeof r.error.message === 'string' ? r.error.message : JSON.stringify(r.error).slice(0, 200);
      return { ok: false, error: new RpcError(method, code, message) };
    }
    if (!('result' in r)) throw new RpcTransportError(`${where} answered ${method} with neither result nor error`);
    return { ok: true, result: r.result };
  }

  return {
    url: opts.url,
    async call(method, params) {
      const reply = await post({ jsonrpc: '2.0', id: nextId++, method, params });
      const o = outcome(method, reply);
      if (!o.ok) throw o.error;
      return o.result;
    },
    async batch(calls) {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const reply = await post(calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params })));
      if (!Array.isArray(reply)) {
        // Some nodes answer a whole batch with one error object (batching switched off).
        const single = outcome(calls[0]!.method, reply);
        if (!single.ok) throw single.error;
        throw new RpcTransportError(`${where} answered a batch with a single result`);
      }
      const byId = new Map<number, unknown>();
      for (const r of reply) if (r && typeof r === 'object' && typeof (r as { id?: unknown }).id === 'number') byId.set((r as { id: number }).id, r);
      return calls.map((c, i) => {
        const r = byId.get(first + i);
        if (r === undefined) throw new RpcTransportError(`${where} left ${c.method} out of a batch answer`);
        return outcome(c.method, r);
      });
    },
  };
}

/** Quantities are 0x-hex strings; anything else is garbage from the node. */
export function quantity(v: unknown, what: string): number {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(v)) throw new RpcTransportError(`the node answered ${what} with ${JSON.stringify(v)?.slice(0, 40)}, not a quantity`);
  const n = Number.parseInt(v.slice(2), 16);
  if (!Number.isSafeInteger(n)) throw new RpcTransportError(`${what} ${v} is beyond a safe integer`);
  return n;
}

export const hexQuantity = (n: number): string => `0x${n.toString(16)}`;
