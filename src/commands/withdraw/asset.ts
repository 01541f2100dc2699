import type { Registry } from '../../chains/registry.js';
import type { Context } from '../../context.js';
import type { Withdrawal } from '../../core/types.js';

/**
 * The chains and tokens a withdrawal command can name: the ledger's registry locally; on a
 * remote, only the built-in chains, which no configuration may retype (a chain or token the
 * remote alone knows is not known here).
 */
export async function commandRegistry(ctx: Context, what: string): Promise<Registry> {
  if (!ctx.isRemote()) return (await ctx.local(what)).registry();
  const { createRegistry } = await import('../../chains/registry.js');
  return createRegistry();
}

/**
 * A withdrawal's amount as a person reads it, with its token's asset ("30 USDT"): a bare "30"
 * next to a contract address left support to work out what was paid out. Bare where the token is
 * not one this command knows (a token a remote alone knows). --json keeps the interface's record.
 */
export function amountIn(registry: Registry, w: Pick<Withdrawal, 'amount' | 'chainId' | 'token'> & { asset?: string }): string {
  const asset = w.asset ?? registry.findToken(w.chainId, w.token)?.asset;
  return asset ? `${w.amount} ${asset}` : w.amount;
}
