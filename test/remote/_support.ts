/**
 * Shared by the remote-mode end-to-end tests: every CLI call spawns the real bin/cryptopay
 * (through runCli) with an environment cleaned of the developer's shell and pointed at a
 * private temporary home (XDG_CONFIG_HOME for profiles, XDG_DATA_HOME for the default ledger).
 * Servers are real `cryptopay serve` processes on a real ledger file, or tiny node:http
 * servers that misbehave on purpose. Everything spawned is stopped by stopAll().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { BIN, cliEnv, runCli, spawnCli, type CliResult, type Env } from '../helpers/cli.js';
export { closedPort } from '../helpers/closed-port.js';

export type { CliResult, Env };

/** Variables that would change what the CLI does, removed unless a test sets them. */
export const CLEAN_ENV: Env = {
  CRYPTOPAY_DB: undefined,
  CRYPTOPAY_MCH_ID: undefined,
  CRYPTOPAY_SECRET: undefined,
  CRYPTOPAY_REMOTE: undefined,
  CRYPTOPAY_TIMEOUT: undefined,
  CRYPTOPAY_DEBUG: undefined,
  CRYPTOPAY_INSECURE_HTTP: undefined,
  FORCE_COLOR: undefined,
};

/**
 * The environment that gives a spawned CLI the test resolver (test/helpers/fake-resolver.mjs):
 * these names resolve to 127.0.0.1, any other name fails, so no traffic leaves the machine.
 */
export function resolving(...hosts: string[]): Env {
  const resolver = fileURLToPath(new URL('../helpers/fake-resolver.mjs', import.meta.url));
  return { NODE_OPTIONS: `--import=${resolver}`, CRYPTOPAY_TEST_HOSTS: hosts.join(',') };
}

export const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
export const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
export const TRON_CHAIN = '728126428';
/** The EIP-55 example address. */
export const EVM_TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** A valid TRON address that is not the token contract. */
export const TRON_TO = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
/** A fixed EVM transaction hash, so both sides of a parity run print the same one. */
export const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

const cleanups: Array<() => void | Promise<void>> = [];

/** Stops every server and removes every temporary folder made through this module. */
export async function stopAll(): Promise<void> {
  const all = cleanups.splice(0).reverse();
  await Promise.all(all.map(async (c) => c()));
}

export interface Home {
  dir: string;
  /** A ledger file in this home (not created until a command writes it). */
  db: string;
  /** The cleaned environment with this home's XDG folders. */
  env: Env;
  configDir: string;
  configFile: string;
  /** The default ledger when neither --db nor a remote is given. */
  defaultLedger: string;
  /** Runs the CLI in this home; opts.env adds to (or clears from) the home's environment. */
  cli(args: string[], opts?: { env?: Env; input?: string }): Promise<CliResult>;
  /** Like cli, with the environment exactly as given (empty values kept). */
  cliExact(args: string[], env: Env): Promise<CliResult>;
  /** Runs with --db <this home's ledger>. */
  local(args: string[], opts?: { env?: Env }): Promise<CliResult>;
  /** Runs, expects exit 0, parses stdout as JSON. */
  json<T = any>(args: string[], opts?: { env?: Env }): Promise<T>;
}

/**
 * Like runCli, but the environment is passed exactly as given: runCli drops an empty
 * CRYPTOPAY_REMOTE, and some tests need one.
 */
export function runExact(args: string[], env: Env): Promise<CliResult> {
  return spawnCli(args, cliEnv(env));
}

/** A private temporary home: its own config folder, data folder and ledger path. */
export function home(): Home {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-remote-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'config');
  const data = join(dir, 'data');
  const env: Env = { ...CLEAN_ENV, XDG_CONFIG_HOME: config, XDG_DATA_HOME: data };
  const cli = (args: string[], opts: { env?: Env; input?: string } = {}) => runCli(args, { input: opts.input, env: { ...env, ...opts.env } });
  const db = join(dir, 'ledger.db');
  return {
    dir,
    db,
    env,
    configDir: join(config, 'cryptopay'),
    configFile: join(config, 'cryptopay', 'config.json'),
    defaultLedger: join(data, 'cryptopay', 'ledger.db'),
    cli,
    cliExact: (args, extra) => runExact(args, { ...env, ...extra }),
    local: (args, opts) => cli(['--db', db, ...args], opts),
    async json(args, opts) {
      const r = await cli(['--json', ...args], opts);
      expect(r, `cryptopay --json ${args.join(' ')}`).toMatchObject({ code: 0 });
      return JSON.parse(r.stdout);
    },
  };
}

export interface Merchant {
  mchId: string;
  secret: string;
}

/** `merchant add --name Shop --generate-wallet --json` on the home's ledger. */
export async function addMerchant(h: Home, name = 'Shop'): Promise<Merchant> {
  const m = await h.json<Merchant>(['--db', h.db, 'merchant', 'add', '--name', name, '--generate-wallet']);
  expect(m.mchId).toMatch(/^M\d+$/);
  expect(m.secret.length).toBeGreaterThanOrEqual(16);
  return { mchId: m.mchId, secret: m.secret };
}

/** The merchant's CLI against a served remote, from `from`'s home: its id and secret in the environment, never a flag. */
export function asMerchant(from: Home, server: Pick<Served, 'url'>, m: Merchant): (args: string[]) => ReturnType<Home['cli']> {
  return (args) => from.cli(['--remote', server.url, ...args], { env: { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: m.secret } });
}

export interface Served {
  /** The base URL for --remote: http://127.0.0.1:PORT */
  url: string;
  pid: number;
  /** Everything the server wrote so far. */
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/** Spawns `cryptopay serve --port 0 --db FILE [extra...]` and waits for its "serving" line. */
export function serve(h: Home, db = h.db, extra: string[] = []): Promise<Served> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', db, ...extra], { env: cliEnv(h.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => !exited && child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  };
  cleanups.push(stop);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`cryptopay serve did not start within 15 s; stderr:\n${err}`));
    }, 15_000);
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /cryptopay serving (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, pid: child.pid!, stdout: () => out, stderr: () => err, stop });
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`cryptopay serve exited before serving; stderr:\n${err}`));
    });
  });
}

export interface Tiny {
  url: string;
  port: number;
  /** "METHOD path" of every request received. */
  hits: string[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 whose every request goes to handler. */
export function tiny(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<Tiny> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    handler(req, res, hits.length);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({ url: `http://127.0.0.1:${port}`, port, hits, close });
    });
  });
}

/** The envelope of the interface, as a tiny server would answer it. */
export function envelope(res: ServerResponse, data: unknown, status = 200, code: 0 | 1 = 1, msg = 'success'): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, msg, data, systemTime: Date.now() }));
}

/** A file path inside the home, its folder made. */
export function pathIn(h: Home, ...parts: string[]): string {
  const p = join(h.dir, ...parts);
  mkdirSync(join(p, '..'), { recursive: true });
  return p;
}
