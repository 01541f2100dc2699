/**
 * Where the compiled test token lives and how it is found. No solc and no ethers here: reading
 * the artifact is all the CLI needs before it deploys.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../core/errors.js';

export const TEST_TOKEN_CONTRACT = 'TestUSDT';

export interface TestTokenArtifact {
  contract: string;
  compiler: string;
  settings: { evmVersion: string; optimizer: { enabled: boolean; runs: number } };
  /** Of the source it was compiled from, so a stale artifact is noticed. */
  sourceSha256: string;
  abi: unknown[];
  bytecode: string;
}

/**
 * The package root: the first folder above this module holding contracts/TestUSDT.sol. Found by
 * walking up because the module runs from src/chains/sandbox (tests), dist/chains/sandbox (tsc)
 * and dist/bundle (the CLI), each at a different depth.
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'contracts', 'TestUSDT.sol'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new AppError('unavailable', 'contracts/TestUSDT.sol not found above the cryptopay modules');
    dir = up;
  }
}

export const testTokenSourceFile = (): string => join(packageRoot(), 'contracts', 'TestUSDT.sol');
export const testTokenArtifactFile = (): string => join(packageRoot(), 'dist', 'contracts', 'TestUSDT.json');

export function sourceHash(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

/** The artifact `npm run build` wrote, or undefined when there is none or its source changed since. */
export function readBuiltTestToken(): TestTokenArtifact | undefined {
  const file = testTokenArtifactFile();
  if (!existsSync(file)) return undefined;
  const artifact = JSON.parse(readFileSync(file, 'utf8')) as TestTokenArtifact;
  if (artifact.sourceSha256 !== sourceHash(readFileSync(testTokenSourceFile(), 'utf8'))) return undefined;
  return artifact;
}
