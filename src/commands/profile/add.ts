import type { Context } from '../../context.js';
import { overriddenByShell } from './use.js';
import { usage } from '../../core/errors.js';
import { isProfileName, parseProfile, parseTimeout, readConfig, writeConfig } from '../../remote/profiles.js';
import { checkRemoteUrl } from '../../remote/remote-url.js';
import { readSecretFile } from '../../remote/secret-file.js';
import { confirmChange, need } from '../common.js';
import { success, warn } from '../output.js';
import { checkCredentials } from './check.js';

/**
 * A profile keeps a remote, a merchant and where its secret comes from. The secret is taken
 * from CRYPTOPAY_SECRET or asked for hidden on a terminal, and stored in the 0600 config file;
 * with --secret-file only the path is stored and the file is read (and its mode checked) on use.
 */
export async function run(ctx: Context, opts: { url?: string; use?: boolean; check?: boolean }, name: string): Promise<void> {
  if (!isProfileName(name)) throw usage('a profile name is 1 to 40 letters, digits, dots, dashes or underscores');
  // Profiles are keys of a JSON object: `__proto__` was "saved" and lost, `constructor` read a
  // profile that is not there (an outside review).
  if (name === '__proto__' || name in Object.prototype) throw usage(`${name} cannot be a profile name: it is a reserved word of JavaScript objects; choose another`);
  const remote = await need(ctx, opts.url ?? ctx.globals.remote, 'remote', 'Remote base URL (e.g. https://pay.example.com)');
  // Only the flag is stored: a CRYPTOPAY_INSECURE_HTTP of this shell must not stick to the profile.
  const insecureHttp = !!ctx.globals.insecureHttp;
  checkRemoteUrl(remote, { insecureHttp });
  const mchId = ctx.globals.mchId ?? (await need(ctx, undefined, 'mch-id', 'Merchant id (mchId)'));
  // A saved profile is replaced only when asked for: it may keep the only copy of a secret (a
  // new-user trial replaced one without a word). Asked before the secret and the server.
  const saved = readConfig(ctx.env).profiles[name];
  if (saved) {
    await confirmChange(ctx, `Replace profile ${name}`, [
      ['remote', saved.remote === remote ? remote : `${saved.remote} -> ${remote}`],
      ['merchant', saved.mchId === mchId ? mchId : `${saved.mchId ?? '-'} -> ${mchId}`],
      ['secret', saved.secret ? 'a stored secret, replaced' : saved.secretFile ? `file ${saved.secretFile}, replaced` : 'none stored'],
    ], 'replaces a saved profile and the secret it keeps');
  }
  const timeoutMs = ctx.globals.timeout ? parseTimeout(ctx.globals.timeout) : 10_000;
  let secret: string | undefined;
  let secretFile: string | undefined;
  if (ctx.globals.secretFile) {
    readSecretFile(ctx.globals.secretFile);
    secretFile = ctx.globals.secretFile;
  } else if (ctx.env.CRYPTOPAY_SECRET) {
    secret = ctx.env.CRYPTOPAY_SECRET;
  } else if (ctx.io.interactive) {
    secret = (await ctx.prompter.secret('Merchant secret (hidden)')) || undefined;
  }
  const profile = parseProfile({ remote, mchId, secret, secretFile, timeout: ctx.globals.timeout, ...(insecureHttp ? { insecureHttp } : {}) });
  // Nothing is saved that the server refuses (issue #15 item 8): a typo in the secret or the
  // mchId shows now, not at the first refund.
  let checked: Awaited<ReturnType<typeof checkCredentials>> | undefined;
  if (opts.check !== false) {
    const notSaved = `; the profile was not saved (--no-check saves it without asking the server)`;
    const signWith = secret ?? (secretFile ? readSecretFile(secretFile) : undefined);
    if (!signWith) {
      throw usage(`profile add checks the credentials with a signed request, and there is no secret to sign it with: set CRYPTOPAY_SECRET, pass --secret-file FILE, answer the question on a terminal, or pass --no-check to save the profile unchecked`);
    }
    checked = await checkCredentials({ url: remote, mchId, secret: signWith, timeoutMs }, ctx.now, notSaved);
  }
  const config = readConfig(ctx.env);
  config.profiles[name] = profile;
  if (opts.use) config.active = name;
  const path = writeConfig(ctx.env, config);
  if (ctx.globals.json) {
    ctx.io.stdout.write(`${JSON.stringify({ name, remote, mchId, secret: secret ? 'stored' : secretFile ? `file ${secretFile}` : 'none', active: config.active === name, checked: checked ? { name: checked.identity.name, asset: checked.identity.asset } : false })}\n`);
    return;
  }
  ctx.io.stdout.write(`profile ${name} saved in ${path}\n`);
  if (checked) await success(ctx, `checked: ${remote} accepts the credentials of ${mchId} (${checked.identity.name})`);
  else await warn(ctx, 'not checked against the server (--no-check): `cryptopay profile test` checks it');
  if (!secret && !secretFile) await success(ctx, 'no secret stored: signed operations will need CRYPTOPAY_SECRET or --secret-file');
  if (config.active === name) {
    await success(ctx, `active: operations now go to ${remote}; \`cryptopay profile use --none\` returns to the local ledger`);
    await overriddenByShell(ctx);
  }
  else await success(ctx, `use it with --profile ${name}, or make it the default with \`cryptopay profile use ${name}\``);
}
