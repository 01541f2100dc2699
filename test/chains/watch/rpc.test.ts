import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../../../src/chains/registry.js';
import { TRANSFER_TOPIC, decodeTransfer, isRangeTooLarge, isRateLimited } from '../../../src/chains/watch/logs.js';
import { RpcError, RpcTransportError, createRpcClient, quantity, redactUrl } from '../../../src/chains/watch/rpc.js';
import { closedPort } from '../../helpers/closed-port.js';
import { handler } from '../../helpers/handler.js';

/** A node on 127.0.0.1 whose answer each test sets. */
let server: Server;
let url: string;
let answer: (body: any) => { status?: number; text: string; delayMs?: number };

beforeAll(async () => {
  server = createServer(handler(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const a = answer(JSON.parse(raw));
    if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    if (!res.destroyed) res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(a.text);
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/0123456789abcdef0123456789`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('the JSON-RPC client', () => {
  it('answers results, node errors with their code, and batches by id whatever their order', async () => {
    const rpc = createRpcClient({ url });
    answer = (b) => ({ text: JSON.stringify({ jsonrpc: '2.0', id: b.id, result: '0x10' }) });
    expect(quantity(await rpc.call('eth_blockNumber', []), 'head')).toBe(16);
    answer = (b) => ({ text: JSON.stringify({ jsonrpc: '2.0', id: b.id, error: { code: -32005, message: 'query returned more than 10000 results' } }) });
    const e = await rpc.call('eth_getLogs', [{}]).catch((x) => x);
    expect(e).toBeInstanceOf(RpcError);
    expect(isRangeTooLarge(e)).toBe(true);
    answer = (b: any[]) => ({ text: JSON.stringify([...b].reverse().map((c) => (c.method === 'bad' ? { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: 'nope' } } : { jsonrpc: '2.0', id: c.id, result: c.method }))) });
    const out = await rpc.batch([{ method: 'a', params: [] }, { method: 'bad', params: [] }, { method: 'c', params: [] }]);
    expect(out[0]).toEqual({ ok: true, result: 'a' });
    expect(out[1]!.ok).toBe(false);
    expect(isRangeTooLarge((out[1] as { error: RpcError }).error)).toBe(false);
    expect(out[2]).toEqual({ ok: true, result: 'c' });
  });

  it('tells a range too large from a rate limit: the first shrinks the range, the second backs off', () => {
    const e = (code: number, message: string) => new RpcError('eth_getLogs', code, message);
    const ranges = [
      e(-32005, 'query returned more than 10000 results'),
      e(-32005, 'query exceeds max block range 10'),
      e(-32000, 'exceed maximum block range: 5000'),
      e(-32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'),
      e(-32000, 'exceed max block range'),
    ];
    for (const x of ranges) expect([x.rpcMessage, isRangeTooLarge(x), isRateLimited(x)]).toEqual([x.rpcMessage, true, false]);
    const limits = [
      e(-32005, 'limit exceeded'),
      e(-32005, 'Limit exceeded.'),
      e(-32005, 'daily request count exceeded, request rate limited'),
      e(429, 'Too Many Requests'),
      e(-32000, 'Your app has exceeded its compute units per second capacity'),
      e(-32007, 'request limit reached'),
      e(-32016, 'rate limit exceeded'),
    ];
    for (const x of limits) expect([x.rpcMessage, isRangeTooLarge(x), isRateLimited(x)]).toEqual([x.rpcMessage, false, true]);
  });

  it('garbage, an HTTP error page, a timeout and a refused connection are transport errors that never show the URL path', async () => {
    const rpc = createRpcClient({ url, timeoutMs: 300 });
    answer = () => ({ text: '{"jsonrpc":"2.0","result":' });
    await expect(rpc.call('eth_blockNumber', [])).rejects.toThrow(RpcTransportError);
    answer = () => ({ status: 502, text: '<html>bad gateway</html>' });
    await expect(rpc.call('eth_blockNumber', [])).rejects.toThrow(/answered HTTP 502/);
    answer = () => ({ text: '{}', delayMs: 1000 });
    await expect(rpc.call('eth_blockNumber', [])).rejects.toThrow(/no answer within 300 ms/);
    answer = (b) => ({ text: JSON.stringify({ jsonrpc: '2.0', id: b.id, result: 'not hex' }) });
    await expect(rpc.call('eth_blockNumber', []).then((v) => quantity(v, 'eth_blockNumber'))).rejects.toThrow(/not a quantity/);
    const port = await closedPort();
    const down = createRpcClient({ url: `http://127.0.0.1:${port}/key/0123456789abcdef0123` });
    const e = (await down.call('eth_blockNumber', []).catch((x: unknown) => x)) as Error;
    expect(e).toBeInstanceOf(RpcTransportError);
    expect(e.message).toMatch(/cannot be reached: ECONNREFUSED/);
    expect(e.message).not.toContain('0123456789abcdef0123');
    expect(redactUrl('https://user:pw@node.example/v3/abcdefabcdefabcdefabcdef?x=1')).toBe('https://node.example/…');
  });

  it("an RPC URL in a message keeps its scheme and host only: a provider's key is never shown, whatever its place", () => {
    const key = '0123456789abcdef0123456789abcdef';
    for (const [url, shown] of [
      [`https://node.example/${key}/`, 'https://node.example/…'], // a key with a trailing slash
      [`https://node.example/v1/${key}/jsonrpc`, 'https://node.example/…'], // a key before a last segment
      ['https://mainnet.node.example/v3/SECRETKEY123', 'https://mainnet.node.example/…'], // a short key
      ['https://node.example:8545/', 'https://node.example:8545'],
      ['http://127.0.0.1:8545', 'http://127.0.0.1:8545'],
      [`https://${key}.rpc.example/`, 'https://***.rpc.example'], // a key as a host label
      ['https://3f2504e0-4f89-11d3-9a0c-0305e82c3301.rpc.example', 'https://***.rpc.example'], // a UUID
      ['https://arbitrum-mainnet.rpc.example/', 'https://arbitrum-mainnet.rpc.example'], // a network's name stays
      ['https://eth-mainnet.rpc-4.example/#frag', 'https://eth-mainnet.rpc-4.example'],
    ] as const) {
      expect(redactUrl(url), url).toBe(shown);
    }
  });
});

describe('Transfer logs', () => {
  const base = {
    address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    topics: [TRANSFER_TOPIC, `0x${'0'.repeat(24)}${'11'.repeat(20)}`, `0x${'0'.repeat(24)}${'ab'.repeat(20)}`],
    data: `0x${'0'.repeat(63)}5`, blockNumber: '0x7', blockHash: `0x${'cd'.repeat(32)}`, transactionHash: `0x${'EF'.repeat(32)}`, logIndex: '0x2',
  };
  it('decodes an ERC-20 Transfer and lower-cases what the node spelled', () => {
    expect(decodeTransfer(base)).toEqual({
      token: '0x5fbdb2315678afecb367f032d93f642f64180aa3', from: '11'.repeat(20), to: 'ab'.repeat(20), value: 5n,
      blockNumber: 7, blockHash: `0x${'cd'.repeat(32)}`, txHash: `0x${'ef'.repeat(32)}`, logIndex: 2,
    });
  });
  it('skips what is not a token payment: an ERC-721 transfer, a removed log, a dirty address topic', () => {
    expect(decodeTransfer({ ...base, topics: [...base.topics, `0x${'0'.repeat(63)}1`], data: '0x' })).toBeUndefined();
    expect(decodeTransfer({ ...base, removed: true })).toBeUndefined();
    expect(decodeTransfer({ ...base, topics: [TRANSFER_TOPIC, base.topics[1], `0x${'f'.repeat(64)}`] })).toBeUndefined();
  });
  it('refuses a log the node garbled', () => {
    expect(() => decodeTransfer({ ...base, blockHash: 'x' })).toThrow(RpcTransportError);
    expect(() => decodeTransfer('x')).toThrow(RpcTransportError);
  });
});

describe('watch settings in the chains config', () => {
  it('takes pollInterval as milliseconds or a duration, and startBlock; refuses nonsense', () => {
    const r = createRegistry({ chains: [{ chainId: 1, pollInterval: '500ms', startBlock: 19_000_000 }, { chainId: 5, chainType: 'EVM', name: 'G', pollInterval: 3000 }] });
    expect(r.chain(1)).toMatchObject({ pollIntervalMs: 500, startBlock: 19_000_000 });
    expect(r.chain(5)).toMatchObject({ pollIntervalMs: 3000 });
    expect(r.chain(56).pollIntervalMs).toBeUndefined();
    expect(() => createRegistry({ chains: [{ chainId: 1, pollInterval: '2 s' }] })).toThrow(/pollInterval/);
    expect(() => createRegistry({ chains: [{ chainId: 1, pollInterval: '2h' }] })).toThrow(/pollInterval/);
    expect(() => createRegistry({ chains: [{ chainId: 1, pollInterval: '10ms' }] })).toThrow(/pollInterval/);
    expect(() => createRegistry({ chains: [{ chainId: 1, startBlock: -1 }] })).toThrow(/startBlock/);
  });
});
