import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { wordHash } from './code-cache-hash.js';

/**
 * Loads the CLI's CommonJS chunks (dist/bundle/*.cjs, made by scripts/bundle.mjs from the ESM
 * chunks) and keeps V8's code cache of each in the user's cache folder, so that a command does
 * not parse and compile its ~500 KB of JavaScript on every start. Node 20 has no compile cache
 * of its own for modules (module.enableCompileCache is Node 22), and ESM cannot be given cached
 * data; hence CommonJS chunks compiled through vm.Script.
 *
 * The cache is only a speed-up: an entry is used only when it was made for this very file (size
 * and modification time, as Python's .pyc files are checked) by this Node (the folder is per
 * version and architecture), is owned by this user and writable by nobody else, and the hash of its
 * payload matches (src/code-cache-hash.ts; V8 checks its own version, flags and the source's length, but not its payload:
 * a flipped byte would be run). Anything else (missing, stale, corrupt, unreadable) compiles
 * the source as if there were no cache, and the entry is written again after the command.
 */

/** What a chunk's code sees as `import.meta.url` (scripts/bundle.mjs renames it to this). */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname, __cpImportMetaUrl) {';
const WRAPPER_TAIL = '\n})';

const MAGIC = 0x43504343; // "CPCC"
const FORMAT = 2;
/** magic, format, source size, source mtime (ms, float), payload length, (unused), payload hash. */
const HEADER = 4 + 4 + 8 + 8 + 4 + 4 + 8;

interface Pending {
  name: string;
  st: Stats;
  script: Script;
}

export interface BundleLoader {
  /** Loads a chunk of the bundle folder by its relative name (`./main.cjs`), once. */
  require(spec: string): any;
  /** Writes the cache entries that were missing or refused during this run (never throws). */
  save(): void;
  /** Chunks loaded from a valid cache entry, and compiled from source: for tests and benchmarks. */
  readonly stats: { cached: number; compiled: number };
}

/**
 * `bundleDir`: the folder of the .cjs chunks. `cacheDir`: where the entries live (one folder per
 * install, Node version and architecture; see codeCacheDir); undefined for no cache at all.
 */
export function bundleLoader(bundleDir: string, cacheDir: string | undefined): BundleLoader {
  const modules = new Map<string, { exports: any }>();
  const pending: Pending[] = [];
  const stats = { cached: 0, compiled: 0 };
  // Bare specifiers (node: builtins, tronweb, solc) resolve as from a file of the bundle.
  const nodeRequire = createRequire(join(bundleDir, 'loader.cjs'));
  // Without a user id (not on POSIX) an entry's owner cannot be checked, so none is used.
  const uid = process.getuid?.();
  const useCache = cacheDir !== undefined && uid !== undefined;

  const readEntry = (name: string, st: Stats): Buffer | undefined => {
    let fd: number;
    try {
      fd = openSync(join(cacheDir!, `${name}.v8`), 'r');
    } catch {
      return undefined;
    }
    try {
      const own = fstatSync(fd);
      // Code from this file is run: it must be the user's own and writable by nobody else.
      if (!own.isFile() || own.uid !== uid || (own.mode & 0o022) !== 0) return undefined;
      const data = readFileSync(fd);
      if (data.length < HEADER) return undefined;
      if (data.readUInt32LE(0) !== MAGIC || data.readUInt32LE(4) !== FORMAT) return undefined;
      if (data.readDoubleLE(8) !== st.size || data.readDoubleLE(16) !== st.mtimeMs) return undefined;
      const payload = data.subarray(HEADER);
      if (data.readUInt32LE(24) !== payload.length || data.readBigUInt64LE(32) !== wordHash(payload)) return undefined;
      return payload;
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  };

  // A chunk's import.meta.url: the bundle's folder made a URL once, its plain names appended
  // (pathToFileURL per chunk was ~1 ms of an `order status` loading 17 of them; issue #16).
  let dirUrl: string | undefined;
  const urlOf = (name: string, filename: string): string => {
    if (!/^[\w.-]+$/.test(name)) return pathToFileURL(filename).href;
    dirUrl ??= pathToFileURL(join(bundleDir, '/')).href;
    return dirUrl + name;
  };

  const load = (name: string): any => {
    const known = modules.get(name);
    if (known) return known.exports;
    const filename = join(bundleDir, name);
    const fd = openSync(filename, 'r');
    let st: Stats;
    let source: string;
    try {
      st = fstatSync(fd);
      source = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
    const cachedData = useCache ? readEntry(name, st) : undefined;
    const script = new Script(WRAPPER_HEAD + source + WRAPPER_TAIL, { filename, cachedData });
    if (cachedData && !script.cachedDataRejected) stats.cached++;
    else {
      stats.compiled++;
      if (useCache) pending.push({ name, st, script });
    }
    const module = { exports: {} as any };
    // Registered before it runs: chunks import each other in cycles, as ES modules may.
    modules.set(name, module);
    const fn = script.runInThisContext();
    fn.call(module.exports, module.exports, req, module, filename, bundleDir, urlOf(name, filename));
    return module.exports;
  };

  const req = Object.assign((spec: string) => (spec.startsWith('./') ? load(spec.slice(2)) : nodeRequire(spec)), {
    resolve: nodeRequire.resolve,
  });

  return {
    require: req,
    stats,
    save() {
      if (!useCache || pending.length === 0) return;
      try {
        mkdirSync(cacheDir!, { recursive: true, mode: 0o700 });
        for (const { name, st, script } of pending.splice(0)) {
          // Made after the command ran, so it holds the functions this run compiled, not just the top level.
          const payload = script.createCachedData();
          const header = Buffer.alloc(HEADER);
          header.writeUInt32LE(MAGIC, 0);
          header.writeUInt32LE(FORMAT, 4);
          header.writeDoubleLE(st.size, 8);
          header.writeDoubleLE(st.mtimeMs, 16);
          header.writeUInt32LE(payload.length, 24);
          header.writeBigUInt64LE(wordHash(payload), 32);
          // A whole file or none: another command may be reading this entry right now.
          const tmp = join(cacheDir!, `${name}.v8.${process.pid}.tmp`);
          writeFileSync(tmp, Buffer.concat([header, payload]), { mode: 0o600 });
          renameSync(tmp, join(cacheDir!, `${name}.v8`));
        }
        prune(bundleDir, cacheDir!);
      } catch {
        // A read-only or full disk only costs the next start its compile.
      }
    },
  };
}

/** Entries of chunks this install no longer has (an earlier build's) are removed. */
function prune(bundleDir: string, cacheDir: string): void {
  for (const entry of readdirSync(cacheDir)) {
    const chunk = entry.replace(/\.v8(\.\d+\.tmp)?$/, '');
    if (chunk === entry || existsSync(join(bundleDir, chunk))) continue;
    try {
      unlinkSync(join(cacheDir, entry));
    } catch {
      // Another command removed it first.
    }
  }
}

/**
 * One folder per install (two checkouts must not overwrite each other's entries on every run),
 * Node version and architecture, under $XDG_CACHE_HOME/cryptopay/code (default ~/.cache).
 * CRYPTOPAY_CODE_CACHE=0 turns the cache off.
 */
export function codeCacheDir(userCacheDir: string, bundleDir: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.CRYPTOPAY_CODE_CACHE === '0') return undefined;
  let h = 0x811c9dc5;
  for (let i = 0; i < bundleDir.length; i++) h = Math.imul(h ^ bundleDir.charCodeAt(i), 16777619);
  return join(userCacheDir, 'code', `${process.version}-${process.arch}-${(h >>> 0).toString(16).padStart(8, '0')}`);
}
