/**
 * The chains and tokens a ledger holds itself, layered over the built-ins and the chains config
 * file (src/chains/registry.ts). Written by `serve --dev` for its local chain; read by every
 * command that builds the registry on this ledger.
 */
import { eq } from 'drizzle-orm';
import type { ChainEntry, RegistryConfig, TokenEntry } from '../chains/registry.js';
import { audit, type Q } from './ledger.js';
import { registryChains, registryTokens } from './schema.js';

/** The ledger's entries in the chains config file's shape, or undefined when it holds none. */
export function readLedgerRegistry(q: Q): RegistryConfig | undefined {
  const chains = q.select({ entry: registryChains.entry }).from(registryChains).orderBy(registryChains.chainId).all();
  const tokens = q.select({ entry: registryTokens.entry }).from(registryTokens).orderBy(registryTokens.chainId, registryTokens.addressKey).all();
  if (chains.length === 0 && tokens.length === 0) return undefined;
  return {
    chains: chains.map((r) => JSON.parse(r.entry) as ChainEntry),
    tokens: tokens.map((r) => JSON.parse(r.entry) as TokenEntry),
  };
}

export interface RegistryWrite {
  now: number;
  actor: string;
}

/**
 * Adds or replaces the ledger's entry for a chain. The caller checks the entry first by building
 * a registry with it (createRegistry), so a bad entry never reaches the ledger.
 */
export function saveChainEntry(q: Q, entry: ChainEntry, w: RegistryWrite): void {
  const chainId = String(entry.chainId);
  const json = JSON.stringify({ ...entry, chainId });
  const before = q.select({ entry: registryChains.entry }).from(registryChains).where(eq(registryChains.chainId, chainId)).get();
  if (before?.entry === json) return;
  q.insert(registryChains)
    .values({ chainId, entry: json, updatedAt: w.now })
    .onConflictDoUpdate({ target: registryChains.chainId, set: { entry: json, updatedAt: w.now } })
    .run();
  audit(q, {
    at: w.now, actor: w.actor, action: before ? 'registry.chain.updated' : 'registry.chain.added', merchantId: null,
    subjectType: 'chain', subjectId: chainId, detail: JSON.parse(json) as Record<string, unknown>,
  });
}

/** Replaces the ledger's tokens of a chain with `tokens` (one deployment of the test token). */
export function replaceChainTokens(q: Q, chainId: string, tokens: TokenEntry[], w: RegistryWrite): void {
  const rows = tokens.map((t) => {
    const json = JSON.stringify({ ...t, chainId });
    return { chainId, addressKey: t.address.startsWith('0x') ? t.address.toLowerCase() : t.address, entry: json, updatedAt: w.now };
  });
  const before = q.select({ entry: registryTokens.entry }).from(registryTokens).where(eq(registryTokens.chainId, chainId)).all();
  const same = before.length === rows.length && rows.every((r) => before.some((b) => b.entry === r.entry));
  if (same) return;
  q.delete(registryTokens).where(eq(registryTokens.chainId, chainId)).run();
  if (rows.length > 0) q.insert(registryTokens).values(rows).run();
  audit(q, {
    at: w.now, actor: w.actor, action: 'registry.tokens.replaced', merchantId: null,
    subjectType: 'chain', subjectId: chainId, detail: { tokens: tokens.map((t) => `${t.symbol} ${t.address} (${t.decimals} decimals)`).join(', ') },
  });
}

/**
 * Records chains and their tokens in one go: each chain's entry, and its tokens replacing the
 * ones recorded for it before (one deployment of the test token replaces the last).
 */
export function saveRegistryEntries(q: Q, entries: { chains: ChainEntry[]; tokens: TokenEntry[] }, w: RegistryWrite): void {
  for (const c of entries.chains) {
    const chainId = String(c.chainId);
    saveChainEntry(q, c, w);
    replaceChainTokens(q, chainId, entries.tokens.filter((t) => String(t.chainId) === chainId), w);
  }
}
