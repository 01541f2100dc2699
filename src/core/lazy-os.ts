import { createRequire } from 'node:module';

let os: typeof import('node:os') | undefined;

/**
 * node:os, loaded on first use: loading it was ~0.3 ms of every start-up (issue #16), for a
 * home directory only needed where $HOME is unset and an account name only needed by a command
 * that records who acted. Builtins resolve without a file system lookup, so the require may be
 * rooted anywhere.
 */
export function lazyOs(): typeof import('node:os') {
  os ??= createRequire('/')('node:os') as typeof import('node:os');
  return os;
}
