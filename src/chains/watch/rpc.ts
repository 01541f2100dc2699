import { httpPost } from './http-post.js';

/**
 * A plain Ethereum JSON-RPC client over an injected fetch, by default Node's own http client
 * (http-post.ts; docs/decisions.md, "Reading the chain"): every node error reaches the caller
 * with its code and message, so the scanner can tell "range too large" from a node that is
 * down; several calls travel as one batch.
 */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<{
  ok: boolean;
  status: number;
  text(): Promise<string>;
  /** The body as it arrives (fetch's ReadableStream): answers read one result element at a time use it. */
  body?: AsyncIterable<Uint8Array> | null;
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

export interface BatchOptions {
  /**
   * Applied to every element of a reply's `result` array as it is read (eth_getLogs: each log):
   * the element is parsed on its own and only what this returns is kept, so an answer of
   * thousands of logs never exists as one tree of objects (bench/CHANGES.md, third round:
   * memory). It must not throw. A client may ignore it and answer the elements as parsed; the
   * caller accepts both.
   */
  element?: (raw: unknown) => unknown;
  /**
   * Called once the node's answer starts to arrive (its HTTP status and headers), before its
   * body is read: the node has done its work on the request. A client may never call it. It must
   * not throw.
   */
  onAnswer?: () => void;
}

export interface RpcClient {
  readonly url: string;
  call(method: string, params: unknown[]): Promise<unknown>;
  batch(calls: RpcCall[], opts?: BatchOptions): Promise<RpcOutcome[]>;
}

export interface RpcOptions {
  url: string;
  fetch?: Fetch;
  timeoutMs?: number;
}

/**
 * An RPC URL as messages show it: its scheme and host, never its path, query or credentials.
 * Providers put their API key anywhere in the path (`/v3/KEY`, `/KEY/`, `/v1/KEY/jsonrpc`), and
 * these messages reach merchants (a confirm that cannot read the chain, the summary's chains),
 * so no path is shown at all; a host label that looks like a key (16 or more characters with a
 * digit: a hex key, a UUID) is masked too. The chain's id and name say which node it is.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const host = u.host
      .split('.')
      .map((label) => (label.length >= 16 && /\d/.test(label) ? '***' : label))
      .join('.');
    return `${u.protocol}//${host}${u.pathname === '/' ? '' : '/…'}`;
  } catch {
    return 'the RPC endpoint';
  }
}

export function createRpcClient(opts: RpcOptions): RpcClient {
  const doFetch: Fetch = opts.fetch ?? httpPost;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const where = redactUrl(opts.url);
  let nextId = 1;

  async function post(body: unknown, element?: (raw: unknown) => unknown, onAnswer?: () => void): Promise<unknown> {
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), timeoutMs);
    let text = '';
    let read: { value: unknown } | { error: unknown; head: string } | undefined;
    try {
      const res = await doFetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: ctrl.signal,
      });
      onAnswer?.();
      if (element && res.ok && res.body) {
        // Read as it arrives: neither the text nor its tree of objects is ever whole in memory.
        read = await readReplies(res.body, element);
      } else {
        text = await res.text();
        if (!res.ok && !text.trimStart().startsWith('{') && !text.trimStart().startsWith('[')) {
          throw new RpcTransportError(`${where} answered HTTP ${res.status}`);
        }
      }
    } catch (e) {
      if (e instanceof RpcTransportError) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const reason = ctrl.signal.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (e as Error).message);
      throw new RpcTransportError(`${where} cannot be reached: ${reason}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
    if (read && 'value' in read) return read.value;
    const notJson = (head: string) => new RpcTransportError(`${where} answered something that is not JSON (${JSON.stringify(head.slice(0, 60))})`);
    if (read) throw notJson(read.head);
    try {
      return element ? parseReplies(text, element) : JSON.parse(text);
    } catch {
      throw notJson(text);
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
    async batch(calls, opts) {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const reply = await post(
        calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params })),
        opts?.element,
        opts?.onAnswer,
      );
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

/**
 * JSON.parse of a JSON-RPC answer (one reply object, or a batch: an array of them) in which every
 * element of a reply's `"result"` array is parsed on its own and replaced at once by
 * `element(parsed)`: the same answer as `JSON.parse(text)` with those elements mapped, and the
 * same refusals (every element must be JSON on its own, and the text outside the result arrays
 * is parsed as a whole with each such array emptied). A result array whose key this reader does
 * not see as "result" (written with escapes) is mapped after the parse, as is the last of
 * several "result" keys of one reply (JSON.parse keeps the last).
 *
 * Why: a range's eth_getLogs answer is ~3.5 MB of text; as one string and then one tree of
 * objects (~10 strings per log) it is alive long enough to be promoted out of the young
 * generation, and the old generation and its large-object space grow with every range. Read from
 * the body's chunks one log at a time, only what `element` keeps outlives its log.
 */
export class ReplyReader {
  private pending = '';
  /** Scan position in `pending`; everything before it is processed. */
  private pos = 0;
  /** Where in `pending` the text not yet copied to the skeleton starts; -1 inside a result array. */
  private skelFrom = 0;
  private skeleton = '';
  private readonly stack: number[] = [];
  private top = -1;
  private replyDepth = 0;
  /** Index of the reply (batch element) being read; whether the batch's next element is still to start. */
  private reply = -1;
  private nextElement = true;
  /** The reply level's last string, while a ':' may still make it a key. */
  private lastString: string | undefined;
  private key: string | undefined;
  private splitting: { reply: number; items: unknown[] } | undefined;
  private elementStart = -1;
  /** The element before was read whole by the fast path: only ',' or ']' may follow. */
  private elementDone = false;
  /** A string whose closing quote is not read yet: where it started, and where to look on. */
  private openString = -1;
  private searchFrom = -1;
  private readonly arrays: { reply: number; items: unknown[] }[] = [];
  private readonly repeated = new Set<number>();
  private readonly split = new Set<number>();
  /** The answer's first characters, for messages. */
  head = '';

  constructor(private readonly element: (raw: unknown) => unknown) {}

  push(chunk: string): void {
    if (this.head.length < 60) this.head += chunk.slice(0, 60 - this.head.length);
    this.pending += chunk;
    this.scan();
    // Drop what is processed: the skeleton keeps what lies outside the result arrays.
    let cut = this.pos;
    if (this.openString >= 0) cut = Math.min(cut, this.openString);
    if (this.elementStart >= 0) cut = Math.min(cut, this.elementStart);
    if (this.skelFrom >= 0) {
      this.skeleton += this.pending.slice(this.skelFrom, cut);
      this.skelFrom = 0;
    }
    if (cut > 0) {
      this.pending = this.pending.slice(cut);
      this.pos -= cut;
      if (this.openString >= 0) {
        this.openString -= cut;
        this.searchFrom -= cut;
      }
      if (this.elementStart >= 0) this.elementStart -= cut;
    }
  }

  end(): unknown {
    if (this.openString >= 0 || this.stack.length !== 0 || this.splitting) throw new SyntaxError('the answer ends early');
    const parsed = JSON.parse(this.skeleton + this.pending) as unknown;
    const replies = this.top === OPEN_ARRAY ? (parsed as unknown[]) : [parsed];
    for (const a of this.arrays) {
      if (this.repeated.has(a.reply)) continue;
      const r = replies[a.reply] as { result?: unknown };
      // Cannot happen: that reply's only "result" is the array emptied here.
      if (!r || typeof r !== 'object' || !Array.isArray(r.result) || r.result.length !== 0) throw new Error('ReplyReader lost a result array');
      r.result = a.items;
    }
    for (const [k, r] of replies.entries()) if (!this.split.has(k) || this.repeated.has(k)) mapResult(r, this.element);
    return parsed;
  }

  private scan(): void {
    const text = this.pending;
    const n = text.length;
    let i = this.pos;
    if (this.top < 0) {
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      if (i === n) {
        this.pos = i;
        return;
      }
      this.top = text.charCodeAt(i);
      // Anything but an object or an array is left to JSON.parse (a bare value has no result).
      this.replyDepth = this.top === OPEN_ARRAY ? 2 : 1;
    }
    const stack = this.stack;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE || this.openString >= 0) {
        const startQ = this.openString >= 0 ? this.openString : i;
        let j = this.openString >= 0 ? this.searchFrom : i;
        for (;;) {
          j = text.indexOf('"', j + 1);
          if (j < 0) break;
          let b = 0;
          while (text.charCodeAt(j - 1 - b) === BACKSLASH) b++;
          if (b % 2 === 0) break;
        }
        if (j < 0) {
          // The string goes on in the next chunk: look on from here (a backslash may end this one).
          this.openString = startQ;
          this.searchFrom = Math.max(startQ, n - 2);
          this.pos = n;
          return;
        }
        this.openString = -1;
        const depth = stack.length;
        if (this.top === OPEN_ARRAY && depth === 1 && this.nextElement) {
          this.reply++;
          this.nextElement = false;
        }
        if (depth === this.replyDepth && stack[depth - 1] === OPEN_OBJECT) this.lastString = text.slice(startQ, j + 1);
        if (this.splitting && depth === this.replyDepth + 1 && this.elementStart < 0) {
          if (this.elementDone) throw new SyntaxError('two elements without a comma');
          this.elementStart = startQ;
        }
        i = j;
        continue;
      }
      if (isSpace(c)) continue;
      const depth = stack.length;
      if (this.splitting && depth === this.replyDepth + 1) {
        // A result array at its own level: an element runs from its first character to ',' or ']'.
        if (c === COMMA || c === CLOSE_ARRAY) {
          if (this.elementStart >= 0) this.splitting.items.push(this.element(JSON.parse(text.slice(this.elementStart, i))));
          else if (!this.elementDone && (c === COMMA || this.splitting.items.length > 0)) throw new SyntaxError('an empty element');
          this.elementStart = -1;
          this.elementDone = false;
          if (c === CLOSE_ARRAY) {
            stack.pop();
            this.arrays.push(this.splitting);
            this.splitting = undefined;
            this.skelFrom = i;
          }
          continue;
        }
        if (this.elementStart < 0) {
          if (this.elementDone) throw new SyntaxError('two elements without a comma');
          // Fast path for an object element (a log): up to the first '}' after it, if that much
          // is here and parses. If it parses, it is the element: JSON's tokens read left to right,
          // so the whole text's parse ends this object at the same '}'. If not (a '}' inside a
          // string, an object inside it, a body not yet arrived), the scan below reads it.
          if (c === OPEN_OBJECT) {
            const close = text.indexOf('}', i + 1);
            const value = close < 0 ? NOT_PARSED : parseOrNot(text.slice(i, close + 1));
            if (value !== NOT_PARSED) {
              this.splitting.items.push(this.element(value));
              this.elementDone = true;
              i = close;
              continue;
            }
          }
          this.elementStart = i;
        }
      }
      // A batch's elements, counted so that each reply's index is its index in the batch.
      if (this.top === OPEN_ARRAY && depth === 1) {
        if (c === COMMA) this.nextElement = true;
        else if (c !== CLOSE_ARRAY && this.nextElement) {
          this.reply++;
          this.nextElement = false;
        }
      }
      if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (this.top === OPEN_OBJECT && depth === 0) this.reply++;
        if (depth === this.replyDepth && stack[depth - 1] === OPEN_OBJECT && c === OPEN_ARRAY && this.key === '"result"') {
          if (!this.split.has(this.reply)) {
            this.split.add(this.reply);
            this.splitting = { reply: this.reply, items: [] };
            this.elementStart = -1;
            this.skeleton += text.slice(this.skelFrom, i + 1);
            this.skelFrom = -1;
          }
        }
        stack.push(c);
        this.key = undefined;
        this.lastString = undefined;
        continue;
      }
      if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (stack.pop() !== (c === CLOSE_ARRAY ? OPEN_ARRAY : OPEN_OBJECT)) throw new SyntaxError('brackets do not match');
        this.key = undefined;
        this.lastString = undefined;
        continue;
      }
      if (depth === this.replyDepth) {
        if (c === COLON) {
          this.key = this.lastString;
          // "result" again in a reply whose result array was read: JSON.parse keeps the last one.
          if (this.key === '"result"' && this.split.has(this.reply)) this.repeated.add(this.reply);
        } else this.key = undefined;
        this.lastString = undefined;
      }
    }
    this.pos = i;
  }
}

/**
 * A body read through a ReplyReader as its chunks arrive. A failure to receive it throws (the
 * caller's "cannot be reached"); an answer that is not JSON is returned as an error with its
 * first characters, and the rest of the body is not read.
 */
async function readReplies(body: AsyncIterable<Uint8Array>, element: (raw: unknown) => unknown): Promise<{ value: unknown } | { error: unknown; head: string }> {
  const reader = new ReplyReader(element);
  const utf8 = new TextDecoder();
  let error: unknown;
  for await (const chunk of body) {
    try {
      reader.push(utf8.decode(chunk, { stream: true }));
    } catch (e) {
      error = e;
      break;
    }
  }
  if (error === undefined) {
    try {
      reader.push(utf8.decode());
      return { value: reader.end() };
    } catch (e) {
      error = e;
    }
  }
  return { error, head: reader.head };
}

/** parseReplies on a whole text (and the tests' entry). */
export function parseReplies(text: string, element: (raw: unknown) => unknown): unknown {
  const r = new ReplyReader(element);
  r.push(text);
  return r.end();
}

const NOT_PARSED = Symbol('not parsed');

function parseOrNot(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_PARSED;
  }
}

function mapResult(r: unknown, element: (raw: unknown) => unknown): void {
  if (r && typeof r === 'object' && !Array.isArray(r) && Array.isArray((r as { result?: unknown }).result)) {
    const x = r as { result: unknown[] };
    x.result = x.result.map((e) => element(e));
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
