import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkCallback } from '../server/openapi-check.js';

/**
 * A merchant's endpoint: a real node:http server on 127.0.0.1 that records every callback and
 * answers as the test says (a status, a redirect, or nothing at all). Every callback (a body
 * with an `event`) is checked against the webhooks of the OpenAPI document; close() fails the
 * test if one did not match.
 */
export interface Received {
  at: number;
  raw: string;
  body: Record<string, any>;
  headers: IncomingHttpHeaders;
}

export type Reply = number | 'hang' | { status: number; headers: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves once `n` callbacks arrived (rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(reply: (n: number, body: Record<string, any>) => Reply = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const hung: ServerResponse[] = [];
  const mismatches: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d)).on('end', () => {
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw);
      } catch {
        // recorded as it came
      }
      received.push({ at: Date.now(), raw, body, headers: req.headers });
      if (typeof body.event === 'string') {
        try {
          checkCallback(body);
        } catch (e) {
          mismatches.push((e as Error).message);
        }
      }
      for (const w of waiters.splice(0)) w();
      const r = reply(received.length, body);
      if (r === 'hang') return void hung.push(res);
      const { status, headers } = typeof r === 'number' ? { status: r, headers: {} } : r;
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook?shop=1`,
    port,
    received,
    waitFor(n, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${received.length} of ${n} callbacks within ${ms} ms`)), ms);
        const check = () => {
          if (received.length >= n) {
            clearTimeout(timer);
            resolve(received);
          } else waiters.push(check);
        };
        check();
      });
    },
    async close() {
      for (const r of hung) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (mismatches.length) throw new Error(mismatches.join('\n'));
    },
  };
}

/**
 * The signature rule of decisions §1 written again from the text, not from src/signing, as a
 * merchant would: every field but sign, nulls and "" left out, sorted keys, k=v joined by &,
 * the secret appended, SHA-256 in hex.
 */
export function merchantVerifies(body: Record<string, unknown>, secret: string): boolean {
  const text = Object.keys(body).filter((k) => k !== 'sign' && body[k] !== null && body[k] !== undefined && body[k] !== '').sort()
    .map((k) => `${k}=${String(body[k])}`).join('&');
  return createHash('sha256').update(text + secret, 'utf8').digest('hex') === body.sign;
}
