/**
 * Shared by the end-to-end CLI tests: every call spawns the real bin/cryptopay (through runCli)
 * on a real ledger file, with an environment cleaned of anything the developer's shell might
 * carry (a CRYPTOPAY_DB pointing at a real ledger, a default merchant, a secret, colour forcing).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { BIN, definedEnv, runCli, tempLedger, type CliResult, type Env } from '../helpers/cli.js';

export type { Env };

/**
 * Variables that would change what the CLI does, removed unless a test sets them. The XDG
 * folders point nowhere, so a developer's real ledger, remote profile (config.json) or chains
 * config is never read or written; a sandbox points them into its own folder.
 */
export const CLEAN_ENV: Env = {
  CRYPTOPAY_DB: undefined,
  CRYPTOPAY_MCH_ID: undefined,
  CRYPTOPAY_SECRET: undefined,
  CRYPTOPAY_REMOTE: undefined,
  CRYPTOPAY_CHAINS: undefined,
  CRYPTOPAY_TIMEOUT: undefined,
  CRYPTOPAY_DEBUG: undefined,
  XDG_DATA_HOME: '/nonexistent/cryptopay-cli-test/data',
  XDG_CONFIG_HOME: '/nonexistent/cryptopay-cli-test/config',
  FORCE_COLOR: undefined,
};

export const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
export const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
export const TRON_CHAIN = '728126428';
/** The EIP-55 example address. */
export const EVM_TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

/** A fresh EVM transaction hash (0x + 64 hex). */
export const evmTx = () => `0x${randomBytes(32).toString('hex')}`;

/** Each test spawns many processes; on a loaded machine that takes a while. */
export const SLOW = 120_000;

/** "locked", "SQLITE_BUSY": what must never reach a user from concurrent writers. */
export const LOCK_WORDS = /locked|SQLITE_BUSY|busy/i;

export interface Sandbox {
  dir: string;
  db: string;
  /** Runs `cryptopay --db <this ledger> ...args`. */
  run(args: string[], opts?: { env?: Env; input?: string }): Promise<CliResult>;
  /** Runs without --db; the caller decides where the ledger is. */
  bare(args: string[], opts?: { env?: Env; input?: string }): Promise<CliResult>;
  /** Runs with --json, expects exit 0, returns the parsed stdout. */
  json<T = any>(args: string[], opts?: { env?: Env; input?: string }): Promise<T>;
  /** Runs, expects exit 0 and no error on stderr; returns stdout. */
  ok(args: string[], opts?: { env?: Env; input?: string }): Promise<string>;
}

const sandboxes: Array<() => void> = [];
afterAll(() => {
  for (const c of sandboxes.splice(0)) c();
});

/** A temporary folder with a ledger path in it; XDG_DATA_HOME and XDG_CONFIG_HOME point inside it too. */
export function sandbox(): Sandbox {
  const t = tempLedger();
  sandboxes.push(t.cleanup);
  const baseEnv: Env = { ...CLEAN_ENV, XDG_DATA_HOME: `${t.dir}/xdg`, XDG_CONFIG_HOME: `${t.dir}/config` };
  const bare = (args: string[], opts: { env?: Env; input?: string } = {}) =>
    runCli(args, { input: opts.input, env: { ...baseEnv, ...opts.env } });
  const run = (args: string[], opts: { env?: Env; input?: string } = {}) => bare(['--db', t.db, ...args], opts);
  return {
    dir: t.dir,
    db: t.db,
    run,
    bare,
    async json(args, opts) {
      const r = await run(['--json', ...args], opts);
      expect(r, `cryptopay --json ${args.join(' ')}`).toMatchObject({ code: 0 });
      return JSON.parse(r.stdout);
    },
    async ok(args, opts) {
      const r = await run(args, opts);
      expect(r, `cryptopay ${args.join(' ')}`).toMatchObject({ code: 0 });
      expect(r.stderr).not.toMatch(/error/i);
      return r.stdout;
    },
  };
}

/** A sandbox whose ledger holds one merchant with a generated wallet. */
export async function withMerchant(name = 'Shop'): Promise<Sandbox & { mchId: string; secret: string }> {
  const s = sandbox();
  const m = await s.json<{ mchId: string; secret: string }>(['merchant', 'add', '--name', name, '--generate-wallet']);
  return Object.assign(s, { mchId: m.mchId, secret: m.secret });
}

/** Creates an order and records its payment by hand; returns the order id. */
export async function paidOrder(s: Sandbox, oid: string, uid: string, amount: string): Promise<string> {
  const o = await s.json<{ id: string }>(['order', 'create', '--oid', oid, '--uid', uid, '--amount', amount]);
  await s.json(['order', 'mark-paid', o.id, '--tx-hash', evmTx(), '--yes']);
  return o.id;
}

export async function balanceOf(s: Sandbox, uid: string, extra: string[] = []): Promise<{ available: string; held: string }> {
  const b = await s.json<{ available: string; held: string }>(['balance', uid, ...extra]);
  return { available: b.available, held: b.held };
}

// ------------------------------------------------------------------ pseudo-terminal

/** util-linux `script` gives a command a pseudo-terminal. */
export const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
// eslint-disable-next-line no-control-regex
export const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-Z\\-_]/g;
/** Any escape character at all: colour, cursor movement, anything. */
export const ESC = '\x1b';
export const stripAnsi = (s: string) => s.replace(ANSI, '');

export interface PtyStep {
  /** Wait until the (ANSI-stripped) output so far matches this. */
  waitFor: RegExp;
  /** Then type this (\r is Enter). */
  send: string;
}

/**
 * Runs `cryptopay args` under a pseudo-terminal (util-linux `script -qec`), answering prompts
 * step by step. Returns the raw terminal output and the command's exit code.
 */
const TERMINAL_ENV: Env = {
  TERM: 'xterm-256color',
  CI: undefined,
  CONTINUOUS_INTEGRATION: undefined,
  BUILD_NUMBER: undefined,
  RUN_ID: undefined,
  TEAMCITY_VERSION: undefined,
  FORCE_COLOR: undefined,
};

export function runPty(args: string[], opts: { env?: Env; steps?: PtyStep[]; timeoutMs?: number; columns?: number } = {}): Promise<{ code: number; out: string; text: string }> {
  // The terminal's width, where a test sets it (the pseudo-terminal has none of its own).
  const cmd = (opts.columns ? `stty cols ${opts.columns} rows 40; ` : '') + [process.execPath, BIN, ...args].map(sq).join(' ');
  // A user's terminal: chalk (supports-color) turns colour off when it sees a CI variable or a
  // forced level, so those are taken out of the environment the CLI sees here.
  const env = definedEnv({ ...process.env, ...CLEAN_ENV, ...TERMINAL_ENV, ...opts.env });
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const steps = [...(opts.steps ?? [])];
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pty run timed out waiting for ${steps[0]?.waitFor ?? 'exit'}; output so far:\n${stripAnsi(out)}`));
    }, opts.timeoutMs ?? 60_000);
    // Each step matches only output after the previous step's match.
    let from = 0;
    const advance = () => {
      while (steps.length) {
        const m = steps[0]!.waitFor.exec(stripAnsi(out.slice(from)));
        if (!m) return;
        from = out.length;
        child.stdin.write(steps.shift()!.send);
      }
    };
    child.stdout.on('data', (d) => {
      out += d;
      advance();
    });
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      if (steps.length) reject(new Error(`the command ended (exit ${code}) before ${steps[0]!.waitFor}; output:\n${stripAnsi(out)}`));
      else resolve({ code: code ?? -1, out, text: stripAnsi(out) });
    });
  });
}
