// The CLI ships as one ESM bundle with lazily loaded chunks (dist/bundle): Node resolves and
// reads a few files instead of hundreds, which is most of start-up. tsc still type-checks and
// emits dist/ for the benchmarks. better-sqlite3 (native) and tronweb stay external.
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

rmSync('dist/bundle', { recursive: true, force: true });

await build({
  // The derivation thread of serve is its own entry, found beside the chunks at run time.
  entryPoints: { main: 'src/main.ts', 'derive-worker': 'src/chains/derive-worker.ts' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: 'dist/bundle',
  // Chunks beside main.js keep every module two levels below the package root, where
  // src/store/db.ts expects to find its migrations (../../src/store/migrations).
  chunkNames: '[name]-[hash]',
  // solc (a devDependency, 8 MB) only compiles the test token when no built artifact exists.
  external: ['better-sqlite3', 'tronweb', 'solc'],
  // Some dependencies (commander) are CommonJS and call require.
  banner: { js: "import { createRequire as __cpCreateRequire } from 'node:module'; const require = __cpCreateRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});

// The development sandbox deploys contracts/TestUSDT.sol; solc takes over a second, so it is
// compiled here once (with the module tsc just emitted) rather than on every `serve --dev`.
const { compileTestToken } = await import('../dist/chains/sandbox/test-token-compile.js');
const { testTokenArtifactFile } = await import('../dist/chains/sandbox/test-token-artifact.js');
mkdirSync('dist/contracts', { recursive: true });
writeFileSync(testTokenArtifactFile(), `${JSON.stringify(compileTestToken(), null, 2)}\n`);
