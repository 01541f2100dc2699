import { userInfo } from 'node:os';
import type { Readable } from 'node:stream';
import { AppError, usage } from './core/errors.js';
import type { PaymentService } from './core/service.js';
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
}

export interface Prompter {
  input(message: string): Promise<string>;
  confirm(message: string): Promise<boolean>;
}

export interface Context {
  io: IO;
  env: NodeJS.ProcessEnv;
  globals: Globals;
  now(): number;
  color: boolean;
  stopSignal(): Promise<string>;
  prompter: Prompter;
  /** The PaymentService: the local ledger, or a remote instance when one is configured. */
  service(): Promise<PaymentService>;
  /** A remote is configured: operations are forwarded, signed. */
  isRemote(): boolean;
  /** The local ledger with its administration; refuses when a remote is configured. */
  local(what: string): Promise<LocalPaymentService>;
  close(): void;
}

export interface ContextDeps {
  io: IO;
  env: NodeJS.ProcessEnv;
  now?: () => number;
  prompter?: Prompter;
  /** Resolves with the signal's name when the process is asked to stop (SIGTERM, SIGINT). */
  stopSignal?: () => Promise<string>;
}

const lazyPrompter: Prompter = {
  async input(message) {
    const { input } = await import('@inquirer/prompts');
    return input({ message, required: true });
  },
  async confirm(message) {
    const { confirm } = await import('@inquirer/prompts');
    return confirm({ message, default: false });
  },
};

export function operatorName(globals: Globals, env: NodeJS.ProcessEnv): string {
  if (globals.operator) return globals.operator;
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? 'operator';
  }
}

export function createContext(deps: ContextDeps, globals: Globals): Context {
  const now = deps.now ?? Date.now;
  let local: LocalPaymentService | undefined;
  const remoteUrl = () => globals.remote ?? deps.env.CRYPTOPAY_REMOTE;
  const openLocal = async (): Promise<LocalPaymentService> => {
    if (local) return local;
    const [{ openLedger, resolveLedgerPath }, { LocalPaymentService }] = await Promise.all([
      import('./store/db.js'),
      import('./store/local-service.js'),
    ]);
    const ledger = openLedger(resolveLedgerPath(globals.db, deps.env));
    local = new LocalPaymentService(ledger, { now, caller: { actor: operatorName(globals, deps.env) } });
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
    isRemote: () => !!remoteUrl(),
    async service() {
      if (remoteUrl()) {
        throw new AppError('usage', 'remote mode is not available yet');
      }
      return openLocal();
    },
    async local(what) {
      if (remoteUrl()) throw usage(`${what} needs a local ledger: it is not part of the REST interface, so it cannot run against a remote (unset --remote / CRYPTOPAY_REMOTE)`);
      return openLocal();
    },
    close() {
      local?.ledger.close();
      local = undefined;
    },
  };
}
