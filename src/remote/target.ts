import { usage } from '../core/errors.js';
import type { Globals, RemoteTarget } from '../context.js';
import { parseTimeout, readConfig, type Profile } from './profiles.js';
import { chooseTarget } from './choose.js';
import { checkRemoteUrl } from './remote-url.js';
import { readSecretFile } from './secret-file.js';

/**
 * Where a remote operation goes, and as whom (src/remote/choose.ts): --db, --remote or --profile,
 * else CRYPTOPAY_DB or CRYPTOPAY_REMOTE, else the active profile; undefined for the local ledger.
 * Merchant: --mch-id / CRYPTOPAY_MCH_ID / profile. Secret: --secret-file / CRYPTOPAY_SECRET /
 * profile. Timeout: --timeout / CRYPTOPAY_TIMEOUT / profile / 10 s. Plain http to another
 * machine: --insecure-http / CRYPTOPAY_INSECURE_HTTP=1 / a profile saved with it.
 */
export function resolveRemote(globals: Globals, env: NodeJS.ProcessEnv): RemoteTarget | undefined {
  const choice = chooseTarget(globals, env);
  if (choice.to === 'conflict') throw usage(choice.why);
  if (choice.to === 'local') return undefined;
  let profile: Profile | undefined;
  let source: string;
  let flagOrEnv: string | undefined;
  let profileName: string | undefined;
  if (choice.to === 'remote') {
    flagOrEnv = choice.url;
    source = choice.source;
  } else {
    const config = readConfig(env);
    const name = choice.to === 'profile' ? choice.name : config.active ?? undefined;
    if (!name) return undefined;
    profile = config.profiles[name];
    if (!profile) throw usage(`there is no profile named ${name}: see cryptopay profile list`);
    source = `profile ${name}`;
    profileName = name;
  }
  const insecureHttp = !!globals.insecureHttp || env.CRYPTOPAY_INSECURE_HTTP === '1' || profile?.insecureHttp === true;
  const url = checkRemoteUrl(flagOrEnv ?? profile!.remote, { insecureHttp });
  const timeout = globals.timeout ?? env.CRYPTOPAY_TIMEOUT ?? profile?.timeout;
  return {
    url,
    source,
    ...(profileName !== undefined ? { profile: profileName } : {}),
    mchId: globals.mchId || profile?.mchId,
    ...secretOf(globals, env, profile, source),
    timeoutMs: timeout ? parseTimeout(timeout) : 10_000,
  };
}

/**
 * The secret, first found of --secret-file, CRYPTOPAY_SECRET and the profile's (its stored secret,
 * else its secret file), with where it came from for messages. A later source is not read at all:
 * a profile's secret file is opened only when it is the one used.
 */
function secretOf(globals: Globals, env: NodeJS.ProcessEnv, profile: Profile | undefined, source: string): { secret?: string; secretSource?: string } {
  const overrides = profile?.secret !== undefined || profile?.secretFile !== undefined ? `, which overrides the secret ${source} stores` : '';
  const fromFile = readSecretFile(globals.secretFile);
  if (fromFile) return { secret: fromFile, secretSource: `--secret-file ${globals.secretFile}${overrides}` };
  const fromEnv = env.CRYPTOPAY_SECRET || undefined;
  if (fromEnv) return { secret: fromEnv, secretSource: `CRYPTOPAY_SECRET${overrides}` };
  if (profile?.secret !== undefined) return { secret: profile.secret, secretSource: source };
  const fromProfileFile = readSecretFile(profile?.secretFile);
  return fromProfileFile ? { secret: fromProfileFile, secretSource: `${source}'s secret file ${profile!.secretFile}` } : {};
}

