import { z } from 'zod';
import { ASSETS } from '../core/assets.js';
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { EVM_HEX, validateAddress } from './address.js';

export interface ChainInfo {
  /** Decimal string, so 56 and "56" name the same chain. */
  chainId: string;
  chainType: ChainType;
  name: string;
  rpcUrl?: string;
  confirmations: number;
  /** How often the watcher asks the node for new blocks (default 2 s). */
  pollIntervalMs?: number;
  /** The first block the watcher scans (default: the head when first watched). */
  startBlock?: number;
  /** A local chain whose tokens are worthless (the sandbox of `serve --dev`). */
  development?: boolean;
}

export interface TokenInfo {
  chainId: string;
  /** EIP-55 on EVM chains, base58check on TRON. */
  address: string;
  symbol: string;
  /** The ledger asset the token's amounts are booked in. */
  asset: string;
  decimals: number;
}

export { ASSETS };

const BUILTIN_CHAINS: readonly ChainInfo[] = [
  { chainId: '1', chainType: 'EVM', name: 'Ethereum', confirmations: 12 },
  { chainId: '56', chainType: 'EVM', name: 'BNB Smart Chain', confirmations: 15 },
  { chainId: '137', chainType: 'EVM', name: 'Polygon', confirmations: 128 },
  { chainId: '728126428', chainType: 'TRON', name: 'TRON', confirmations: 19 },
];

/** A chain every registry knows, which no configuration may retype. */
export function isBuiltinChain(chainId: string): boolean {
  return BUILTIN_CHAINS.some((c) => c.chainId === chainId);
}

const BUILTIN_TOKENS: readonly TokenInfo[] = [
  { chainId: '1', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', symbol: 'USDT', asset: 'USDT', decimals: 6 },
  { chainId: '56', address: '0x55d398326f99059fF775485246999027B3197955', symbol: 'USDT', asset: 'USDT', decimals: 18 },
  { chainId: '137', address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', symbol: 'USDT', asset: 'USDT', decimals: 6 },
  { chainId: '728126428', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', symbol: 'USDT', asset: 'USDT', decimals: 6 },
];

/** For a chain added by config without a confirmations count: Ethereum's and TRON's built-in depths. */
const DEFAULT_CONFIRMATIONS: Record<ChainType, number> = { EVM: 12, TRON: 19 };

const chainIdSchema = z.union([z.number(), z.string()]);
const chainEntry = z.strictObject({
  chainId: chainIdSchema,
  // Optional because an entry for a built-in chain only overrides rpcUrl and confirmations.
  chainType: z.enum(['EVM', 'TRON']).optional(),
  name: z.string().trim().min(1).max(64).optional(),
  rpcUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  confirmations: z.int().min(1).max(100_000).optional(),
  // Milliseconds, or a duration such as "500ms", "2s", "1m".
  pollInterval: z.union([z.int().min(50).max(3_600_000), z.string().regex(/^\d{1,7}(ms|s|m)$/, 'must be milliseconds or a duration such as 500ms, 2s, 1m')]).optional(),
  startBlock: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  development: z.boolean().optional(),
});
const tokenEntry = z.strictObject({
  chainId: chainIdSchema,
  address: z.string(),
  symbol: z.string().regex(/^[A-Za-z0-9.$_-]{1,32}$/, 'must be 1-32 letters, digits or . $ _ -'),
  asset: z.string(),
  decimals: z.int().min(0).max(36),
});
const configSchema = z.strictObject({
  chains: z.array(chainEntry).optional(),
  tokens: z.array(tokenEntry).optional(),
});

export type RegistryConfig = z.input<typeof configSchema>;
export type ChainEntry = z.input<typeof chainEntry>;
export type TokenEntry = z.input<typeof tokenEntry>;

export interface Registry {
  chain(chainId: unknown): ChainInfo;
  token(chainId: unknown, address: unknown): TokenInfo;
  /** The token at `address` on a known chain (EVM in any case), or undefined: asks, never refuses. */
  findToken(chainId: string, address: string): TokenInfo | undefined;
  chains(): ChainInfo[];
  tokens(): TokenInfo[];
}

/** Echoes refused input briefly; JSON so that "" and " 56" stay visible. */
function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.slice(0, 64));
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return v === null ? 'null' : typeof v;
}

export function parseChainId(v: unknown): string {
  const s = typeof v === 'number' || typeof v === 'bigint' ? String(v) : v;
  // Plain decimal only: "056", "5.6", "-1", "1e3" and "" would otherwise alias or mis-parse.
  if (typeof s !== 'string' || !/^[1-9][0-9]{0,15}$/.test(s) || !Number.isSafeInteger(Number(s))) {
    throw new AppError('invalid', `chainId must be a positive decimal integer such as 56, got ${show(v)}`);
  }
  return s;
}

/** EVM addresses are case-insensitive hex; base58 is case-sensitive. */
const tokenKey = (chain: ChainInfo, address: string) =>
  `${chain.chainId}:${chain.chainType === 'EVM' ? address.toLowerCase() : address}`;

/**
 * Built-in chains and tokens, then the chains config file (`config`), then the entries stored in
 * the ledger itself (`ledgerEntries`, written by `serve --dev`): each layer may add chains and
 * tokens and may tune the chains of the layers before it.
 */
export function createRegistry(config?: RegistryConfig, ledgerEntries?: RegistryConfig): Registry {
  const chainMap = new Map(BUILTIN_CHAINS.map((c) => [c.chainId, { ...c }]));
  const tokenMap = new Map<string, TokenInfo>();
  for (const t of BUILTIN_TOKENS) tokenMap.set(tokenKey(chainMap.get(t.chainId)!, t.address), { ...t });

  if (config !== undefined) applyConfig(config, chainMap, tokenMap, 'registry config');
  if (ledgerEntries !== undefined) applyConfig(ledgerEntries, chainMap, tokenMap, 'ledger registry');

  const knownChains = [...chainMap.keys()].sort((a, b) => Number(a) - Number(b));
  const chainList = knownChains.map((id) => Object.freeze(chainMap.get(id)!));
  const tokenList = [...tokenMap.values()].map((t) => Object.freeze(t));

  const chain = (chainId: unknown): ChainInfo => {
    const id = parseChainId(chainId);
    const found = chainMap.get(id);
    if (!found) throw new AppError('invalid', `chainId ${id} is not a chain this service knows (known: ${knownChains.join(', ')})`);
    return found;
  };

  return {
    chain,
    token(chainId, address) {
      const c = chain(chainId);
      // Looked up in any case, but a mixed-case spelling must be EIP-55, as for `to`: a broken
      // checksum is a mistyped digit's warning, and it was accepted here (an attacker review).
      if (c.chainType === 'EVM' && typeof address === 'string' && EVM_HEX.test(address)) validateAddress('EVM', address, 'token');
      const found = typeof address === 'string' ? tokenMap.get(tokenKey(c, address)) : undefined;
      if (!found) {
        const known = tokenList.filter((t) => t.chainId === c.chainId).map((t) => `${t.symbol} ${t.address}`);
        throw new AppError(
          'invalid',
          `token ${show(address)} is not a token this service knows on chain ${c.chainId} (${c.name}); known: ${known.join(', ') || 'none'}`,
        );
      }
      return found;
    },
    findToken(chainId, address) {
      const c = chainMap.get(chainId);
      return c ? tokenMap.get(tokenKey(c, address)) : undefined;
    },
    chains: () => [...chainList],
    tokens: () => [...tokenList],
  };
}

function applyConfig(config: RegistryConfig, chainMap: Map<string, ChainInfo>, tokenMap: Map<string, TokenInfo>, source: string): void {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
    throw new AppError('invalid', `${source} ${where || '(root)'}: ${issue.message}`);
  }
  const builtin = new Set(BUILTIN_CHAINS.map((c) => c.chainId));
  const seen = new Set<string>();
  const seenTokens = new Set<string>();
  const builtinTokenKeys = new Set(BUILTIN_TOKENS.map((t) => tokenKey(chainMap.get(t.chainId)!, t.address)));

  (parsed.data.chains ?? []).forEach((e, i) => {
    const at = `${source} chains[${i}]`;
    const chainId = entryChainId(e.chainId, at);
    if (seen.has(chainId)) throw new AppError('invalid', `${at}: chain ${chainId} is listed twice`);
    seen.add(chainId);
    const existing = chainMap.get(chainId);
    if (existing && builtin.has(chainId)) {
      if ((e.chainType && e.chainType !== existing.chainType) || (e.name && e.name !== existing.name) || e.development) {
        throw new AppError(
          'invalid',
          `${at}: chain ${chainId} is built in as ${existing.chainType} ${existing.name}; only its rpcUrl and confirmations can be overridden`,
        );
      }
      tune(existing, e, at);
      return;
    }
    if (existing) {
      // Defined by an earlier layer (the file, for a ledger entry): the same chain, tuned.
      if (e.chainType && e.chainType !== existing.chainType) {
        throw new AppError('invalid', `${at}: chain ${chainId} is already known as ${existing.chainType} ${existing.name}, not ${e.chainType}`);
      }
      if (e.name) existing.name = e.name;
      if (e.development !== undefined) existing.development = e.development;
      tune(existing, e, at);
      return;
    }
    if (!e.chainType || !e.name) throw new AppError('invalid', `${at}: a new chain needs chainType ("EVM" or "TRON") and name`);
    const info: ChainInfo = { chainId, chainType: e.chainType, name: e.name, confirmations: e.confirmations ?? DEFAULT_CONFIRMATIONS[e.chainType] };
    tune(info, e, at);
    if (e.development) info.development = true;
    chainMap.set(chainId, info);
  });

  (parsed.data.tokens ?? []).forEach((e, i) => {
    const at = `${source} tokens[${i}]`;
    const chainId = entryChainId(e.chainId, at);
    const chain = chainMap.get(chainId);
    if (!chain) throw new AppError('invalid', `${at}: chain ${chainId} is neither built in nor listed under chains`);
    if (!Object.hasOwn(ASSETS, e.asset)) {
      throw new AppError('invalid', `${at}: asset ${show(e.asset)} is not a ledger asset (known: ${Object.keys(ASSETS).join(', ')})`);
    }
    const address = validateAddress(chain.chainType, e.address, `${at}.address`);
    const key = tokenKey(chain, address);
    const known = tokenMap.get(key);
    if (known) {
      // The same token listed by the file and by the ledger is one token; a second meaning of it,
      // a built-in listed again or a token listed twice in one layer is refused.
      const repeatsEarlierLayer =
        !builtinTokenKeys.has(key) && !seenTokens.has(key) && known.symbol === e.symbol && known.asset === e.asset && known.decimals === e.decimals;
      if (!repeatsEarlierLayer) throw new AppError('invalid', `${at}: token ${address} on chain ${chainId} is already known`);
      seenTokens.add(key);
      return;
    }
    seenTokens.add(key);
    tokenMap.set(key, { chainId, address, symbol: e.symbol, asset: e.asset, decimals: e.decimals });
  });
}

/** What a later layer may change of a chain the built-ins or an earlier layer defined. */
function tune(chain: ChainInfo, e: z.output<typeof chainEntry>, at: string): void {
  if (e.rpcUrl !== undefined) chain.rpcUrl = e.rpcUrl;
  if (e.confirmations !== undefined) chain.confirmations = e.confirmations;
  if (e.pollInterval !== undefined) {
    const ms = typeof e.pollInterval === 'number' ? e.pollInterval : durationMs(e.pollInterval);
    if (ms < 50 || ms > 3_600_000) throw new AppError('invalid', `${at}.pollInterval: must be between 50ms and 1h`);
    chain.pollIntervalMs = ms;
  }
  if (e.startBlock !== undefined) chain.startBlock = e.startBlock;
}

function durationMs(s: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(s)!;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
}

function entryChainId(v: unknown, at: string): string {
  try {
    return parseChainId(v);
  } catch (err) {
    throw new AppError('invalid', `${at}: ${(err as Error).message}`);
  }
}

/** Amounts may carry no more places than both the ledger asset and the token can represent. */
export function maxDecimals(token: TokenInfo): number {
  const asset = ASSETS[token.asset];
  if (!asset) throw new AppError('internal', `token ${token.address} maps to unknown asset ${token.asset}`);
  return Math.min(asset.decimals, token.decimals);
}
