import type { RegistryConfig } from '../../src/chains/registry.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { deriveAddress, walletFromMnemonic } from '../../src/chains/derive.js';
import { createApp } from '../../src/server/app.js';
import { listen, type HttpLimits } from '../../src/server/listen.js';
import { sign } from '../../src/signing/index.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { BIN, cliEnv, spawnCli, type CliResult } from '../helpers/cli.js';
import { checkReply } from './openapi-check.js';

/**
 * Helpers of the HTTP tests: a real ledger file, the real app on a real socket (127.0.0.1, a free
 * port), a movable clock, and plain `fetch` against it.
 */

/** 2025-01-15 12:00:00 UTC: every in-process server starts its clock here. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
export const SECOND = 1000;
export const MINUTE = 60_000;
export const DAY = 86_400_000;

export const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
export const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
export const TRON_CHAIN = 728126428;
/** Hardhat account #1: a valid EIP-55 address to withdraw to. */
export const EVM_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const TRON_TO = deriveAddress('TRON', walletFromMnemonic('test test test test test test test test test test test junk').tronXpub, 3);

export const evmTx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

export interface Merchant {
  mchId: string;
  secret: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export interface TestServer {
  url: string;
  file: string;
  ledger: Ledger;
  service: LocalPaymentService;
  clock: { now: number };
  accessLog: string[];
  errorLog: string[];
  addMerchant(opts?: { name?: string; rateLimit?: number }): Promise<Merchant>;
  /** A body with timestamp (the server clock), a fresh nonce, mchId (unless given as undefined) and sign. */
  signed(m: Merchant, fields: Record<string, unknown>, opts?: { noMchId?: boolean; secret?: string }): Record<string, unknown>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  get(path: string): Promise<Reply>;
  fetch(path: string, init?: RequestInit): Promise<Reply>;
  /** A created order, through the service directly (not the API). */
  order(m: Merchant, fields?: Record<string, unknown>): Promise<{ id: string; oid: string }>;
  /** An order created and recorded paid in full by hand. */
  paidOrder(m: Merchant, amount: string, uid?: string, extra?: Record<string, unknown>): Promise<{ id: string; oid: string }>;
  credit(m: Merchant, uid: string, amount: string): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;
export const nextNonce = () => `n-${process.pid}-${++seq}-${randomBytes(4).toString('hex')}`;
export const nextOid = () => `oid-${++seq}`;
let txSeq = 0x5000;
export const nextTx = () => evmTx(++txSeq);

export async function startServer(opts: { limits?: Partial<HttpLimits>; registryConfig?: RegistryConfig } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-http-'));
  const file = join(dir, 'ledger.db');
  const ledger = openLedger(file);
  const clock = { now: T0 };
  const now = () => clock.now;
  const service = new LocalPaymentService(ledger, { now, caller: { actor: 'test' }, registryConfig: opts.registryConfig });
  const accessLog: string[] = [];
  const errorLog: string[] = [];
  const app = createApp({ backend: service, now, accessLog: (l) => accessLog.push(l), errorLog: (l) => errorLog.push(l) });
  const server = await listen(app, '127.0.0.1', 0, opts.limits);
  expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

  const doFetch = (path: string, init?: RequestInit): Promise<Reply> => httpJson(server.url, path, init);

  const srv: TestServer = {
    url: server.url,
    file,
    ledger,
    service,
    clock,
    accessLog,
    errorLog,
    async addMerchant(opts = {}) {
      const r = await service.addMerchant({ name: opts.name ?? 'Shop', generateWallet: true, rateLimit: opts.rateLimit ?? 0 });
      return { mchId: r.merchant.mchId, secret: r.secret };
    },
    signed(m, fields, opts = {}) {
      const body: Record<string, unknown> = { ...(opts.noMchId ? {} : { mchId: m.mchId }), timestamp: clock.now, nonce: nextNonce(), ...fields };
      delete body.sign;
      return { ...body, sign: sign(body, opts.secret ?? m.secret) };
    },
    post(path, body, headers = {}) {
      return doFetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body),
      });
    },
    get(path) {
      return doFetch(path);
    },
    fetch: doFetch,
    async order(m, fields = {}) {
      const o = await service.createOrder({ mchId: m.mchId, oid: nextOid(), uid: 'u1', amount: '10', ...fields } as never);
      return { id: o.id, oid: o.oid };
    },
    async paidOrder(m, amount, uid = 'u1', extra = {}) {
      const o = await srv.order(m, { amount, uid, ...extra });
      await service.markPaid({ id: o.id, txHash: nextTx() });
      return o;
    },
    async credit(m, uid, amount) {
      await service.adjustBalance({ mchId: m.mchId, uid, amount, reason: 'test credit' });
    },
    async close() {
      await server.close();
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return srv;
}

/**
 * The setup the suites on one shared server have in common, registered in the calling describe
 * (or at file level): before all tests a server with one merchant per name, added in order;
 * with resetClock, the clock back at T0 before each test; after all tests the ledger check (and,
 * with noErrors, an empty error log), then the server closes. `ready` receives the server and the
 * merchants once they exist.
 */
export function useServer(
  names: string[],
  opts: { resetClock?: boolean; noErrors?: boolean },
  ready: (s: TestServer, merchants: Merchant[]) => void,
): void {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
    const merchants: Merchant[] = [];
    for (const name of names) merchants.push(await s.addMerchant({ name }));
    ready(s, merchants);
  });
  if (opts.resetClock) {
    beforeEach(() => {
      s.clock.now = T0;
    });
  }
  afterAll(async () => {
    expect(await s.service.check()).toEqual([]);
    if (opts.noErrors) expect(s.errorLog).toEqual([]);
    await s.close();
  });
}

/** The error envelope: exactly the four keys, code 0, data null, the given status and msg. */
export function expectRefused(r: Reply, status: number, msg?: string | RegExp): string {
  expect({ status: r.status, body: r.json }, r.text).toEqual({
    status,
    body: {
      code: 0,
      msg: msg === undefined ? expect.any(String) : typeof msg === 'string' ? msg : expect.stringMatching(msg),
      data: null,
      systemTime: expect.any(Number),
    },
  });
  expect(Object.keys(r.json).sort()).toEqual(['code', 'data', 'msg', 'systemTime']);
  expect(r.json.msg.length).toBeGreaterThan(0);
  return r.json.msg as string;
}

/** The success envelope; returns data. */
export function expectOk(r: Reply, systemTime?: number): any {
  expect({ status: r.status, code: r.json?.code, msg: r.json?.msg }, r.text).toEqual({ status: 200, code: 1, msg: 'success' });
  expect(Object.keys(r.json).sort()).toEqual(['code', 'data', 'msg', 'systemTime']);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  if (systemTime !== undefined) expect(r.json.systemTime).toBe(systemTime);
  return r.json.data;
}

/** Everything a refusal must leave alone: rows of every table that a request can touch. */
export function snapshot(ledger: Ledger): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Not the nonces: a request whose signature verified uses its nonce up whatever the answer
  // (decisions §1); test/server/spent-nonce.test.ts pins that.
  for (const t of ['orders', 'order_addresses', 'payments', 'refunds', 'withdrawals', 'transfers', 'accounts', 'audit_log', 'merchants', 'callbacks']) {
    out[t] = ledger.sqlite.prepare(`select * from ${t} order by rowid`).all();
  }
  return out;
}

/** A raw HTTP/1.1 request, for what fetch will not send (chunked bodies of our choosing, no Content-Type). */
export function rawRequest(
  url: string,
  opts: { method: string; path: string; headers?: Record<string, string>; chunks?: (string | Buffer)[] },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, method: opts.method, path: opts.path, headers: opts.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        try {
          checkReply(opts.method, opts.path, { status: res.statusCode ?? 0, text, headers: headers });
        } catch (e) {
          reject(e);
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers, text, json: parseJson(text) });
      });
    });
    req.on('error', reject);
    for (const c of opts.chunks ?? []) req.write(c);
    req.end();
  });
}

// ------------------------------------------------------------------ the real binary

export { BIN };

export interface Spawned {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (and signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor(pattern: RegExp, stream?: 'stderr' | 'stdout', ms?: number): Promise<RegExpMatchArray>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Kills whatever a test left running (by pid: only the processes these helpers started). */
export function killAll(): void {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  running.clear();
}

export async function spawnServe(db: string, extraEnv: Record<string, string> = {}, args: string[] = []): Promise<Spawned> {
  const env = cliEnv(extraEnv);
  delete env.CRYPTOPAY_REMOTE;
  const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', db, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      for (const l of listeners) l();
      resolve({ code, signal });
    });
  });
  const waitFor = (pattern: RegExp, stream: 'stderr' | 'stdout' = 'stderr', ms = 15_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = (stream === 'stderr' ? err : out).match(pattern);
        if (m) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          listeners.delete(check);
          clearTimeout(timer);
          reject(new Error(`serve ended before ${pattern}; stderr:\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no ${pattern} within ${ms} ms; stderr:\n${err}`));
      }, ms);
      listeners.add(check);
      check();
    });
  // An upper bound, not a speed check: serve --dev starts anvil and deploys a token first, which
  // took over 15 s once on a machine at load 10.
  const m = await waitFor(/cryptopay serving (http:\/\/127\.0\.0\.1:\d+)\/api\/v1 /, 'stderr', 60_000);
  return {
    child,
    url: m[1]!,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A ledger with one merchant made beforehand, so serve does not print a first-run secret. */
export async function ledgerWithMerchant(db: string): Promise<Merchant> {
  const ledger = openLedger(db);
  try {
    const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' } });
    const r = await service.addMerchant({ name: 'Shop', generateWallet: true, rateLimit: 0 });
    return { mchId: r.merchant.mchId, secret: r.secret };
  } finally {
    ledger.close();
  }
}

/** Runs the real binary once (for `ledger check`), with no stdin and no CRYPTOPAY_REMOTE. */
export function runCli(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  const env = cliEnv(extraEnv);
  delete env.CRYPTOPAY_REMOTE;
  return spawnCli(args, env, { stdin: 'ignore' });
}

/** The parsed body, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request with fetch; the reply is checked against the OpenAPI document before the test sees it. */
export async function httpJson(url: string, path: string, init?: RequestInit): Promise<Reply> {
  const res = await fetch(url + path, init);
  const text = await res.text();
  checkReply(init?.method ?? 'GET', path, { status: res.status, text, headers: res.headers });
  return { status: res.status, headers: res.headers, text, json: parseJson(text) };
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-serve-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Sends a request that must be refused and checks that it was harmless: the status and msg, no
 * row of the ledger changed, and (when it carried a usable nonce) that nonce is still free: a
 * good create order of `m` with it passes afterwards.
 */
export async function refusedAndHarmless(
  s: TestServer,
  m: Merchant,
  path: string,
  body: Record<string, unknown> | string,
  status: number,
  msg: string | RegExp,
): Promise<Reply> {
  const before = snapshot(s.ledger);
  const r = await s.post(path, body);
  expectRefused(r, status, msg);
  expect(snapshot(s.ledger)).toEqual(before);
  const nonce = typeof body === 'object' ? body.nonce : undefined;
  if (typeof nonce === 'string' && nonce.length >= 1 && nonce.length <= 64) {
    // A request whose signature verified has used its nonce up (decisions §1); one refused
    // before that (malformed, bad signature, stale timestamp) has not. Either way the server
    // must then answer a new request with that nonce accordingly.
    const spent = s.ledger.sqlite.prepare('select 1 from nonces where merchant_id = ? and nonce = ?').get(m.mchId, nonce) !== undefined;
    const again: Record<string, unknown> = { mchId: m.mchId, oid: nextOid(), uid: 'nonce-check', amount: '1', timestamp: s.clock.now, nonce };
    const r2 = await s.post('/api/v1/order', { ...again, sign: sign(again, m.secret) });
    if (spent) expectRefused(r2, 401, 'nonce has already been used');
    else expectOk(r2);
  }
  return r;
}
