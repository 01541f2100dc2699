import { describe, expect, it } from 'vitest';
import { groupsWanted } from '../../src/commands/argv.js';
import type { ContextDeps } from '../../src/context.js';
import { buildProgram, main } from '../../src/main.js';

/** main() in this process, both outputs captured; `whole`: every command defined, as before. */
async function answer(argv: string[], whole: boolean): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const deps = {
    env: { NO_COLOR: '1', CRYPTOPAY_DB: '/nonexistent/cryptopay-lazy-groups.db' },
    io: { stdout: { write: (s: string) => ((out += s), true) }, stderr: { write: (s: string) => ((err += s), true) }, isTTY: false, interactive: false },
    stopSignal: () => new Promise<never>(() => {}),
  } as unknown as ContextDeps;
  const code = await main(argv, deps, whole);
  return { code, out, err };
}

const GROUPS = ['merchant', 'order', 'refund', 'withdraw', 'balance', 'ledger', 'dev', 'callbacks', 'profile', 'sign'];

describe('the commands defined for the line at hand', () => {
  it('names the group a line needs, none for the program\'s own help, every one for an unknown word or completion', () => {
    const program = buildProgram({ env: {}, io: {} } as unknown as ContextDeps, { code: 0 });
    const wanted = (argv: string[]) => GROUPS.filter(groupsWanted(program, argv));
    expect(wanted(['--help'])).toEqual([]);
    expect(wanted([])).toEqual([]);
    expect(wanted(['help'])).toEqual([]);
    expect(wanted(['order', 'status', 'ord_x'])).toEqual(['order']);
    // --db takes a value: "order" is the ledger's path here.
    expect(wanted(['--db', 'order', 'refund'])).toEqual(['refund']);
    expect(wanted(['--json', 'help', 'withdraw', 'apply'])).toEqual(['withdraw']);
    expect(wanted(['address', 'x'])).toEqual([]);
    expect(wanted(['ordr'])).toEqual(GROUPS);
    expect(wanted(['completion', 'bash'])).toEqual(GROUPS);
    expect(wanted(['--', 'order'])).toEqual([]);
  });

  it('answers every help and usage line exactly as the program with every command defined does', async () => {
    const lines = [
      ['--help'], [], ['help'], ['-V'], ['order', '--help'], ['help', 'order', 'create'], ['order'], ['--json', 'withdraw'],
      ['ordr'], ['order', 'stat'], ['help', 'ordr'], ['help', 'order', 'crate'], ['--db', '/x', 'refund', '--help'],
      ['--operator', 'order', '--help'], ['balance', 'adjust', '--help'], ['sign', 'verify', '--help'], ['order', 'list', '--colour'],
      ['--json', 'order', 'create'], ['completion', 'bash'],
    ];
    for (const argv of lines) {
      const [lazy, whole] = [await answer(argv, false), await answer(argv, true)];
      expect({ argv, ...lazy }).toEqual({ argv, ...whole });
      expect(lazy.out + lazy.err).not.toBe('');
    }
  });
});
