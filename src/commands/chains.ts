import type { Context } from '../context.js';
import { need } from './common.js';
import { printJson, printTable, success, warn } from './output.js';

export async function run(ctx: Context, opts: { ackReorg?: string; reason?: string } = {}): Promise<void> {
  if (opts.ackReorg !== undefined) return acknowledge(ctx, opts.ackReorg, opts.reason);
  const service = await ctx.local('chains');
  const registry = await service.registry();
  const [{ allCursors }, { redactUrl }] = await Promise.all([import('../store/chain-state.js'), import('../chains/watch/rpc.js')]);
  const cursors = new Map(allCursors(service.ledger.db).map((c) => [c.chainId, c]));
  const now = ctx.now();
  const data = registry.chains().map((c) => {
    const cur = cursors.get(c.chainId);
    const scannedTo = cur && cur.nextBlock >= 0 ? cur.nextBlock - 1 : null;
    const leased = cur?.leaseHolder && (cur.leaseExpiresAt ?? 0) > now ? cur.leaseHolder : null;
    // The rpcUrl often holds the node provider's key (a path segment, a password, a query): only
    // its redacted form is shown (an attacker review found it whole under --json).
    const { rpcUrl: _key, ...chain } = c;
    return {
      ...chain,
      tokens: registry.tokens().filter((t) => t.chainId === c.chainId),
      watch: {
        rpc: c.rpcUrl ? redactUrl(c.rpcUrl) : null,
        head: cur?.head ?? null,
        scannedTo,
        lag: cur?.head != null && scannedTo !== null ? Math.max(0, cur.head - scannedTo) : null,
        // Every block stamped up to this (ms) is read: order.expired waits for it (docs/decisions.md).
        readThrough: cur?.seenThrough ?? null,
        leaseHolder: leased,
        leaseExpiresAt: leased ? cur!.leaseExpiresAt : null,
        lastError: cur?.lastError ?? null,
        lastErrorAt: cur?.lastErrorAt ?? null,
        deepReorg: cur?.deepReorg ?? null,
      },
    };
  });
  // A deep reorg is never silent: every look at the chains repeats it until an operator
  // acknowledges it (--ack-reorg), after checking the payments it names (audit chain.deep_reorg).
  for (const c of data) {
    if (c.watch.deepReorg) await warn(ctx, `chain ${c.chainId}: DEEP REORG ${c.watch.deepReorg}\n  once checked: cryptopay chains --ack-reorg ${c.chainId} --reason <text>`);
  }
  if (ctx.globals.json) return printJson(ctx, data);
  await printTable(
    ctx,
    ['chainId', 'type', { name: 'name', text: true, priority: 9 }, { name: 'confirmations', priority: 5 }, { name: 'rpc', text: true }, 'head', 'scanned', { name: 'lag', priority: 8 }, { name: 'read to', priority: 6 }, { name: 'lease', text: true }, { name: 'last error', text: true, priority: 7 }, { name: 'deep reorg', priority: 10 }, { name: 'tokens', text: true }],
    data.map((c) => [
      c.chainId, c.chainType, c.development ? `${c.name} [development: test money only]` : c.name, c.confirmations, c.watch.rpc ?? 'no', c.watch.head, c.watch.scannedTo, c.watch.lag,
      c.watch.readThrough === null ? null : `${new Date(c.watch.readThrough).toISOString().slice(0, 19).replace('T', ' ')} UTC`, c.watch.leaseHolder,
      c.watch.lastError, c.watch.deepReorg ? `YES ${c.watch.deepReorg.split(' ')[0]}` : null, c.tokens.map((t) => `${t.symbol} ${t.address}`).join(', '),
    ]),
  );
}

/** `chains --ack-reorg <chainId> --reason R`: clears a deep reorg's warning, with the reason in the audit log. */
async function acknowledge(ctx: Context, chainId: string, reasonOpt: string | undefined): Promise<void> {
  const reason = await need(ctx, reasonOpt, 'reason', 'Reason (kept in the audit log)');
  const service = await ctx.local('chains --ack-reorg');
  const report = await service.acknowledgeDeepReorg(chainId, reason);
  if (ctx.globals.json) return printJson(ctx, { chainId, acknowledged: report, reason });
  await success(ctx, `chain ${chainId}: deep reorg acknowledged (${reason}); the payments it named stay credited`);
}
