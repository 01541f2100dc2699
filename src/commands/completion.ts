import type { Command } from 'commander';
import type { Context } from '../context.js';
import { usage } from '../core/errors.js';

interface Level {
  /** Subcommand path joined with ':' ("" for the top level). */
  path: string;
  subcommands: string[];
  options: string[];
}

/** Every level of the command tree, read from the very program the CLI parses with. */
function levels(program: Command): Level[] {
  const globals = program.options.filter((o) => !o.hidden).map((o) => o.long).filter((l): l is string => !!l);
  const out: Level[] = [];
  const walk = (cmd: Command, path: string) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    const own = cmd === program ? [] : cmd.options.filter((o) => !o.hidden).map((o) => o.long).filter((l): l is string => !!l);
    const inherited = cmd === program ? globals : globals.filter((g) => g !== '--version');
    out.push({ path, subcommands: subs.map((c) => c.name()), options: [...new Set([...own, ...inherited, '--help'])] });
    for (const c of subs) walk(c, path ? `${path}:${c.name()}` : c.name());
  };
  walk(program, '');
  return out;
}

const bashWord = (s: string) => (/^[A-Za-z0-9_:.-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * `names`: the command words to complete: `cryptopay`, and the command as this run was typed
 * when that is another (./bin/cryptopay from a checkout, as the README has it).
 */
function bash(all: Level[], names: string[]): string {
  const known = all.map((l) => l.path).filter(Boolean).join(' ');
  const cases = all
    .map((l) => `    ${l.path ? bashWord(l.path) : "''"}) words=${bashWord([...l.subcommands, ...l.options].join(' '))} ;;`)
    .join('\n');
  return `# cryptopay completion for bash: eval "$(cryptopay completion bash)" (or save it under
# /etc/bash_completion.d/ or ~/.local/share/bash-completion/completions/cryptopay)
_cryptopay() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next w i words=""
  local known=" ${known} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="\${path:+$path:}$w"
    [[ "$known" == *" $next "* ]] && path="$next"
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
${names.map((n) => `complete -o default -F _cryptopay ${bashWord(n)}`).join('\n')}
`;
}

function zsh(all: Level[], names: string[]): string {
  return `#compdef cryptopay
# cryptopay completion for zsh: eval "$(cryptopay completion zsh)" in ~/.zshrc
autoload -U +X bashcompinit && bashcompinit
${bash(all, names).split('\n').filter((l) => !l.startsWith('# ')).join('\n')}`;
}

/** fish is registered for `cryptopay` alone (`_names` unused): its `complete -c` names a command, not a path typed. */
function fish(all: Level[], _names: string[]): string {
  const known = all.map((l) => l.path).filter(Boolean).join(' ');
  const lines = [
    '# cryptopay completion for fish: cryptopay completion fish > ~/.config/fish/completions/cryptopay.fish',
    'function __cryptopay_path',
    `    set -l known ${known}`,
    "    set -l path ''",
    '    for w in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $w; and continue",
    "        set -l next (string join ':' -- $path $w | string trim -c ':')",
    '        contains -- $next $known; and set path $next',
    '    end',
    '    echo $path',
    'end',
    'complete -c cryptopay -f',
  ];
  for (const l of all) {
    const cond = `'test "(__cryptopay_path)" = "${l.path}"'`;
    if (l.subcommands.length) lines.push(`complete -c cryptopay -n ${cond} -a '${l.subcommands.join(' ')}'`);
    for (const o of l.options) lines.push(`complete -c cryptopay -n ${cond} -l ${o.replace(/^--/, '')}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function run(ctx: Context, _opts: unknown, shell: string): Promise<void> {
  const make = { bash, zsh, fish }[shell as 'bash' | 'zsh' | 'fish'];
  if (!make) throw usage(`completion is for bash, zsh or fish, not ${JSON.stringify(shell)}: cryptopay completion bash`);
  const { buildProgram } = await import('../main.js');
  const names = [...new Set(['cryptopay', ctx.command()])];
  ctx.io.stdout.write(make(levels(buildProgram({ io: ctx.io, env: ctx.env }, { code: 0 })), names));
}
