// The CLI ships as one ESM bundle with lazily loaded chunks (dist/bundle): Node resolves and
// reads a few files instead of hundreds, which is most of start-up. tsc still type-checks and
// emits dist/ for the benchmarks. tronweb stays external; better-sqlite3's JavaScript is bundled
// and its native addon loaded by path (src/store/db.ts, sqliteAddon).
import { build, transform } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

rmSync('dist/bundle', { recursive: true, force: true });

/**
 * commander requires node:child_process when it loads, for executable subcommands, which
 * cryptopay has none of; child_process brings net, dgram and the stream machinery with it, ~10 ms
 * of every command's start-up (a third of what `order status` adds to a bare `node`). Here it is
 * required on the first spawn instead.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!source.includes(eager)) throw new Error(`commander changed: ${eager} not found in ${args.path}`);
      const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

/**
 * drizzle's migrator imports node:crypto (~15 internal modules, ~2.7 ms) to hash migration files,
 * which only an out-of-date ledger needs (src/store/db.ts reads user_version first): every
 * command opening the ledger loaded it. Here it is required when a migration is hashed.
 */
const lazyMigratorCrypto = {
  name: 'lazy-migrator-crypto',
  setup(b) {
    b.onLoad({ filter: /drizzle-orm[\\/]migrator\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const eager = 'import crypto from "node:crypto";';
      if (!source.includes(eager)) throw new Error(`drizzle-orm changed: ${eager} not found in ${args.path}`);
      const lazy = "const crypto = { createHash: (...a) => require('node:crypto').createHash(...a) };";
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

const BANNER = "import { createRequire as __cpCreateRequire } from 'node:module'; const require = __cpCreateRequire(import.meta.url);";

await build({
  // serve's derivation and checkpoint threads are entries of their own, found beside the chunks
  // at run time.
  entryPoints: {
    main: 'src/main.ts',
    'derive-worker': 'src/chains/derive-worker.ts',
    'checkpoint-worker': 'src/store/checkpoint-worker.ts',
  },
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
  external: ['tronweb', 'solc'],
  // Some dependencies (commander) are CommonJS and call require.
  banner: { js: BANNER },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [lazyChildProcess, lazyMigratorCrypto],
});

/**
 * The same chunks as CommonJS (NAME.cjs beside NAME.js), which bin/cryptopay loads through
 * src/code-cache.ts: V8's code cache can be given to a script, not to an ES module, and compiling
 * the ~500 KB a command loads was a third of its start-up. Each chunk is converted on its own,
 * so the split stays as esbuild made it: `import` becomes `require` of the sibling .cjs,
 * `import()` a `require` in a promise, `import.meta.url` the loader's `__cpImportMetaUrl`. The
 * worker threads of serve keep starting from the ESM entries.
 */
for (const file of readdirSync('dist/bundle').filter((f) => f.endsWith('.js'))) {
  const source = readFileSync(`dist/bundle/${file}`, 'utf8');
  if (!source.startsWith(BANNER)) throw new Error(`dist/bundle/${file} does not start with the require banner`);
  const { code } = await transform(source.slice(BANNER.length), {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__cpImportMetaUrl' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  const cjs = code.replace(/require\("\.\/([\w-]+)\.js"\)/g, 'require("./$1.cjs")');
  if (/import\.meta|require\("\.\/[^"]*\.js"\)/.test(cjs)) throw new Error(`dist/bundle/${file}: an ES module reference is left in its CommonJS form`);
  writeFileSync(`dist/bundle/${file.replace(/\.js$/, '.cjs')}`, cjs);
}
await build({
  entryPoints: { loader: 'src/cli-loader.ts' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.cjs' },
  outdir: 'dist/bundle',
  legalComments: 'none',
  logLevel: 'warning',
});

// The development sandbox deploys contracts/TestUSDT.sol; solc takes over a second, so it is
// compiled here once (with the module tsc just emitted) rather than on every `serve --dev`.
const { compileTestToken } = await import('../dist/chains/sandbox/test-token-compile.js');
const { testTokenArtifactFile } = await import('../dist/chains/sandbox/test-token-artifact.js');
mkdirSync('dist/contracts', { recursive: true });
writeFileSync(testTokenArtifactFile(), `${JSON.stringify(compileTestToken(), null, 2)}\n`);
