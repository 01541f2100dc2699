import { asc, desc, eq, sql } from 'drizzle-orm';
import { formatDuration, parseDuration } from '../core/duration.js';
import { conflict, invalid, notFound } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { newSecret } from './ids.js';
import { audit, type Q } from './ledger.js';
import { merchants } from './schema.js';
import type { StoreCtx } from './store-context.js';

export type MerchantRow = typeof merchants.$inferSelect;

export interface MerchantView {
  mchId: string;
  name: string;
  evmXpub: string | null;
  tronXpub: string | null;
  orderLifetime: string;
  rateLimit: number;
  asset: string;
  addressesIssued: { EVM: number; TRON: number };
  createdAt: number;
  secretRotatedAt: number | null;
}

export interface NewMerchant {
  name: string;
  evmXpub?: string;
  tronXpub?: string;
  generateWallet?: boolean;
  orderLifetime?: string;
  rateLimit?: number;
}

/** The merchant named by mchId, or the ledger's only merchant when none is named (decisions §1). */
export function findMerchant(s: StoreCtx, q: Q, mchId: string | undefined): MerchantRow {
  if (mchId) {
    const m = s.stmts().merchantById.get({ id: mchId });
    if (!m) {
      // A merchant id in another case (m100001): named, as balance names a uid in another case.
      const near = q.select({ id: merchants.id }).from(merchants).where(sql`upper(${merchants.id}) = upper(${mchId})`).get();
      throw notFound(`merchant ${mchId} not found${near ? ` (did you mean ${near.id}?)` : ''}`);
    }
    return m;
  }
  const some = q.select().from(merchants).limit(2).all();
  if (some.length === 1) return some[0]!;
  if (some.length === 0) throw invalid('the ledger holds no merchant yet: add one with `cryptopay merchant add --name NAME --generate-wallet`');
  throw invalid('mchId is required: the ledger holds more than one merchant');
}

/** The secret and create-order limit (per minute, 0 = none) of a signed request's merchant, in one lookup. */
export function merchantAuth(s: StoreCtx, mchId: string): { secret: string; rateLimit: number } | undefined {
  const m = s.stmts().merchantAuth.get({ id: mchId });
  return m && { secret: m.secret, rateLimit: m.rateLimit };
}

/**
 * The wallets of the `limit` merchants that gave out the most addresses, each with the next
 * index it will give out: serve primes its address pool with these.
 */
export function walletCursors(s: StoreCtx, limit: number): { chain: ChainType; xpub: string; next: number }[] {
  const out: { chain: ChainType; xpub: string; next: number }[] = [];
  const busiest = s.db.select().from(merchants).orderBy(desc(sql`${merchants.evmNextIndex} + ${merchants.tronNextIndex}`)).limit(limit).all();
  for (const m of busiest) {
    if (m.evmXpub) out.push({ chain: 'EVM', xpub: m.evmXpub, next: m.evmNextIndex });
    if (m.tronXpub) out.push({ chain: 'TRON', xpub: m.tronXpub, next: m.tronNextIndex });
  }
  return out;
}

export function countMerchants(s: StoreCtx): number {
  return Number(s.db.select({ n: sql<bigint>`count(*)` }).from(merchants).get()?.n ?? 0);
}

/**
 * Why a merchant's wallet options are refused, or undefined: judged by their form alone (both
 * kinds or none, an xpub's checksum, depth and kind), so `merchant add` asks it before it opens
 * (and creates) a ledger, and addMerchant again for every other caller.
 */
export async function walletRefusal(input: Pick<NewMerchant, 'generateWallet' | 'evmXpub' | 'tronXpub'>): Promise<string | undefined> {
  if (input.generateWallet && (input.evmXpub || input.tronXpub)) return 'give either --generate-wallet or xpubs, not both';
  if (!input.generateWallet && !input.evmXpub && !input.tronXpub) {
    return 'a merchant needs a wallet to receive payments: give --evm-xpub and/or --tron-xpub, or --generate-wallet';
  }
  const { parseAccountXpub } = await import('../chains/derive.js');
  for (const [xpub, field] of [[input.evmXpub, 'evm-xpub'], [input.tronXpub, 'tron-xpub']] as const) {
    if (!xpub) continue;
    try {
      parseAccountXpub(xpub, field);
    } catch (e) {
      return (e as Error).message;
    }
  }
  return undefined;
}

/**
 * The public test wallet's keys are the public test wallet, whatever their xpub's string: stored
 * as its own xpubs (PUBLIC_TEST_XPUBS), so the merchant is told apart as holding test money
 * everywhere (its page, its payouts). The public account of one chain type as the other's wallet
 * is refused: its keys are public, and it would not be told apart.
 */
async function publicWalletAsSuch(evmXpub: string | null, tronXpub: string | null, walletKeyOf: (xpub: string) => string): Promise<{ evmXpub: string | null; tronXpub: string | null }> {
  const [{ PUBLIC_TEST_XPUBS }, { ACCOUNT_PATHS }] = await Promise.all([import('../chains/sandbox/public-wallet.js'), import('../chains/derive.js')]);
  const publicKey = { EVM: walletKeyOf(PUBLIC_TEST_XPUBS.EVM), TRON: walletKeyOf(PUBLIC_TEST_XPUBS.TRON) };
  const out = { evmXpub, tronXpub };
  for (const [type, other] of [['EVM', 'TRON'], ['TRON', 'EVM']] as const) {
    const field = type === 'EVM' ? 'evmXpub' : 'tronXpub';
    const xpub = out[field];
    if (!xpub) continue;
    const key = walletKeyOf(xpub);
    if (key === publicKey[type]) out[field] = PUBLIC_TEST_XPUBS[type];
    else if (key === publicKey[other]) {
      throw invalid(`${type.toLowerCase()}-xpub is the public test wallet's ${other} account (${ACCOUNT_PATHS[other]} of the anvil test mnemonic): its keys are public, and as the ${type} wallet its money would not be told apart as test money; give a wallet of your own`);
    }
  }
  return out;
}

export async function addMerchant(s: StoreCtx, input: NewMerchant): Promise<{ merchant: MerchantView; secret: string; mnemonic?: string }> {
  const name = input.name?.trim();
  if (!name || name.length > 100) throw invalid('name is required (1 to 100 characters)');
  const refused = await walletRefusal(input);
  if (refused) throw invalid(refused);
  // The xpubs passed walletRefusal as given.
  let evmXpub = input.evmXpub || null;
  let tronXpub = input.tronXpub || null;
  let mnemonic: string | undefined;
  if (input.generateWallet) {
    const w = (await import('../chains/derive.js')).generateWallet();
    ({ mnemonic, evmXpub, tronXpub } = w);
  }
  const { walletKeyOf } = await import('../chains/deriver.js');
  ({ evmXpub, tronXpub } = await publicWalletAsSuch(evmXpub, tronXpub, walletKeyOf));
  // What no other merchant's wallet may be (compared by key, not by string).
  const keys = new Set([evmXpub, tronXpub].flatMap((x) => (x ? [walletKeyOf(x)] : [])));
  const lifetime = parseDuration(input.orderLifetime ?? '30m', 'order-lifetime');
  const rateLimit = input.rateLimit ?? 60;
  if (!Number.isInteger(rateLimit) || rateLimit < 0 || rateLimit > 1_000_000) {
    throw invalid('rate-limit must be a whole number of requests per minute (0 means no limit)');
  }
  const secret = newSecret();
  const now = s.now();
  const row = await s.write((tx) => {
    // By key, not by string (walletKeyOf): one read of every merchant's wallet, as merchants are
    // added rarely and are few.
    for (const other of tx.select({ id: merchants.id, evm: merchants.evmXpub, tron: merchants.tronXpub }).from(merchants).all()) {
      if ([other.evm, other.tron].some((x) => x !== null && keys.has(walletKeyOf(x)))) {
        throw conflict(`that xpub is already the wallet of merchant ${other.id}: two merchants must never share addresses`);
      }
    }
    const seq = Number(tx.select({ n: sql<bigint>`coalesce(max(${merchants.seq}), 100000)` }).from(merchants).get()!.n) + 1;
    const id = `M${seq}`;
    const created = tx
      .insert(merchants)
      .values({ id, seq, name, secret, evmXpub, tronXpub, orderLifetimeMs: lifetime, rateLimit, createdAt: now })
      .returning()
      .get();
    audit(tx, {
      at: now, actor: s.caller.actor, action: 'merchant.created', merchantId: id, subjectType: 'merchant', subjectId: id,
      detail: { name, evmXpub: !!evmXpub, tronXpub: !!tronXpub, generatedWallet: !!input.generateWallet, orderLifetime: formatDuration(lifetime), rateLimit },
    });
    return created;
  });
  return { merchant: merchantView(row), secret, ...(mnemonic ? { mnemonic } : {}) };
}

export function listMerchants(s: StoreCtx): MerchantView[] {
  return s.db.select().from(merchants).orderBy(asc(merchants.seq)).all().map(merchantView);
}

export async function rotateSecret(s: StoreCtx, mchId?: string): Promise<{ mchId: string; secret: string }> {
  const secret = newSecret();
  const now = s.now();
  const id = await s.write((tx) => {
    const m = findMerchant(s, tx, mchId);
    tx.update(merchants).set({ secret, secretRotatedAt: now }).where(eq(merchants.id, m.id)).run();
    audit(tx, { at: now, actor: s.caller.actor, action: 'merchant.secret_rotated', merchantId: m.id, subjectType: 'merchant', subjectId: m.id, detail: {} });
    return m.id;
  });
  return { mchId: id, secret };
}

export function merchantView(m: MerchantRow): MerchantView {
  return {
    mchId: m.id,
    name: m.name,
    evmXpub: m.evmXpub,
    tronXpub: m.tronXpub,
    orderLifetime: formatDuration(m.orderLifetimeMs),
    rateLimit: m.rateLimit,
    asset: m.asset,
    addressesIssued: { EVM: m.evmNextIndex, TRON: m.tronNextIndex },
    createdAt: m.createdAt,
    secretRotatedAt: m.secretRotatedAt,
  };
}
