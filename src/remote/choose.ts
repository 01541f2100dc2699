/**
 * Where an operation goes: the local ledger or a remote (docs/decisions.md, "Remote or local").
 * The command line decides first, then the shell's environment, then the saved active profile:
 *
 * 1. `--db PATH` (local), `--remote URL`, `--profile NAME`: at most one of them.
 * 2. `CRYPTOPAY_DB` (local) or `CRYPTOPAY_REMOTE`: not both, unless a flag decides.
 * 3. The active profile, if one is saved; else the default local ledger.
 *
 * An empty variable counts as unset. Cheap (no file is read): the active profile's name is read
 * by the caller, only when it is the one that decides.
 */
export type Choice =
  | { to: 'local' }
  | { to: 'remote'; url: string; source: '--remote' | 'CRYPTOPAY_REMOTE' }
  | { to: 'profile'; name: string }
  | { to: 'active profile' }
  | { to: 'conflict'; why: string };

export function chooseTarget(globals: { db?: string; remote?: string; profile?: string }, env: NodeJS.ProcessEnv): Choice {
  const flags = (['db', 'remote', 'profile'] as const).filter((f) => globals[f] !== undefined);
  if (flags.length > 1) {
    return { to: 'conflict', why: flags.includes('db') ? 'give either --db (local ledger) or a remote, not both' : 'give either --remote or --profile, not both' };
  }
  if (globals.db !== undefined) return { to: 'local' };
  if (globals.remote !== undefined) return { to: 'remote', url: globals.remote, source: '--remote' };
  if (globals.profile !== undefined) return { to: 'profile', name: globals.profile };
  const envDb = env.CRYPTOPAY_DB || undefined;
  const envRemote = env.CRYPTOPAY_REMOTE || undefined;
  if (envDb && envRemote) {
    return { to: 'conflict', why: 'CRYPTOPAY_DB and CRYPTOPAY_REMOTE are both set: say which with --db PATH or --remote URL, or unset one' };
  }
  if (envDb) return { to: 'local' };
  if (envRemote) return { to: 'remote', url: envRemote, source: 'CRYPTOPAY_REMOTE' };
  return { to: 'active profile' };
}
