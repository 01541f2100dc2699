/**
 * A local EVM node (anvil, from foundry's npm platform package, @foundry-rs/anvil-linux-amd64 in
 * package.json) for the development sandbox and the tests. Nothing is ever downloaded. It
 * listens on 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { AppError } from '../../core/errors.js';

/** anvil's own default chain id: no real network uses it, so it cannot be mistaken for one. */
export const DEV_CHAIN_ID = 31337;

/** Environment variable naming the anvil binary to run instead of the npm package's. */
export const ANVIL_ENV = 'CRYPTOPAY_ANVIL';

export interface AnvilOptions {
  /** Default DEV_CHAIN_ID. */
  chainId?: number;
  /** Seconds between blocks; by default a block is mined for every transaction. */
  blockTime?: number;
  /** Funded accounts derived from the mnemonic (anvil's default is 10). */
  accounts?: number;
  /** The funded accounts' derivation path prefix, ending in "/" (anvil's default m/44'/60'/0'/0/). */
  derivationPath?: string;
  /** Ether of every funded account (anvil's default is 10000). */
  balance?: number;
  /** Default 0: the system picks a free port, read back from anvil's output. */
  port?: number;
  /**
   * A file anvil loads its chain from, if it exists, and dumps it to on a clean exit (SIGTERM,
   * SIGINT) and every `stateInterval` seconds.
   */
  statePath?: string;
  stateInterval?: number;
  /** The binary; default: $CRYPTOPAY_ANVIL, else the npm package's. */
  binary?: string;
  /** The genesis block's timestamp in seconds (anvil --timestamp); later blocks follow the clock from there. */
  genesisTimestamp?: number;
  /** How long to wait for the node to answer eth_chainId; default 20 s. */
  readyTimeoutMs?: number;
}

export interface AnvilNode {
  rpcUrl: string;
  port: number;
  chainId: number;
  /** Ends the node cleanly (so a state file is written) and waits until it has exited. */
  stop(): Promise<void>;
  /** Set once the process has exited, for whatever reason. */
  readonly exited: boolean;
}

const PLATFORM_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

/**
 * The anvil binary: `explicit`, else $CRYPTOPAY_ANVIL, else the one in the platform package
 * (@foundry-rs/anvil-<os>-<arch>) that npm installed as an optional dependency (package.json
 * lists linux-amd64's). Throws 'unavailable' with the reason when there is none.
 */
export function resolveAnvilBinary(env: NodeJS.ProcessEnv = process.env, explicit?: string): string {
  const chosen = explicit ?? env[ANVIL_ENV];
  if (chosen) {
    if (!existsSync(chosen)) throw new AppError('unavailable', `anvil binary ${chosen} (from ${explicit ? 'the caller' : ANVIL_ENV}) does not exist`);
    return chosen;
  }
  const arch = PLATFORM_ARCH[process.arch];
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch ?? process.arch}`;
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  } catch {
    throw new AppError('unavailable', `anvil is not installed for ${process.platform}-${process.arch} (npm package ${pkg} is missing; run npm ci)`);
  }
  const bin = join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(bin)) throw new AppError('unavailable', `anvil binary missing from ${pkg} (${bin})`);
  return bin;
}

/**
 * A POSIX shell between us and anvil so that anvil cannot outlive us, however we end: the shell
 * reads our end of a pipe on stdin and, when that closes (we exited, crashed or were killed with
 * SIGKILL), sends anvil SIGTERM. Node has no way to ask the kernel for a parent-death signal.
 * A SIGTERM to the shell is passed on too, and the shell waits for anvil to finish writing its
 * state file before it exits.
 */
const WATCHDOG = [
  // What anvil writes (its state file, beside the 0600 ledger) is its owner's alone.
  'umask 077',
  'trap \'kill -TERM "$pid" 2>/dev/null; wait "$pid"; exit 143\' TERM INT HUP',
  // A background list's stdin is /dev/null unless redirected explicitly, hence fd 3.
  'exec 3<&0',
  '"$0" "$@" </dev/null 3<&- & pid=$!',
  '(while read -r _ <&3; do :; done; kill -TERM "$pid" 2>/dev/null) & watcher=$!',
  'exec 3<&-',
  'wait "$pid"; rc=$?',
  'kill "$watcher" 2>/dev/null',
  'exit $rc',
].join('\n');

function anvilArgs(o: AnvilOptions, chainId: number): string[] {
  const args = ['--host', '127.0.0.1', '--port', String(o.port ?? 0), '--chain-id', String(chainId)];
  if (o.blockTime !== undefined) args.push('--block-time', String(o.blockTime));
  if (o.accounts !== undefined) args.push('--accounts', String(o.accounts));
  if (o.balance !== undefined) args.push('--balance', String(o.balance));
  if (o.derivationPath !== undefined) args.push('--derivation-path', o.derivationPath);
  if (o.statePath !== undefined) args.push('--state', o.statePath);
  if (o.stateInterval !== undefined) args.push('--state-interval', String(o.stateInterval));
  if (o.genesisTimestamp !== undefined) args.push('--timestamp', String(o.genesisTimestamp));
  return args;
}

/** Starts anvil and resolves once it answers eth_chainId with the expected chain id. */
export async function startAnvil(opts: AnvilOptions = {}): Promise<AnvilNode> {
  const chainId = opts.chainId ?? DEV_CHAIN_ID;
  const binary = resolveAnvilBinary(process.env, opts.binary);
  const args = anvilArgs(opts, chainId);
  // A state file of an earlier run written before anvil ran under umask 077 (it was 0644).
  if (opts.statePath !== undefined && existsSync(opts.statePath)) chmodSync(opts.statePath, 0o600);
  const child: ChildProcess =
    process.platform === 'win32'
      ? spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
      : spawn('/bin/sh', ['-c', WATCHDOG, binary, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });

  let exited = false;
  let exitInfo = '';
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    });
  });
  // Its output (which lists the funded accounts' keys) is only read for the port and for the
  // last lines of a failure; it must still be drained, or anvil blocks on a full pipe.
  let tail = '';
  const keepTail = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-2000);
  };
  child.stderr!.on('data', keepTail);
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const onData = (d: Buffer) => {
      keepTail(d);
      seen = (seen + d.toString()).slice(-4000);
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(seen);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.on('data', () => {});
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.once('error', (e) => reject(new AppError('unavailable', `anvil could not be started: ${e.message}`)));
    void exitedPromise.then(() => reject(new AppError('unavailable', `anvil exited before listening (${exitInfo}): ${lastLines(tail)}`)));
  }).catch(async (e) => {
    await stopChild(child, () => exited, exitedPromise);
    throw e;
  });

  const rpcUrl = `http://127.0.0.1:${port}`;
  const node: AnvilNode = {
    rpcUrl,
    port,
    chainId,
    stop: () => stopChild(child, () => exited, exitedPromise),
    get exited() {
      return exited;
    },
  };
  try {
    await waitForChainId(rpcUrl, chainId, opts.readyTimeoutMs ?? 20_000, () => exited);
  } catch (e) {
    await node.stop();
    throw e;
  }
  return node;
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ') || '(no output)';
}

async function stopChild(child: ChildProcess, isExited: () => boolean, exitedPromise: Promise<void>): Promise<void> {
  if (isExited()) return;
  // Closing stdin is what the watchdog listens for; SIGTERM reaches anvil directly on Windows.
  if (child.stdin) child.stdin.end();
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    await exitedPromise;
  } finally {
    clearTimeout(timer);
  }
}

/** Asks eth_chainId until the node answers with `chainId`. */
export async function waitForChainId(rpcUrl: string, chainId: number, timeoutMs: number, gaveUp: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline && !gaveUp()) {
    try {
      const res = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(2_000),
      });
      const body = (await res.json()) as { result?: string };
      if (typeof body.result === 'string') {
        if (BigInt(body.result) === BigInt(chainId)) return;
        throw new AppError('unavailable', `the node at ${rpcUrl} answers chain id ${BigInt(body.result)}, expected ${chainId}`);
      }
      last = `answer without result`;
    } catch (e) {
      if (e instanceof AppError) throw e;
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new AppError('unavailable', `anvil did not answer eth_chainId at ${rpcUrl} in time (${last})`);
}
