import type { Registry } from '../../chains/registry.js';
import type { Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
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
 * The chains and tokens the service behind the command knows, for `withdraw apply`: the ledger's
 * registry locally; on a remote, the built-in chains when `chainId` is one of them (nothing to
 * ask), else the service's own list (POST /api/v1/chains), so that a chain only the service
 * knows has its type and tokens here too, as it has locally. `fromService` is false when that
 * list could not be had (a service from before it was added answers 404): then only the
 * built-in chains are known here, and the service still decides.
 */
export async function serviceRegistry(ctx: Context, what: string, chainId?: string): Promise<{ registry: Registry; fromService: boolean }> {
  if (!ctx.isRemote()) return { registry: await (await ctx.local(what)).registry(), fromService: true };
  const { createRegistry, isBuiltinChain } = await import('../../chains/registry.js');
  if (chainId !== undefined && isBuiltinChain(chainId)) return { registry: createRegistry(), fromService: false };
  let chains;
  try {
    chains = await (await ctx.service()).knownChains();
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found') return { registry: createRegistry(), fromService: false };
    throw e;
  }
  // Built-in chains keep their definition here; the service's own chains and tokens are added
  // as a configuration would add them (and checked the same way).
  const builtIn = createRegistry();
  const entries = {
    chains: chains.filter((c) => !isBuiltinChain(c.chainId)).map((c) => ({ chainId: c.chainId, chainType: c.chainType, name: c.name, confirmations: c.confirmations, development: c.development })),
    tokens: chains.flatMap((c) => c.tokens.map((t) => ({ chainId: c.chainId, ...t }))).filter((t) => !builtIn.findToken(t.chainId, t.address)),
  };
  try {
    return { registry: createRegistry(undefined, entries), fromService: true };
  } catch (e) {
    throw new AppError('unavailable', `the service's list of chains cannot be used here: ${(e as Error).message}`);
  }
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
