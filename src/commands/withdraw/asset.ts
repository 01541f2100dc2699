import type { ChainEntry, Registry, TokenEntry } from '../../chains/registry.js';
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
 * knows has its type and tokens here too, as it has locally.
 *
 * `fromService` is false when the list is not the service's: a service from before the endpoint
 * (404), or a list whose entry for the chain asked this command cannot take (a token in an
 * asset it does not know). Only the built-in chains are known then, and the service still
 * decides; `unlisted` says why, for the refusal that asks for --chain-type and --token. An entry
 * this command cannot take is left out, not a reason to refuse every other chain (a review).
 */
export async function serviceRegistry(ctx: Context, what: string, chainId?: string): Promise<{ registry: Registry; fromService: boolean; unlisted: string | undefined }> {
  if (!ctx.isRemote()) return { registry: await (await ctx.local(what)).registry(), fromService: true, unlisted: undefined };
  const { createRegistry, isBuiltinChain } = await import('../../chains/registry.js');
  const builtIn = createRegistry();
  if (chainId !== undefined && isBuiltinChain(chainId)) return { registry: builtIn, fromService: false, unlisted: undefined };
  let chains;
  try {
    chains = await (await ctx.service()).knownChains();
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found') {
      return { registry: builtIn, fromService: false, unlisted: `The service did not list its chains: ${(e.cause as Error | undefined)?.message ?? e.message}` };
    }
    throw e;
  }
  // Built-in chains keep their definition here; each of the service's own chains, with its
  // tokens, is added as a configuration would add it, and checked the same way, one at a time.
  const entries: { chains: ChainEntry[]; tokens: TokenEntry[] } = { chains: [], tokens: [] };
  const skipped: string[] = [];
  for (const c of chains) {
    const tokens = c.tokens.map((t) => ({ chainId: c.chainId, ...t })).filter((t) => !builtIn.findToken(t.chainId, t.address));
    const chain = isBuiltinChain(c.chainId) ? [] : [{ chainId: c.chainId, chainType: c.chainType, name: c.name, confirmations: c.confirmations, development: c.development }];
    try {
      createRegistry(undefined, { chains: [...entries.chains, ...chain], tokens: [...entries.tokens, ...tokens] });
    } catch {
      skipped.push(c.chainId);
      continue;
    }
    entries.chains.push(...chain);
    entries.tokens.push(...tokens);
  }
  const registry = createRegistry(undefined, entries);
  if (chainId !== undefined && skipped.includes(chainId)) {
    return { registry: builtIn, fromService: false, unlisted: `The service lists chain ${chainId} with a token this command cannot take (a newer release's asset?)` };
  }
  return { registry, fromService: true, unlisted: undefined };
}

/**
 * A withdrawal's amount as a person reads it, with its token's asset ("30 USDT"): a bare "30"
 * next to a contract address left support to work out what was paid out. Bare where the token is
 * not one this command knows (a token a remote alone knows). --json keeps the interface's record.
 */
/** What a withdrawal's amount is in: its own `asset`, else its token's in the registry. */
export function assetOf(registry: Registry, w: Pick<Withdrawal, 'chainId' | 'token'> & { asset?: string }): string | undefined {
  return w.asset ?? registry.findToken(w.chainId, w.token)?.asset;
}

export function amountIn(registry: Registry, w: Pick<Withdrawal, 'amount' | 'chainId' | 'token'> & { asset?: string }): string {
  const asset = assetOf(registry, w);
  return asset ? `${w.amount} ${asset}` : w.amount;
}
