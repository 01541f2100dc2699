import { Command, CommanderError, Option } from 'commander';
import { AppError, exitCodeOf, isAppError } from './core/errors.js';
import type { Context, ContextDeps, Globals } from './context.js';
import { defineCommands } from './commands/define.js';
import { annotateHelp } from './commands/help-text.js';
import { appVersion, schemaVersion } from './core/version.js';
import { operatorRefusal } from './core/text-rules.js';
import { commandOf, flagsIn, groupsWanted, missingCommand, refuseRepeatedOptions, rewriteHelp, wantsJson } from './commands/argv.js';

/** What a command module exports: parse is done; do the work, print, return an exit code. */
export type CommandRun = (ctx: Context, opts: Record<string, any>, ...args: any[]) => Promise<number | void>;

interface RunState {
  ctx?: Context;
  /** The command being run, for messages that name its options. */
  cmd?: Command;
  code: number;
  /** --json is on the line: every error is JSON, commander's own included. */
  json?: boolean;
}

/** Whether the environment decides colors (no-color.org, FORCE_COLOR, CLICOLOR_FORCE), as commander reads it. */
function colorConvention(env: Record<string, string | undefined>): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
}

/**
 * Whether the line may ask for the version (`--version`, `-V` alone or in a group of short
 * flags): only then are package.json and the migrations' journal read for its text (~0.4 ms of
 * every other start-up, `--help` included; issue #16). Reading it when not needed is harmless.
 */
function asksVersion(argv: string[]): boolean {
  return argv.some((a) => a === '--version' || a.startsWith('--version=') || /^-[^-]*V/.test(a));
}

/** The program for `argv` (by default every command: what completion and the tests walk). */
export function buildProgram(deps: ContextDeps, state: RunState, argv?: string[]): Command {
  const program = new Command('cryptopay')
    .description('Crypto payment back office: payment orders, refunds and withdrawals on EVM chains and TRON')
    .version(argv === undefined || asksVersion(argv) ? `cryptopay ${appVersion()} (ledger schema ${schemaVersion()})` : 'cryptopay', '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => deps.io.stdout.write(s),
      // Under --json, commander's messages (and the help it shows with them) become main's JSON error.
      writeErr: (s) => (state.json ? undefined : deps.io.stderr.write(s)),
      // Commander's defaults ask process.stdout whether it is a terminal, which builds Node's
      // stream and loads its ~20 modules (~3 ms of a `--help` into a pipe): the CLI knows already.
      // The same answers: its width on a terminal, and colors kept by NO_COLOR / FORCE_COLOR /
      // CLICOLOR_FORCE, else where the terminal has them.
      // (Commander types the width as a number; undefined, as its own default gives off a terminal, is 80.)
      getOutHelpWidth: () => deps.io.columns as number,
      getOutHasColors: () => colorConvention(deps.env) ?? (deps.io.isTTY && process.stdout.hasColors?.()),
    })
    .showSuggestionAfterError()
    .option('--db <path>', 'ledger file (default: $CRYPTOPAY_DB, else $XDG_DATA_HOME/cryptopay/ledger.db)')
    .option('--json', 'print JSON for scripts')
    .addOption(new Option('--format <format>', 'how lists are written: table (default on a terminal), tsv (default in a pipe: exact values for scripts, formulas not defused), csv (for spreadsheets: a cell that would run as a formula is written as text), json (as --json)').choices(['table', 'tsv', 'csv', 'json']))
    .option('-y, --yes', 'do not ask before changing money')
    .option('--mch-id <id>', 'merchant (default: $CRYPTOPAY_MCH_ID, else the only merchant of the ledger)')
    .option('--remote <url>', 'forward operations to a remote cryptopay service (default: $CRYPTOPAY_REMOTE)')
    .option('--profile <name>', 'remote profile to use')
    .option('--secret-file <path>', 'read the merchant secret from this file (mode 0600)')
    .option('--timeout <duration>', 'remote request timeout, e.g. 10s')
    .option('--insecure-http', 'allow a plain http remote that is not this machine (default: $CRYPTOPAY_INSECURE_HTTP=1)')
    .option('--operator <name>', 'who you are, for the audit log (default: your OS user)')
    .addOption(new Option('--secret <value>').hideHelp());

  let wanted: ((group: string) => boolean) | undefined;
  const run = (load: () => Promise<{ run: CommandRun }>) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      state.cmd = cmd;
      // A command that runs on its own and has commands too (refund, refund list): a word after it
      // is a mistyped command, refused as commander refuses one (with its "did you mean").
      if (cmd.commands.length && cmd.registeredArguments.length === 0 && cmd.args.length) (cmd as unknown as { unknownCommand(): never }).unknownCommand();
      const opts = cmd.optsWithGlobals() as Record<string, any>;
      if (opts.secret !== undefined) {
        throw new AppError('usage', 'a secret is never taken from a command-line flag (it would stay in your shell history): use CRYPTOPAY_SECRET or --secret-file');
      }
      if (opts.operator !== undefined) {
        const why = operatorRefusal(opts.operator);
        if (why) throw new AppError('usage', why);
      }
      if (opts.json && opts.format && opts.format !== 'json') throw new AppError('usage', `--json and --format ${opts.format} ask for two different outputs: give one`);
      const globals: Globals = {
        db: opts.db,
        json: !!opts.json || opts.format === 'json',
        format: opts.format === 'json' ? undefined : opts.format,
        yes: !!opts.yes,
        mchId: opts.mchId ?? deps.env.CRYPTOPAY_MCH_ID,
        remote: opts.remote,
        operator: opts.operator,
        secretFile: opts.secretFile,
        profile: opts.profile,
        timeout: opts.timeout,
        insecureHttp: !!opts.insecureHttp,
      };
      // Loaded only when a command runs: `--help` and usage errors do without it.
      const { createContext } = await import('./context.js');
      const ctx = createContext(deps, globals);
      state.ctx = ctx;
      const positional = args.slice(0, -2);
      const mod = await load();
      const code = await mod.run(ctx, opts, ...positional);
      state.code = code ?? 0;
    };

  defineCommands(program, run, argv ? (group) => (wanted ??= groupsWanted(program, argv))(group) : undefined);
  annotateHelp(program);
  refuseRepeatedOptions(program);
  return program;
}

/**
 * Parses argv, runs one command, and maps every failure to its exit code. `whole` defines every
 * command whatever the line (the tests compare the two).
 */
export async function main(argv: string[], deps: ContextDeps, whole = false): Promise<number> {
  const state: RunState = { code: 0, json: wantsJson(argv) };
  const program = buildProgram(deps, state, whole ? undefined : argv);
  try {
    await program.parseAsync(rewriteHelp(program, argv), { from: 'user' });
    return state.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0) return 0;
      // Every other parse failure is a usage error; 'commander.help' with exit code 1 is a group
      // command given without its subcommand.
      if (state.json) {
        const message = e.code === 'commander.help' ? missingCommand(commandOf(program, argv).cmd, commandOf(program, argv).path) : e.message.replace(/^error: /, '');
        deps.io.stderr.write(`${JSON.stringify({ error: { kind: 'usage', message } })}\n`);
      }
      return 2;
    }
    // Ctrl-C at a prompt (@inquirer's ExitPromptError): the user stopped before anything changed.
    if ((e as Error)?.name === 'ExitPromptError') {
      deps.io.stderr.write(state.json ? `${JSON.stringify({ error: { kind: 'cancelled', message: 'cancelled: nothing was changed' } })}\n` : '\ncancelled: nothing was changed\n');
      return 130;
    }
    let err = isAppError(e) ? e : new AppError('internal', `internal error: ${(e as Error)?.message ?? String(e)}`);
    if (err.kind === 'invalid' || err.kind === 'usage') err = await nextStep(state, err);
    if (state.json) {
      deps.io.stderr.write(`${JSON.stringify({ error: { kind: err.kind, message: err.message } })}\n`);
    } else {
      deps.io.stderr.write(`error: ${err.message}${err.hint ? `: ${err.hint}` : ''}\n`);
    }
    if (err.kind === 'internal' && deps.env.CRYPTOPAY_DEBUG) deps.io.stderr.write(`${(e as Error).stack}\n`);
    return exitCodeOf[err.kind];
  } finally {
    state.ctx?.close();
  }
}

/**
 * A refusal of the input says it in the CLI's words, with the next step: the options as typed
 * (`--expired-at`, not `expiredAt`), and for a missing merchant the merchants to choose from.
 */
async function nextStep(state: RunState, err: AppError): Promise<AppError> {
  if (/^mchId is required\b/.test(err.message) && state.ctx) {
    const ctx = state.ctx;
    let choices = '';
    if (!ctx.isRemote()) {
      const list = await (await ctx.local('merchant list')).listMerchants().catch(() => []);
      const shown = list.slice(0, 10).map((m) => `${m.mchId} (${m.name})`).join(', ');
      choices = list.length ? `: the ledger holds ${list.length} merchants: ${shown}${list.length > 10 ? `, and ${list.length - 10} more (cryptopay merchant list)` : ''}` : '';
      // Every merchant alike: the first was named alone, and its "not found" then misled (a new-user trial).
      const pass = list.length === 2 ? `pass --mch-id ${list[0]!.mchId} or --mch-id ${list[1]!.mchId}` : 'pass --mch-id with one of them';
      return new AppError('usage', `--mch-id is required${choices}; ${pass}, or set CRYPTOPAY_MCH_ID`);
    }
    return new AppError('usage', '--mch-id is required: pass --mch-id ID, set CRYPTOPAY_MCH_ID, or save it in the profile (cryptopay profile add NAME --remote URL --mch-id ID)');
  }
  const message = flagsIn(err.message, state.cmd);
  return message === err.message ? err : new AppError(err.kind, message);
}
