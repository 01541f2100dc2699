import { homedir } from 'node:os';
import { join } from 'node:path';

/** $XDG_CONFIG_HOME/cryptopay (profiles, chains config). Light: read on every start. */
export function configDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'cryptopay');
}

/** $XDG_DATA_HOME/cryptopay (the default ledger). */
export function dataDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'cryptopay');
}

/** $XDG_CACHE_HOME/cryptopay (the CLI's compiled code: src/code-cache.ts). Nothing in it is needed. */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'cryptopay');
}
