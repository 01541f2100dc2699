/**
 * Compiles contracts/TestUSDT.sol with the solc npm package (a devDependency). solc takes more
 * than a second to load and compile, so `npm run build` runs this once and writes the artifact
 * into dist/ (scripts/bundle.mjs); the CLI only reads that file. Tests fall back to compiling.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { AppError } from '../../core/errors.js';
import { TEST_TOKEN_CONTRACT, sourceHash, testTokenSourceFile, type TestTokenArtifact } from './test-token-artifact.js';

/**
 * Pinned so the bytecode is the same on every machine: the EVM version anvil 1.x runs by default
 * supports cancun's opcodes, and the optimizer settings change the bytecode.
 */
export const SOLC_SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const;

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

export function compileTestToken(sourcePath: string = testTokenSourceFile()): TestTokenArtifact {
  const source = readFileSync(sourcePath, 'utf8');
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string; version(): string };
  const input = { language: 'Solidity', sources: { 'TestUSDT.sol': { content: source } }, settings: SOLC_SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new AppError('internal', `TestUSDT.sol does not compile: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const contract = output.contracts?.['TestUSDT.sol']?.[TEST_TOKEN_CONTRACT];
  if (!contract) throw new AppError('internal', `solc produced no ${TEST_TOKEN_CONTRACT} contract`);
  return {
    contract: TEST_TOKEN_CONTRACT,
    compiler: solc.version(),
    settings: { evmVersion: SOLC_SETTINGS.evmVersion, optimizer: SOLC_SETTINGS.optimizer },
    sourceSha256: sourceHash(source),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
  };
}
