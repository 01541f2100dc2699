import type { Registry } from '../chains/registry.js';
import { ASSETS } from '../core/assets.js';
import { isAppError, notFound } from '../core/errors.js';
import { formatAmount } from '../core/money.js';
import { LATE_WINDOW_MS } from '../core/state.js';
import type { ChainType, OrderDetail, OrderStatus, PayPageOrder } from '../core/types.js';

/** What the payment page reads of the ledger: public reads of LocalPaymentService. */
export interface PayPageSource {
  getOrder(id: string): Promise<OrderDetail>;
  /** What the page shows of an order and its merchant's name, in one read (a local ledger). */
  payPageOrder?(id: string): PayPageOrder;
  /** Payments the chain watcher has seen for the order, with their confirmations (none without a watcher). */
  paymentsOnChain?(id: string): Promise<{ amount: string; status: string; confirmations: number; required: number; blockTime: number | null }[]>;
  registry(): Promise<Registry>;
  /** The registry if it is built already (a local ledger), so a page can be read without a promise. */
  registryNow?(): Registry | undefined;
  showMerchant(mchId: string): Promise<{ name: string }>;
}

/** What the page polls: the order's status and how much of it has arrived. */
export interface PayState {
  status: OrderStatus;
  amount: string;
  paidAmount: string;
  dueAmount: string;
  asset: string;
  expiredAt: number;
  /**
   * What the chain shows that the ledger does not count yet: the sum of the payments seen and the
   * fewest confirmations among them, so a payer who has paid is told to wait, not to pay again.
   */
  confirming: { amount: string; confirmations: number; required: number } | null;
}

export interface PayNetwork {
  chainId: string;
  name: string;
  tokens: { symbol: string; address: string }[];
}

export interface PayMethod {
  chainType: ChainType;
  address: string;
  networks: PayNetwork[];
}

export interface PayPageModel {
  id: string;
  oid: string;
  memo: string | null;
  merchantName: string;
  logo: string | null;
  redirectUrl: string | null;
  state: PayState;
  methods: PayMethod[];
  /**
   * The merchant's wallet is the public test wallet: the page says test money only, and
   * `methods` hold development chains only (none when the server knows none).
   */
  testOnly: boolean;
  /**
   * One of the networks offered is read by the service (its chain has an rpcUrl): a payment is
   * seen there without anyone's help. Else the order is paid once the shop records the payment
   * (order mark-paid), and the page must not promise more (a new-user trial, F9).
   */
  watched: boolean;
}

/** Ids are at most 64 characters (decisions §8): a longer one cannot name an order. */
const MAX_ID = 64;

/** Base units of an amount the ledger wrote itself (canonical, possibly "0"). */
function unitsOf(amount: string, decimals: number): bigint {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

async function order(source: PayPageSource, id: string): Promise<OrderDetail> {
  if (id.length > MAX_ID) throw notFound('Order not found');
  return source.getOrder(id);
}

type Seen = Awaited<ReturnType<NonNullable<PayPageSource['paymentsOnChain']>>>;

/** What the state is made of: an OrderDetail or a PayPageOrder. */
type StateSource = Pick<OrderDetail, 'id' | 'status' | 'amount' | 'paidAmount' | 'asset' | 'expiredAt'>;

export function stateOf(o: StateSource, seen: Seen = []): PayState {
  const decimals = ASSETS[o.asset]?.decimals ?? 0;
  const due = unitsOf(o.amount, decimals) - unitsOf(o.paidAmount, decimals);
  const waiting = seen.filter((p) => p.status === 'seen' && (o.status === 'PENDING_PAY' || (o.status === 'EXPIRED' && willCredit(p, o.expiredAt))));
  const confirming = waiting.length === 0 ? null : {
    amount: formatAmount(waiting.reduce((sum, p) => sum + unitsOf(p.amount, decimals), 0n), decimals),
    confirmations: Math.min(...waiting.map((p) => p.confirmations)),
    required: Math.max(...waiting.map((p) => p.required)),
  };
  return {
    status: o.status,
    amount: o.amount,
    paidAmount: o.paidAmount,
    dueAmount: formatAmount(due > 0n ? due : 0n, decimals),
    asset: o.asset,
    expiredAt: o.expiredAt,
    confirming,
  };
}

/**
 * Whether a payment seen on chain may be waiting for its confirmations: while the order can be
 * paid, and once it expired (a payment made before the expiry still pays it, not late; one after
 * it, late: docs/decisions.md, "order.expired waits for the chain").
 */
const mayBeConfirming = (status: OrderStatus) => status === 'PENDING_PAY' || status === 'EXPIRED';

/**
 * Whether a payment seen on an expired order will pay it once confirmed: one that came more than
 * 24 h after the expiry is held for an operator instead (decisions §6b), and one on a chain no
 * longer watched (its depth unknown, `required` 0) is never confirmed here. For those the page
 * keeps saying the request expired, with whom to contact.
 */
function willCredit(p: { required: number; blockTime: number | null }, expiredAt: number): boolean {
  return p.required > 0 && (p.blockTime === null || p.blockTime <= expiredAt + LATE_WINDOW_MS);
}

async function seenOf(source: PayPageSource, o: StateSource): Promise<Seen> {
  return mayBeConfirming(o.status) && source.paymentsOnChain ? source.paymentsOnChain(o.id) : [];
}

export async function loadPayState(source: PayPageSource, id: string): Promise<PayState> {
  const o = await order(source, id);
  return stateOf(o, await seenOf(source, o));
}

type PageOrder = Omit<PayPageOrder, 'merchantName' | 'seenOnChain'> & { merchantName: string };

/** The order and its merchant's name, from a source without payPageOrder (a remote ledger). */
async function pageOrder(source: PayPageSource, id: string): Promise<PageOrder> {
  const o = await order(source, id);
  let merchantName = o.mchId;
  try {
    merchantName = (await source.showMerchant(o.mchId)).name;
  } catch (e) {
    if (!isAppError(e)) throw e;
  }
  // A remote ledger does not say whose wallet a merchant has: the page is its own server's to warn.
  return { ...o, merchantName, testWallet: false };
}

/**
 * The networks an address of a chain type can be paid on, for an asset: every chain of that type
 * with a token of the asset. Kept per registry (a registry is never changed, only replaced).
 */
const networksCache = new WeakMap<Registry, Map<string, PayNetwork[]>>();

function networksOf(registry: Registry, chainType: ChainType, asset: string): PayNetwork[] {
  let byKey = networksCache.get(registry);
  if (!byKey) networksCache.set(registry, (byKey = new Map()));
  const key = `${chainType} ${asset}`;
  let networks = byKey.get(key);
  if (!networks) {
    networks = registry
      .chains()
      .filter((c) => c.chainType === chainType)
      .map((c) => ({
        chainId: c.chainId,
        name: c.name,
        tokens: registry.tokens().filter((t) => t.chainId === c.chainId && t.asset === asset).map((t) => ({ symbol: t.symbol, address: t.address })),
      }))
      .filter((n) => n.tokens.length > 0);
    byKey.set(key, networks);
  }
  return networks;
}

/**
 * Whether a network is offered to a real merchant's payer: never a development chain (its token
 * is anyone's to mint, and the ledger refuses it for such an order); and, of a chain type the
 * service watches (a chain of it has an rpcUrl), only the watched ones, where a payment is seen.
 * A chain type it watches none of is reconciled by hand (order mark-paid): all of its networks
 * are offered, so an order always has a way to be paid (a code review found a TRON-only
 * merchant left with none when only Ethereum was watched).
 */
function offeredForReal(registry: Registry): (chainId: string) => boolean {
  const watched = new Set(registry.chains().filter((c) => !c.development && c.rpcUrl).map((c) => c.chainType));
  return (chainId) => {
    const c = registry.chain(chainId);
    return !c.development && (!watched.has(c.chainType) || !!c.rpcUrl);
  };
}

function modelOf(o: PageOrder, registry: Registry, seen: Seen): PayPageModel {
  const testOnly = o.testWallet;
  const offered = testOnly ? undefined : offeredForReal(registry);
  const methods: PayMethod[] = (['EVM', 'TRON'] as const).flatMap((chainType) => {
    const address = o.addresses[chainType];
    if (!address) return [];
    // Anyone holds the keys of the public test wallet: a real network is never offered for it.
    const all = networksOf(registry, chainType, o.asset);
    const networks = offered ? all.filter((n) => offered(n.chainId)) : all.filter((n) => registry.chain(n.chainId).development);
    // No network to pay on there (none watched, no token of the asset): no address to send to.
    return networks.length === 0 ? [] : [{ chainType, address, networks }];
  });
  const watched = methods.some((m) => m.networks.some((n) => !!registry.chain(n.chainId).rpcUrl));
  return { id: o.id, oid: o.oid, memo: o.memo, merchantName: o.merchantName, logo: o.logo, redirectUrl: o.redirectUrl, state: stateOf(o, seen), methods, testOnly, watched };
}

/**
 * The page's model. From a local ledger it is one statement and no promise (the page is then
 * answered in the request's own turn, as the status GET is), unless the watcher has seen payments
 * of the order not yet counted (read then, for the banner) or the registry is not built yet.
 */
export function loadPayPage(source: PayPageSource, id: string): PayPageModel | Promise<PayPageModel> {
  if (!source.payPageOrder) return loadRemotePage(source, id);
  if (id.length > MAX_ID) throw notFound('Order not found');
  const row = source.payPageOrder(id);
  // A page without the shop's name still lets the payer pay.
  const o = { ...row, merchantName: row.merchantName ?? row.mchId };
  const registry = source.registryNow?.();
  const seen = row.seenOnChain && mayBeConfirming(o.status) && source.paymentsOnChain;
  if (registry && !seen) {
    // The ledger gives the same object for an order whose page reads exactly as before.
    const made = models.get(row);
    if (made?.registry === registry) return made.model;
    const model = modelOf(o, registry, []);
    models.set(row, { registry, model });
    return model;
  }
  return (async () => modelOf(o, registry ?? (await source.registry()), seen ? await seenOf(source, o) : []))();
}

/** The model made of a row of payPageOrder, with the registry it was made with. */
const models = new WeakMap<PayPageOrder, { registry: Registry; model: PayPageModel }>();

async function loadRemotePage(source: PayPageSource, id: string): Promise<PayPageModel> {
  const o = await pageOrder(source, id);
  return modelOf(o, await source.registry(), await seenOf(source, o));
}
