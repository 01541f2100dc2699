import { join } from 'node:path';
import { lazyOs } from './core/lazy-os.js';

/** $HOME, else the account's home as node:os finds it (node:os is loaded only then). */
function homedir(env: NodeJS.ProcessEnv): string {
  return env.HOME || lazyOs().homedir();
}

/** $XDG_CONFIG_HOME/cryptopay (profiles, chains config). Light: read on every start. */
export function configDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(env), '.config'), 'cryptopay');
}

/** $XDG_DATA_HOME/cryptopay (the default ledger). */
export function dataDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_DATA_HOME || join(homedir(env), '.local', 'share'), 'cryptopay');
}

/** $XDG_CACHE_HOME/cryptopay (the CLI's compiled code: src/code-cache.ts). Nothing in it is needed. */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(homedir(env), '.cache'), 'cryptopay');
}
