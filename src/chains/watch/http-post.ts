import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream';
import { text } from 'node:stream/consumers';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip, type Inflate, type BrotliDecompress } from 'node:zlib';
import type { Fetch } from './rpc.js';

/**
 * The JSON-RPC client's POST over node:http and node:https (bench/CHANGES.md, twelfth round):
 * what the RPC client asks of fetch, without loading undici, fetch's engine, into serve. undici
 * and the web streams it answers with cost serve ~6-11 MB of RSS for one call a second; Node's
 * own client is already loaded (the callbacks are sent with it).
 *
 * As fetch did: one keep-alive pool per protocol, the answer's body compressed (gzip, deflate,
 * br) when the node offers it, the signal cutting the request and the reading of the answer, and
 * a failure to reach the node reported as an error whose `cause` carries the system's code
 * (ECONNREFUSED, ENOTFOUND...). An answer not read to its end (a decoding error, a reader that
 * gave up on it, the signal) ends its connection, which would otherwise stay out of the pool
 * until the node closed it: with all of a pool's connections held so, every later call waited
 * for one, and Node 20 does not end a request that waits for a pooled connection when its
 * signal aborts, so the signal is watched here. Unlike fetch, a redirect is not followed: it is
 * the node's answer (a JSON-RPC endpoint that redirects a POST elsewhere is not one to follow
 * silently); and credentials in the URL are sent as Basic authentication (fetch refused them).
 */
const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 16 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 16 }),
};

const decoders: Record<string, () => Gunzip | Inflate | BrotliDecompress> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * The most an answer may hold, decompressed: ~20 times the largest the watcher asks for (a range
 * is sized to ~5,000 logs, ~3.5 MB). A node (or what stands in its place) that sends more, such
 * as a few hundred KB of gzip that inflate to gigabytes, would otherwise take serve's memory.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** The answer's body as it arrives, decompressed if it came compressed, at most MAX_ANSWER_BYTES. */
function bodyOf(res: IncomingMessage): AsyncIterable<Uint8Array> {
  const coding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (!coding || coding === 'identity') return capped(res);
  const decode = decoders[coding];
  if (!decode) {
    res.destroy();
    throw new Error(`the answer is ${coding}-coded, which this client did not ask for`);
  }
  // Either end failing or ended early ends both: the connection is then closed, not held.
  return capped(pipeline(res, decode(), () => {}) as unknown as AsyncIterable<Uint8Array>);
}

/** Leaving the loop early (the throw) ends the stream, and with it the connection. */
async function* capped(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
    yield chunk;
  }
}

export const httpPost: Fetch = (url, init) =>
  new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch (e) {
      reject(new Error('invalid URL', { cause: e }));
      return;
    }
    const tls = u.protocol === 'https:';
    if (!tls && u.protocol !== 'http:') {
      reject(new Error(`${u.protocol} is not http or https`));
      return;
    }
    const { signal } = init;
    const aborted = () => new Error(`aborted${signal.reason instanceof Error ? `: ${signal.reason.message}` : ''}`, { cause: signal.reason });
    if (signal.aborted) {
      reject(aborted());
      return;
    }
    const body = Buffer.from(init.body, 'utf8');
    const req = (tls ? httpsRequest : httpRequest)(u, {
      method: init.method,
      headers: { 'user-agent': 'cryptopay', ...init.headers, 'content-length': body.length, 'accept-encoding': 'gzip, deflate, br' },
      agent: tls ? agents.https : agents.http,
    }, (res) => {
      res.once('close', () => signal.removeEventListener('abort', onAbort));
      let stream: AsyncIterable<Uint8Array>;
      try {
        stream = bodyOf(res);
      } catch (e) {
        reject(e);
        return;
      }
      const status = res.statusCode ?? 0;
      resolve({ ok: status >= 200 && status < 300, status, body: stream, text: () => text(stream) });
    });
    // Ends the request wherever it is: waiting for a pooled connection, sent, or its answer half
    // read (whose reader then fails).
    const onAbort = () => {
      const e = aborted();
      reject(e);
      req.destroy(e);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e) => {
      signal.removeEventListener('abort', onAbort);
      reject(new Error('the request failed', { cause: e }));
    });
    req.end(body);
  });
