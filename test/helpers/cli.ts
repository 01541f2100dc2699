import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/cryptopay', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment variables as a test names them: undefined removes the variable. */
export type Env = Record<string, string | undefined>;

/** `vars` without its undefined entries, as spawn takes an environment. */
export function definedEnv(vars: Env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) if (v !== undefined) env[k] = v;
  return env;
}

/** This process's environment with NO_COLOR=1, then `extra` on top (undefined removes). */
export function cliEnv(extra: Env = {}): Record<string, string> {
  return definedEnv({ ...process.env, NO_COLOR: '1', ...extra });
}

/**
 * Spawns the real bin/cryptopay with exactly `env` and collects its output until it closes.
 * stdin is a pipe that gets `input` and is then closed (ended at once when input is undefined),
 * or, with stdin 'ignore', no stdin at all.
 */
export function spawnCli(args: string[], env: Record<string, string>, opts: { input?: string; stdin?: 'pipe' | 'ignore' } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: [opts.stdin ?? 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    if (child.stdin) {
      // A command that exits before reading its input (refused at once) closes the pipe under
      // the write: its exit status and output are the result, not an uncaught EPIPE.
      child.stdin.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPIPE') reject(e);
      });
      if (opts.input === undefined) child.stdin.end();
      else child.stdin.end(opts.input);
    }
  });
}

/**
 * Spawns the real bin/cryptopay, as a user's shell would: no terminal, so plain output. A
 * CRYPTOPAY_REMOTE of the developer's shell is dropped; only a non-empty one in opts.env is kept.
 */
export function runCli(args: string[], opts: { env?: Env; input?: string } = {}): Promise<CliResult> {
  const env = cliEnv(opts.env);
  delete env.CRYPTOPAY_REMOTE;
  if (opts.env?.CRYPTOPAY_REMOTE) env.CRYPTOPAY_REMOTE = opts.env.CRYPTOPAY_REMOTE;
  return spawnCli(args, env, { input: opts.input ?? '' });
}

/** A temporary folder holding one ledger file, removed by the returned cleanup. */
export function tempLedger(): { dir: string; db: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-test-'));
  return { dir, db: join(dir, 'ledger.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The well-known development mnemonic's account xpubs (m/44'/60'/0' and m/44'/195'/0'). */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
