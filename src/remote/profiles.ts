import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { AppError, fileProblem, usage } from '../core/errors.js';
import { describeIssues } from '../core/schemas.js';
import { configDir } from '../paths.js';
import { credentialsProblem } from './remote-url.js';
import { assertPrivate } from './secret-file.js';

/** A name profile add takes: 1 to 40 letters, digits, dots, dashes or underscores (printed as typed). */
export const isProfileName = (name: string): boolean => /^[A-Za-z0-9._-]{1,40}$/.test(name);

/**
 * Remote profiles live in $XDG_CONFIG_HOME/cryptopay/config.json, mode 0600. The file may hold
 * merchant secrets, so a copy that others can read is refused rather than used.
 */
const profileSchema = z.strictObject({
  remote: z
    .url({ protocol: /^https?$/, error: 'remote must be an http or https URL' })
    .superRefine((v, ctx) => {
      const problem = credentialsProblem(new URL(v));
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  mchId: z.string().min(1).max(64).optional(),
  secret: z.string().min(1).optional(),
  secretFile: z.string().min(1).optional(),
  timeout: z.string().optional(),
  /** Plain http to a host other than this machine is allowed for this profile. */
  insecureHttp: z.boolean().optional(),
});
const configSchema = z.strictObject({
  active: z.string().nullable().default(null),
  profiles: z.record(z.string(), profileSchema).default({}),
});

export type Profile = z.infer<typeof profileSchema>;
export type Config = z.infer<typeof configSchema>;

export function configPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { active: null, profiles: Object.create(null) as Config['profiles'] };
    throw usage(`cannot read the config file ${path}: ${fileProblem(e)}`);
  }
  assertPrivate(path, 'the config file');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw usage(`the config file ${path} is not valid JSON`);
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) throw usage(`the config file ${path} is not valid: ${describeIssues(parsed.error)}`);
  // Looked up by the names users type: `constructor` or `toString` must find no profile, not
  // Object.prototype's.
  return { ...parsed.data, profiles: Object.assign(Object.create(null) as Config['profiles'], parsed.data.profiles) };
}

/** Written whole to a private temporary file, then renamed over the old one. */
export function writeConfig(env: NodeJS.ProcessEnv, config: Config): string {
  const path = configPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}

export function parseProfile(p: unknown): Profile {
  const parsed = profileSchema.safeParse(p);
  if (!parsed.success) throw new AppError('usage', describeIssues(parsed.error));
  return parsed.data;
}

/** "10s", "500ms", "2m" or plain seconds. */
export function parseTimeout(value: string): number {
  const m = /^(\d{1,6})(ms|s|m)?$/.exec(value.trim());
  if (!m) throw usage(`timeout must look like 10s, 500ms or 2m, got ${JSON.stringify(value)}`);
  const ms = Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 'm' ? 60_000 : 1000);
  if (ms < 1 || ms > 600_000) throw usage('timeout must be between 1ms and 10m');
  return ms;
}
