/**
 * What bin/cryptopay needs before the CLI's own code runs, bundled alone as CommonJS
 * (dist/bundle/loader.cjs): the chunk loader with its code cache, and where that cache lives.
 */
export { bundleLoader, codeCacheDir, type BundleLoader } from './code-cache.js';
export { cacheDir } from './paths.js';
