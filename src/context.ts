import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AppError, fileProblem, usage } from './core/errors.js';
import { lazyOs } from './core/lazy-os.js';
import { configDir } from './paths.js';
import { chooseTarget } from './remote/choose.js';
import type { OperatorService } from './core/service.js';
import type { LocalPaymentService } from './store/local-service.js';

/** Where a command writes: injected, so tests read what a user would see. */
export interface IO {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  stdin: Readable;
  /** stdout is a terminal: tables and colour. */
  isTTY: boolean;
  /** Both ends are a terminal: we may ask questions. */
  interactive: boolean;
  /** The terminal's width, when stdout is one. */
  columns?: number;
}

export interface Globals {
  db?: string;
  json: boolean;
  yes: boolean;
  mchId?: string;
  remote?: string;
  operator?: string;
  secretFile?: string;
  profile?: string;
  timeout?: string;
  /** --insecure-http: plain http to a remote that is not this machine is allowed. */
  insecureHttp?: boolean;
  /** --format: how lists are written (default: a table on a terminal, tab-separated in a pipe). */
  format?: 'table' | 'tsv' | 'csv';
}

export interface Prompter {
  /** `validate` answers true, or why the answer is refused (shown where it was typed, and asked again). */
  input(message: string, opts?: { validate?: (value: string) => true | string }): Promise<string>;
  /** Hidden input, for secrets. */
  secret(message: string): Promise<string>;
  confirm(message: string): Promise<boolean>;
}

/** Where operations go when a remote is configured. */
export interface RemoteTarget {
  url: string;
  mchId?: string;
  secret?: string;
  /** Where the secret came from, for messages (never the secret itself). */
  secretSource?: string;
  timeoutMs: number;
  /** Where the target came from, for messages. */
  source: string;
  /** The saved profile whose URL it is, if one is. */
  profile?: string;
}

export interface Context {
  io: IO;
  env: NodeJS.ProcessEnv;
  globals: Globals;
  now(): number;
  color: boolean;
  stopSignal(): Promise<string>;
  prompter: Prompter;
  /** This CLI as the user would type it again, for commands printed to copy (serve's banner). */
  command(): string;
  /**
   * The PaymentService and the operator's extensions: the local ledger, or a remote instance
   * when one is configured. Commands never know which they hold.
   */
  service(): Promise<OperatorService>;
  /** A remote is configured: operations are forwarded, signed. */
  isRemote(): boolean;
  /** Where a remote operation goes and from which setting (profile, flag, variable); undefined locally. */
  remoteTarget(): Promise<RemoteTarget | undefined>;
  /** The local ledger with its administration; refuses when a remote is configured. */
  local(what: string, opts?: { create?: boolean }): Promise<LocalPaymentService>;
  /**
   * The local ledger's file, refused as local() refuses it (a remote configured, no such file, an
   * unreadable chains config) but not opened: for a read that needs SQLite alone.
   */
  ledgerFile(what: string): Promise<string>;
  close(): void;
}

export interface ContextDeps {
  io: IO;
  env: NodeJS.ProcessEnv;
  now?: () => number;
  prompter?: Prompter;
  /** Resolves with the signal's name when the process is asked to stop (SIGTERM, SIGINT). */
  stopSignal?: () => Promise<string>;
  /** The command as the user would type it again (bin/cryptopay); `cryptopay` when not given. */
  invokedAs?: () => string;
}

const lazyPrompter: Prompter = {
  async input(message, opts) {
    const { input } = await import('@inquirer/prompts');
    return input({ message, required: true, validate: opts?.validate });
  },
  async secret(message) {
    const { password } = await import('@inquirer/prompts');
    return password({ message, mask: true });
  },
  async confirm(message) {
    const { confirm } = await import('@inquirer/prompts');
    return confirm({ message, default: false });
  },
};

export function operatorName(globals: Globals, env: NodeJS.ProcessEnv): string {
  if (globals.operator) return globals.operator;
  try {
    return lazyOs().userInfo().username;
  } catch {
    return env.USER ?? 'operator';
  }
}

/**
 * The profile in force, read cheaply: the name only. Its secret is read, and the file's mode
 * checked, when the remote is actually used.
 */
function activeProfileName(env: NodeJS.ProcessEnv): string | undefined {
  const path = join(configDir(env), 'config.json');
  if (!existsSync(path)) return undefined;
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { active?: string | null }).active ?? undefined;
  } catch {
    return 'invalid config';
  }
}

/** Where the chains config is read from: $CRYPTOPAY_CHAINS, else the default file (which may not exist). */
export function chainsConfigPath(env: NodeJS.ProcessEnv): string {
  return env.CRYPTOPAY_CHAINS || join(configDir(env), 'chains.json');
}

/**
 * Extra chains and tokens: $CRYPTOPAY_CHAINS, else $XDG_CONFIG_HOME/cryptopay/chains.json when
 * it exists. Checked against its schema when the registry is first used.
 */
export function readChainsConfig(env: NodeJS.ProcessEnv): any {
  const path = chainsConfigPath(env);
  if (!env.CRYPTOPAY_CHAINS && !existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw usage(`cannot read the chains config ${path}: ${fileProblem(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw usage(`the chains config ${path} is not valid JSON`);
  }
}

/** CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1: notifyUrls may point to this machine or its network (development). */
export function allowPrivateCallbacks(env: NodeJS.ProcessEnv): boolean {
  return env.CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS === '1';
}

export function createContext(deps: ContextDeps, globals: Globals): Context {
  const now = deps.now ?? Date.now;
  let local: LocalPaymentService | undefined;
  let operatorNoted = false;
  let target: Promise<RemoteTarget | undefined> | undefined;
  // Whether a remote may be in play (src/remote/choose.ts): a conflict counts, so that
  // resolveRemote (remote/target.ts) refuses it as a usage error.
  const remoteUrl = () => {
    const choice = chooseTarget(globals, deps.env);
    return choice.to === 'local' ? undefined : choice.to === 'active profile' ? activeProfileName(deps.env) : choice.to;
  };
  // The remote's details (profile file, secret, zod) are read only when a remote is in play.
  const resolveRemote = () =>
    (target ??= remoteUrl() ? import('./remote/target.js').then((m) => m.resolveRemote(globals, deps.env)) : Promise.resolve(undefined));
  const ledgerPath = async (create: boolean): Promise<string> => {
    const { resolveLedgerPath } = await import('./store/ledger-file.js');
    const path = resolveLedgerPath(globals.db, deps.env);
    // Only the commands that start a ledger (merchant add, serve) may create one (spec decisions
    // §10): any other command on a mistyped --db would otherwise make an empty ledger, print
    // nothing and exit 0, and `ledger check` would call it sound.
    if (!create && path !== ':memory:' && !existsSync(path)) {
      throw new AppError('unavailable', `no ledger at ${path} (nothing was created): check --db or CRYPTOPAY_DB, or start a ledger with cryptopay merchant add`);
    }
    return path;
  };
  const refuseRemote = async (what: string): Promise<void> => {
    const remote = await resolveRemote();
    if (remote) {
      throw usage(`${what} needs a local ledger: it is not part of the REST interface, so it cannot run against the remote ${remote.url} (from ${remote.source}); pass --db PATH to use a local ledger`);
    }
  };
  const openLocal = async (create = false): Promise<LocalPaymentService> => {
    if (local) return local;
    const [{ openLedger }, { LocalPaymentService }] = await Promise.all([import('./store/db.js'), import('./store/local-service.js')]);
    const path = await ledgerPath(create);
    const registryConfig = readChainsConfig(deps.env);
    const ledger = openLedger(path, { create });
    local = new LocalPaymentService(ledger, {
      now, caller: { actor: operatorName(globals, deps.env) }, registryConfig, allowPrivateCallbacks: allowPrivateCallbacks(deps.env),
      // The refusal names what lifts it here: this variable, not serve's flag (an integrator review).
      privateSwitch: 'CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS=1',
      localOperator: true,
    });
    return local;
  };
  return {
    io: deps.io,
    env: deps.env,
    globals,
    now,
    color: deps.io.isTTY && !deps.env.NO_COLOR,
    stopSignal: deps.stopSignal ?? (() => new Promise<string>(() => {})),
    prompter: deps.prompter ?? lazyPrompter,
    command: () => deps.invokedAs?.() ?? 'cryptopay',
    isRemote: () => !!remoteUrl(),
    remoteTarget: () => resolveRemote(),
    async service() {
      const remote = await resolveRemote();
      if (remote) {
        // A support engineer expects their name in the audit log; a remote's log names the
        // merchant whose secret signed (api:<mchId>), and the interface has no field for it.
        if (globals.operator && !operatorNoted) {
          operatorNoted = true;
          deps.io.stderr.write(`note: --operator is not sent to a remote: its audit log names the merchant whose secret signs (api:${remote.mchId ?? '<mchId>'})\n`);
        }
        const { RemotePaymentService } = await import('./remote/client.js');
        return new RemotePaymentService({ baseUrl: remote.url, mchId: remote.mchId, secret: remote.secret, secretSource: remote.secretSource, timeoutMs: remote.timeoutMs, now, profile: remote.profile });
      }
      return openLocal();
    },
    async local(what, opts) {
      await refuseRemote(what);
      return openLocal(opts?.create ?? false);
    },
    async ledgerFile(what) {
      await refuseRemote(what);
      const path = await ledgerPath(false);
      readChainsConfig(deps.env);
      return path;
    },
    close() {
      local?.ledger.close();
      local = undefined;
    },
  };
}
