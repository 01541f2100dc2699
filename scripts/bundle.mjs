// The CLI ships as one ESM bundle with lazily loaded chunks (dist/bundle): Node resolves and
// reads a few files instead of hundreds, which is most of start-up. tsc still type-checks and
// emits dist/ for the benchmarks. better-sqlite3 (native) and tronweb stay external.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

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
  external: ['better-sqlite3', 'tronweb'],
  // Some dependencies (commander, cli-table3) are CommonJS and call require.
  banner: { js: "import { createRequire as __cpCreateRequire } from 'node:module'; const require = __cpCreateRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
