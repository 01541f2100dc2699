import type { Command, Option } from 'commander';
import { usage } from '../core/errors.js';

/**
 * What main.ts needs to know about a command line before (or without) commander's parse: a
 * parse error must be JSON under --json, `help order create` must reach `order create`, and a
 * group given without its command must say which commands it has. Pure functions of argv.
 */

/** The tokens before `--`, where options live. */
const optionPart = (argv: string[]) => {
  const end = argv.indexOf('--');
  return end < 0 ? argv : argv.slice(0, end);
};

/** --json or --format json anywhere on the line: errors are JSON whatever failed. */
export function wantsJson(argv: string[]): boolean {
  const a = optionPart(argv);
  return a.some((t, i) => t === '--json' || t === '--format=json' || (t === '--format' && a[i + 1] === 'json'));
}

const takesValue = (cmd: Command, flag: string): boolean => {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = (c.options as readonly Option[]).find((x) => x.long === flag || x.short === flag);
    if (o) return o.required;
  }
  return false;
};

const sub = (cmd: Command, name: string) => cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));

/** The command the line names, and where its operands start. */
export function commandOf(program: Command, argv: string[]): { cmd: Command; path: string[] } {
  let cmd = program;
  const path: string[] = [];
  const a = optionPart(argv);
  for (let i = 0; i < a.length; i++) {
    const t = a[i]!;
    if (t.startsWith('-')) {
      if (!t.includes('=') && takesValue(cmd, t)) i++;
      continue;
    }
    const next = sub(cmd, t);
    if (!next) break;
    cmd = next;
    path.push(t);
  }
  return { cmd, path };
}

/** Where the first word of the line is: past the program's options and their values. */
function firstWord(program: Command, a: string[]): number {
  let i = 0;
  for (; i < a.length; i++) {
    const t = a[i]!;
    if (!t.startsWith('-')) break;
    if (!t.includes('=') && takesValue(program, t)) i++;
  }
  return i;
}

/**
 * `help order create` as `order create --help`: commander's own help command stops at the
 * first level. A name that is not a command is left for commander to refuse (exit 2, with its
 * "did you mean").
 */
export function rewriteHelp(program: Command, argv: string[]): string[] {
  const a = optionPart(argv);
  const i = firstWord(program, a);
  if (a[i] !== 'help') return argv;
  const before = argv.slice(0, i);
  const names = a.slice(i + 1).filter((t) => !t.startsWith('-'));
  let cmd = program;
  for (const [k, name] of names.entries()) {
    const next = sub(cmd, name);
    if (!next) return [...before, ...names.slice(0, k + 1)];
    cmd = next;
  }
  return [...before, ...names, '--help'];
}

/**
 * Which groups' commands a line needs (define.ts): the group it names (`order …`, `help order …`);
 * none for the program's own help (no command named); every group for a word that names no
 * command (commander's "did you mean" looks among them) and for `completion`, which prints them all.
 * Called once the top-level commands are defined.
 */
export function groupsWanted(program: Command, argv: string[]): (group: string) => boolean {
  const a = optionPart(argv);
  const i = firstWord(program, a);
  // After `help`, the first name as rewriteHelp reads it: the next token that is not an option.
  const named = a[i] === 'help' ? a.slice(i + 1).find((t) => !t.startsWith('-')) : a[i];
  if (named === undefined) return () => false;
  const top = sub(program, named);
  if (!top || top.name() === 'completion') return () => true;
  return (group) => group === top.name();
}

/** "withdraw needs a command: apply, confirm, …" for a group given alone. */
export function missingCommand(cmd: Command, path: string[]): string {
  const names = cmd.commands.map((c) => c.name());
  return `${['cryptopay', ...path].join(' ')} needs a command: ${names.join(', ')} (see cryptopay ${[...path, '--help'].join(' ')})`;
}

/** Field names of the interface (expiredAt) as the options a user typed (--expired-at). */
export function flagsIn(message: string, cmd: Command | undefined): string {
  if (!cmd) return message;
  const flags = new Map<string, string>();
  for (let c: Command | null = cmd; c; c = c.parent) {
    for (const o of c.options as readonly Option[]) if (o.long && !o.negate) flags.set(o.attributeName(), o.long);
  }
  // camelCase names are never prose: every one is the field. Plain words only where a message names its subject.
  return message
    .replace(/\b([a-z]+[A-Z][A-Za-z]*)\b/g, (w) => flags.get(w) ?? w)
    .replace(/(^|; |\bor |\band )([a-z]+)(?= (?:is|are|must|has|needs|or|and)\b)/g, (m, pre: string, w: string) => (flags.has(w) ? `${pre}${flags.get(w)}` : m));
}

/**
 * An option that takes a value may be given once: with `--amount 1 --amount 50` commander keeps
 * the last, and a refund of 50 went through where the operator read 1 first (outside review).
 * The line is refused as a usage error before anything runs. A flag without a value (`--json`,
 * `--yes`) twice says the same thing twice and is left alone; the hidden `--secret` is refused
 * on its own, whatever its count.
 */
export function refuseRepeatedOptions(program: Command): void {
  const walk = (cmd: Command, path: string) => {
    for (const o of cmd.options as Option[]) {
      if (o.isBoolean() || o.variadic || o.hidden || REPEATABLE.has(`${path}${o.long}`)) continue;
      let given = false;
      cmd.on(`option:${o.name()}`, () => {
        if (given) throw usage(`${o.long ?? o.flags} is given twice: give it once`);
        given = true;
      });
    }
    for (const c of cmd.commands) walk(c, `${path}${c.name()} `);
  };
  walk(program, '');
}

/** The options meant to be given more than once, by command path: each value adds one. */
const REPEATABLE = new Set(['watch --chain']);
