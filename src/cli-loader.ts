/**
 * What bin/cryptopay needs before the CLI's own code runs, bundled alone as CommonJS
 * (dist/bundle/loader.cjs): the chunk loader with its code cache, where that cache lives, and the
 * standard output and error.
 */
export { bundleLoader, codeCacheDir, type BundleLoader } from './code-cache.js';
export { cacheDir } from './paths.js';
export { isTerminal, stdOutput } from './std-output.js';
