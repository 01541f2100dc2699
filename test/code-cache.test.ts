/**
 * The CLI's chunk loader and its V8 code cache (src/code-cache.ts), on real files in a temporary
 * folder: the cache may only ever make a start faster, never change what runs.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundleLoader, codeCacheDir } from '../src/code-cache.js';

let dir: string;
let bundle: string;
let cache: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cryptopay-code-cache-'));
  bundle = join(dir, 'bundle');
  cache = join(dir, 'cache');
  writeBundle();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Two chunks that import each other, as esbuild's chunks may, and a value computed by a function. */
function writeBundle(): void {
  mkdirSync(bundle);
  writeFileSync(join(bundle, 'main.cjs'), 'exports.value = () => 1 + 1;\nexports.url = __cpImportMetaUrl;\nconst b = require("./b.cjs");\nexports.fromB = () => b.twice(exports.value());\n');
  writeFileSync(join(bundle, 'b.cjs'), 'const main = require("./main.cjs");\nexports.twice = (x) => 2 * x;\nexports.sawMain = typeof main.value;\n');
}

const entries = () => readdirSync(cache).sort();

function run(): { value: number; fromB: number; sawMain: string; stats: { cached: number; compiled: number } } {
  const loader = bundleLoader(bundle, cache);
  const main = loader.require('./main.cjs');
  const b = loader.require('./b.cjs');
  const out = { value: main.value(), fromB: main.fromB(), sawMain: b.sawMain, stats: { ...loader.stats } };
  loader.save();
  return out;
}

/** Flips one byte of an entry's payload, leaving its header (and so V8's own checks) intact. */
function corrupt(file: string): void {
  const data = readFileSync(file);
  data[data.length >> 1] ^= 0x55;
  writeFileSync(file, data, { mode: 0o600 });
}

describe('bundleLoader', () => {
  it('loads chunks that require each other; the next run takes both from the cache with the same results', () => {
    const first = run();
    expect(first).toEqual({ value: 2, fromB: 4, sawMain: 'function', stats: { cached: 0, compiled: 2 } });
    expect(entries()).toEqual(['b.cjs.v8', 'main.cjs.v8']);
    for (const e of entries()) expect(statSync(join(cache, e)).mode & 0o777).toBe(0o600);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const second = run();
    expect(second).toEqual({ ...first, stats: { cached: 2, compiled: 0 } });
  });

  it('gives a chunk import.meta.url as its own file URL', () => {
    const loader = bundleLoader(bundle, cache);
    expect(loader.require('./main.cjs').url).toBe(`file://${join(bundle, 'main.cjs')}`);
  });

  it("gives it Node's own file URL in a folder whose name needs escaping", () => {
    const odd = join(dir, 'a b%23#?ü');
    mkdirSync(odd);
    for (const f of ['main.cjs', 'b.cjs']) writeFileSync(join(odd, f), readFileSync(join(bundle, f)));
    const url = bundleLoader(odd, cache).require('./main.cjs').url;
    expect(url).toBe(pathToFileURL(join(odd, 'main.cjs')).href);
    expect(fileURLToPath(url)).toBe(join(odd, 'main.cjs'));
  });

  it('runs a chunk as it is now when it changed since its entry was made, even at the same length', () => {
    run();
    const file = join(bundle, 'main.cjs');
    const before = readFileSync(file, 'utf8');
    const after = before.replace('1 + 1', '2 + 3');
    expect(after.length).toBe(before.length);
    writeFileSync(file, after);
    const later = new Date(statSync(file).mtimeMs + 10_000);
    utimesSync(file, later, later);
    const changed = run();
    expect(changed.value).toBe(5);
    expect(changed.stats).toEqual({ cached: 1, compiled: 1 });
    // And the entry was made again for the new source.
    expect(run().stats).toEqual({ cached: 2, compiled: 0 });
  });

  it('never runs a corrupt entry: it compiles from source and writes the entry again', () => {
    run();
    for (const e of entries()) corrupt(join(cache, e));
    const r = run();
    expect(r).toMatchObject({ value: 2, fromB: 4, sawMain: 'function', stats: { cached: 0, compiled: 2 } });
    expect(run().stats).toEqual({ cached: 2, compiled: 0 });
  });

  it('ignores truncated, empty and foreign entries', () => {
    run();
    writeFileSync(join(cache, 'main.cjs.v8'), readFileSync(join(cache, 'main.cjs.v8')).subarray(0, 40), { mode: 0o600 });
    writeFileSync(join(cache, 'b.cjs.v8'), '', { mode: 0o600 });
    expect(run()).toMatchObject({ value: 2, fromB: 4, stats: { cached: 0, compiled: 2 } });
    writeFileSync(join(cache, 'main.cjs.v8'), 'not a code cache at all, but long enough for a header', { mode: 0o600 });
    expect(run()).toMatchObject({ value: 2, stats: { cached: 1, compiled: 1 } });
  });

  it('does not use an entry that others may write', () => {
    run();
    chmodSync(join(cache, 'main.cjs.v8'), 0o666);
    expect(run().stats).toEqual({ cached: 1, compiled: 1 });
    // Written again, as the user's own.
    expect(statSync(join(cache, 'main.cjs.v8')).mode & 0o777).toBe(0o600);
  });

  it('works, and writes nothing, when the cache folder cannot be made', () => {
    writeFileSync(join(dir, 'a-file'), '');
    cache = join(dir, 'a-file', 'cache');
    expect(run()).toMatchObject({ value: 2, fromB: 4, stats: { cached: 0, compiled: 2 } });
    expect(run().stats).toEqual({ cached: 0, compiled: 2 });
  });

  it('without a cache folder, reads and writes nothing', () => {
    const loader = bundleLoader(bundle, undefined);
    expect(loader.require('./main.cjs').fromB()).toBe(4);
    loader.save();
    expect(() => readdirSync(cache)).toThrow();
  });

  it("removes the entries of chunks the bundle no longer has (an earlier build's)", () => {
    run();
    writeFileSync(join(cache, 'chunk-OLD.cjs.v8'), 'x', { mode: 0o600 });
    writeFileSync(join(cache, 'main.cjs.v8'), 'x', { mode: 0o600 }); // refused, so written again
    run();
    expect(entries()).toEqual(['b.cjs.v8', 'main.cjs.v8']);
  });
});

describe('codeCacheDir', () => {
  it('is per install, Node version and architecture, and off with CRYPTOPAY_CODE_CACHE=0', () => {
    const a = codeCacheDir('/c', '/opt/a/dist/bundle', {});
    expect(a).toMatch(new RegExp(`^/c/code/${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{8}$`));
    expect(codeCacheDir('/c', '/opt/b/dist/bundle', {})).not.toBe(a);
    expect(codeCacheDir('/c', '/opt/a/dist/bundle', {})).toBe(a);
    expect(codeCacheDir('/c', '/opt/a/dist/bundle', { CRYPTOPAY_CODE_CACHE: '0' })).toBeUndefined();
  });
});
