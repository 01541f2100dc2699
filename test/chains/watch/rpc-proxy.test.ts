import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { startRpcProxy } from './rpc-proxy.js';

it('the test proxy, when the node behind it resets the connection, cuts its client off instead of failing the run', async () => {
  // A "node" that resets every connection: what anvil being stopped under load looked like.
  const node = createServer((s) => s.resetAndDestroy());
  await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
  const proxy = await startRpcProxy(`http://127.0.0.1:${(node.address() as AddressInfo).port}`);
  try {
    const e = await fetch(proxy.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) }).catch((x: Error) => x);
    expect(e).toBeInstanceOf(TypeError); // fetch failed: the connection was cut, as a failing node does
    expect(String((e as Error & { cause?: { code?: string } }).cause?.code)).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
  } finally {
    await proxy.close();
    await new Promise((r) => node.close(r));
  }
});
