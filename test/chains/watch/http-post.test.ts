import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, httpPost } from '../../../src/chains/watch/http-post.js';
import { createRpcClient } from '../../../src/chains/watch/rpc.js';
import { closedPort } from '../../helpers/closed-port.js';
import { handler } from '../../helpers/handler.js';

/**
 * The RPC client's POST over Node's own http client (src/chains/watch/http-post.ts), against a
 * node on 127.0.0.1: what fetch gave the client (compressed answers, keep-alive, the signal,
 * a refused connection's code) and the one thing it does differently (no redirect followed).
 */
let server: Server;
let base: string;
let reply: (req: IncomingMessage, body: string, res: ServerResponse) => Promise<void> | void;
const sockets = new Set<Socket>();
const seen: { headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  server = createServer(handler(async (req, res) => {
    sockets.add(req.socket);
    let body = '';
    for await (const c of req) body += c;
    seen.push({ headers: req.headers, body });
    await reply(req, body, res);
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const post = (body: string, signal: AbortSignal) =>
  httpPost(`${base}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
const never = () => new AbortController().signal;

describe("the RPC client's POST", () => {
  it('sends the body as JSON with its length, reads the answer, and keeps one connection for calls one after another', async () => {
    sockets.clear();
    seen.length = 0;
    reply = (_req, body, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: JSON.parse(body) }));
    for (let i = 0; i < 3; i++) {
      const res = await post(JSON.stringify({ i, text: 'é' }), never());
      expect([res.ok, res.status]).toEqual([true, 200]);
      expect(JSON.parse(await res.text())).toEqual({ echo: { i, text: 'é' } });
    }
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[0]!.headers['content-length']).toBe(String(Buffer.byteLength(seen[0]!.body)));
    expect(seen[0]!.headers['accept-encoding']).toBe('gzip, deflate, br');
    expect(sockets.size).toBe(1);
  });

  it('reads an answer the node compressed (gzip, deflate, br), as text and as a stream', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: Array.from({ length: 2000 }, (_, i) => ({ i, data: `0x${'ab'.repeat(32)}` })) });
    for (const [coding, pack] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync]] as const) {
      reply = (_req, _body, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(pack(Buffer.from(answer)));
      expect(await (await post('{}', never())).text()).toBe(answer);
      const streamed: Buffer[] = [];
      for await (const c of (await post('{}', never())).body!) streamed.push(Buffer.from(c));
      expect(Buffer.concat(streamed).toString()).toBe(answer);
    }
    // The whole client, on a compressed answer read one result element at a time.
    reply = (_req, body, res) => {
      const calls = JSON.parse(body) as { id: number }[];
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: [{ n: 1 }, { n: 2 }] })))));
    };
    const rpc = createRpcClient({ url: `${base}/rpc` });
    expect(await rpc.batch([{ method: 'eth_getLogs', params: [] }], { element: (x) => (x as { n: number }).n * 10 })).toEqual([{ ok: true, result: [10, 20] }]);
  });

  it('an answer coded some other way, or garbled, fails as an error; a redirect is the answer, not followed', async () => {
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-encoding': 'zstd' }).end('xx');
    await expect(post('{}', never())).rejects.toThrow(/zstd-coded/);
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all');
    await expect((await post('{}', never())).text()).rejects.toThrow();
    seen.length = 0;
    reply = (req, _body, res) => void res.writeHead(307, { location: `${base}/elsewhere` }).end();
    const res = await post('{}', never());
    expect([res.ok, res.status]).toEqual([false, 307]);
    await res.text();
    expect(seen.map((s) => s.headers.host)).toHaveLength(1);
  });

  it('an answer not read to its end (a decoding error) gives its connection up: twenty such calls, and the next call is answered', async () => {
    const garbage = Buffer.alloc(2 * 1024 * 1024, 7);
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-encoding': 'gzip' }).end(garbage);
    sockets.clear();
    // A call that found no free connection in 2 s fails with "aborted" here.
    for (let i = 0; i < 20; i++) {
      const res = await post('{}', AbortSignal.timeout(2_000));
      await expect(res.text()).rejects.toThrow(/incorrect header check/);
    }
    // The node sees each of those connections closed, none held open with its answer unread.
    await new Promise((r) => setTimeout(r, 100));
    expect([...sockets].filter((x) => !x.destroyed)).toHaveLength(0);
    expect(sockets.size).toBe(20);
    reply = (_req, _body, res) => void res.writeHead(200).end('{"ok":true}');
    expect(await (await post('{}', AbortSignal.timeout(2_000))).text()).toBe('{"ok":true}');
  });

  it('an answer that inflates past 64 MiB (a few hundred KB of gzip) is cut there, as text and as a stream, and its connection closed', async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_ANSWER_BYTES + 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(MAX_ANSWER_BYTES / 100);
    sockets.clear();
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-encoding': 'gzip' }).end(bomb);
    await expect((await post('{}', AbortSignal.timeout(10_000))).text()).rejects.toThrow(/larger than 64 MiB/);
    let seenBytes = 0;
    const read = async () => {
      for await (const c of (await post('{}', AbortSignal.timeout(10_000))).body!) seenBytes += c.length;
    };
    await expect(read()).rejects.toThrow(/larger than 64 MiB/);
    expect(seenBytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    // Through the client, as the watcher sees it: a transport error that says why.
    await expect(createRpcClient({ url: `${base}/rpc` }).call('eth_getTransactionReceipt', ['0x1'])).rejects.toThrow(/larger than 64 MiB/);
    await new Promise((r) => setTimeout(r, 100));
    expect([...sockets].filter((x) => !x.destroyed)).toHaveLength(0);
    // An answer of ordinary size still passes whole.
    const big = JSON.stringify({ result: 'x'.repeat(8 * 1024 * 1024) });
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(big));
    expect((await (await post('{}', AbortSignal.timeout(10_000))).text()).length).toBe(big.length);
  });

  it('the signal ends a call that waits for one of the pool\'s 16 connections', async () => {
    reply = () => new Promise(() => {});
    const holders = Array.from({ length: 16 }, () => new AbortController());
    const held = holders.map((c) => post('{}', c.signal).catch((e: Error) => e));
    const started = Date.now();
    const e = (await post('{}', AbortSignal.timeout(300)).catch((x: unknown) => x)) as Error;
    expect(e.message).toMatch(/aborted/);
    expect(Date.now() - started).toBeLessThan(3_000);
    for (const c of holders) c.abort();
    expect((await Promise.all(held)).every((x) => x instanceof Error)).toBe(true);
  });

  it('the signal cuts a node that does not answer, and one whose answer stops halfway', async () => {
    reply = () => new Promise(() => {});
    await expect(post('{}', AbortSignal.timeout(200))).rejects.toThrow(/aborted/);
    reply = (_req, _body, res) => void res.writeHead(200, { 'content-type': 'application/json' }).write('{"jsonrpc":"2.0","result":[');
    const res = await post('{}', AbortSignal.timeout(300));
    await expect(res.text()).rejects.toThrow(/aborted/);
  });

  it('a refused connection fails with the system code in its cause, as fetch reported it', async () => {
    const port = await closedPort();
    const e = (await httpPost(`http://127.0.0.1:${port}/`, { method: 'POST', headers: {}, body: '{}', signal: never() }).catch((x: unknown) => x)) as Error & { cause?: { code?: string } };
    expect(e.cause?.code).toBe('ECONNREFUSED');
    await expect(httpPost('ftp://127.0.0.1/', { method: 'POST', headers: {}, body: '{}', signal: never() })).rejects.toThrow(/not http or https/);
  });
});
