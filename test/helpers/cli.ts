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

/** Spawns the real bin/cryptopay, as a user's shell would: no terminal, so plain output. */
export function runCli(args: string[], opts: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...opts.env })) if (v !== undefined) env[k] = v;
    delete env.CRYPTOPAY_REMOTE;
    if (opts.env?.CRYPTOPAY_REMOTE) env.CRYPTOPAY_REMOTE = opts.env.CRYPTOPAY_REMOTE;
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A temporary folder holding one ledger file, removed by the returned cleanup. */
export function tempLedger(): { dir: string; db: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-test-'));
  return { dir, db: join(dir, 'ledger.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The well-known development mnemonic's account xpubs (m/44'/60'/0' and m/44'/195'/0'). */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
