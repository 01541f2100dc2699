import { usage } from '../core/errors.js';
import type { Globals, RemoteTarget } from '../context.js';
import { parseTimeout, readConfig, type Profile } from './profiles.js';
import { checkRemoteUrl } from './remote-url.js';
import { readSecretFile } from './secret-file.js';

/**
 * Where a remote operation goes, and as whom: --remote, else CRYPTOPAY_REMOTE, else the
 * profile (--profile, else the active one). An explicit --db means the local ledger.
 * Merchant: --mch-id / CRYPTOPAY_MCH_ID / profile. Secret: --secret-file / CRYPTOPAY_SECRET /
 * profile. Timeout: --timeout / CRYPTOPAY_TIMEOUT / profile / 10 s. Plain http to another
 * machine: --insecure-http / CRYPTOPAY_INSECURE_HTTP=1 / a profile saved with it.
 */
export function resolveRemote(globals: Globals, env: NodeJS.ProcessEnv): RemoteTarget | undefined {
  // An empty variable counts as unset (as CRYPTOPAY_SECRET below), so the profile still applies.
  const flagOrEnv = globals.remote ?? (env.CRYPTOPAY_REMOTE || undefined);
  if (flagOrEnv && globals.db) throw usage('give either --db (local ledger) or a remote, not both');
  let profile: Profile | undefined;
  let source: string;
  if (flagOrEnv) {
    source = globals.remote ? '--remote' : 'CRYPTOPAY_REMOTE';
  } else {
    if (globals.db) return undefined;
    const config = readConfig(env);
    const name = globals.profile ?? config.active ?? undefined;
    if (!name) return undefined;
    profile = config.profiles[name];
    if (!profile) throw usage(`there is no profile named ${name}: see cryptopay profile list`);
    source = `profile ${name}`;
  }
  const insecureHttp = !!globals.insecureHttp || env.CRYPTOPAY_INSECURE_HTTP === '1' || profile?.insecureHttp === true;
  const url = checkRemoteUrl(flagOrEnv ?? profile!.remote, { insecureHttp });
  const timeout = globals.timeout ?? env.CRYPTOPAY_TIMEOUT ?? profile?.timeout;
  return {
    url,
    source,
    mchId: globals.mchId || profile?.mchId,
    secret: readSecretFile(globals.secretFile) ?? (env.CRYPTOPAY_SECRET || undefined) ?? profileSecret(profile),
    timeoutMs: timeout ? parseTimeout(timeout) : 10_000,
  };
}

function profileSecret(p: Profile | undefined): string | undefined {
  if (!p) return undefined;
  return p.secret ?? readSecretFile(p.secretFile);
}

