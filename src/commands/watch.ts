import type { Context } from '../context.js';
import { usage } from '../core/errors.js';

/** `cryptopay watch [--chain ID]`: the watcher in the foreground, for deployments without serve. */
export async function run(ctx: Context, opts: { chain?: string[] }): Promise<void> {
  const service = await ctx.local('watch');
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);
  const bar = ctx.io.isTTY ? progressBar(ctx) : undefined;
  const { startWatching } = await import('../chains/watch/start.js');
  const w = await startWatching(service, {
    only: opts.chain,
    now: ctx.now,
    log: (line) => {
      bar?.clear();
      err(line);
    },
    onTick: bar && ((chainId, r) => bar.update(chainId, r.nextBlock, r.head)),
  });
  if (!w) throw usage('no chain in the registry has an rpcUrl: add one to the chains config (docs/operations.md) to watch it');
  const signal = await ctx.stopSignal();
  bar?.clear();
  err(`${signal}: stopping the watchers`);
  await w.stop();
  err('stopped; leases given up');
}

/** One line per terminal, redrawn while a chain catches up; gone once every chain is at its head. */
function progressBar(ctx: Context) {
  const state = new Map<string, { first: number; next: number; head: number }>();
  let drawn = false;
  return {
    update(chainId: string, next: number | undefined, head: number | undefined) {
      if (next === undefined || head === undefined) return;
      const s = state.get(chainId) ?? { first: next, next, head };
      s.next = next;
      s.head = head;
      state.set(chainId, s);
      const behind = [...state].filter(([, v]) => v.next <= v.head);
      if (behind.length === 0) return this.clear();
      const text = behind.map(([id, v]) => {
        const total = Math.max(1, v.head + 1 - v.first);
        const done = Math.min(total, v.next - v.first);
        const width = 20;
        const filled = Math.round((done / total) * width);
        return `chain ${id} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] block ${v.next - 1} of ${v.head}`;
      }).join('  ');
      ctx.io.stderr.write(`\r\x1b[2K${text}`);
      drawn = true;
    },
    clear() {
      if (drawn) ctx.io.stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
