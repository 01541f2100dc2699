import type { ChainInfo, Registry } from '../chains/registry.js';
import { AppError, conflict } from '../core/errors.js';
import { formatAmount, parseAmount } from '../core/money.js';
import { getAddresses } from './orders.js';
import { orders } from './schema.js';
import { eq } from 'drizzle-orm';
import { decimalsOf, type StoreCtx } from './store-context.js';

/** What a watched chain says a transaction paid into an order (`order mark-paid`). */
export interface PaidOnChain {
  chainId: string;
  /** The order's asset. */
  asset: string;
  /** In the order's asset, in ledger base units: every transfer of a token of that asset to the order's address. */
  amount: bigint;
  /** Its block's time, ms: late is judged by it, as the watcher judges. */
  blockTime: number;
  confirmations: number;
}

const unverifiedHint = 'or record it without the chain: --unverified --reason TEXT';

/**
 * A payment recorded by hand on a chain with an rpcUrl is read there first (a new-user trial: a
 * mistyped hash on the watched chain was credited, and the real transfer counted on top: 60 paid
 * on a 30 order). Refused, nothing recorded: a transaction the node does not know, not mined,
 * failed, paying nothing of the order's asset to the order's address on that chain, or short of
 * the chain's confirmations (the watcher counts it then), or another amount than `amount` (the
 * operator's, when given). Null on a chain without an rpcUrl: there is nothing to ask.
 */
export async function paidOnChain(s: StoreCtx, registry: Registry, a: { orderId: string; chain: ChainInfo; txHash: string; token: string | null; amount?: string }): Promise<PaidOnChain | null> {
  const { chain, txHash } = a;
  if (!chain.rpcUrl) return null;
  const order = s.db.select({ asset: orders.asset, merchantId: orders.merchantId }).from(orders).where(eq(orders.id, a.orderId)).get();
  if (!order) return null;
  // Said before the chain is asked: test money pays only the test wallet's orders, whatever it says.
  if (chain.development) (await import('./payments.js')).refuseTestMoney(s.db, order.merchantId, chain.chainType, chain.chainId);
  const address = getAddresses(s, a.orderId)[chain.chainType];
  if (!address) throw conflict(`order ${a.orderId} has no ${chain.chainType} address: a payment on chain ${chain.chainId} cannot be its; nothing was recorded`);
  const tokens = registry.tokens().filter((t) => t.chainId === chain.chainId && t.asset === order.asset && (a.token === null || t.address === a.token));
  if (tokens.length === 0) throw conflict(`chain ${chain.chainId} has no ${order.asset} token in the registry: nothing of it can pay order ${a.orderId}; nothing was recorded`);
  const [{ observeTransaction }, { RpcError, RpcTransportError }, { adapterFor }, { credited }] = await Promise.all([
    import('../chains/withdrawal-check.js'), import('../chains/watch/rpc.js'), import('../chains/watch/adapter.js'), import('../chains/watch/watcher.js'),
  ]);
  let seen: Awaited<ReturnType<typeof observeTransaction>>;
  try {
    seen = await observeTransaction(await s.rpc(chain), { chainId: chain.chainId, chainType: chain.chainType, token: tokens[0]!.address, tokenDecimals: tokens[0]!.decimals, txHash });
  } catch (e) {
    if (!(e instanceof RpcTransportError || e instanceof RpcError)) throw e;
    throw new AppError('unavailable', `chain ${chain.chainId} (${chain.name}) cannot be read: ${(e as Error).message}; nothing was recorded (try again, ${unverifiedHint})`, { cause: e });
  }
  const where = `chain ${chain.chainId} (${chain.name})`;
  if (!seen.known) throw conflict(`${where} does not know transaction ${txHash}: nothing was recorded; check the hash and the chain (${unverifiedHint})`);
  if (!seen.mined) throw conflict(`transaction ${txHash} is not mined yet on ${where}: nothing was recorded; the chain watcher counts it once it is`);
  if (seen.succeeded === false) throw conflict(`transaction ${txHash} failed on ${where}: it moved nothing; nothing was recorded`);
  const adapter = adapterFor(chain.chainType);
  const node = (x: string) => adapter.toNodeAddress(x);
  const decimals = decimalsOf(order.asset);
  let amount = 0n;
  for (const t of seen.transfers) {
    const token = tokens.find((k) => node(k.address) === node(t.token));
    if (token && node(t.to) === node(address)) amount += credited(BigInt(t.rawAmount), token.decimals, decimals);
  }
  if (amount === 0n) {
    throw conflict(`transaction ${txHash} on ${where} pays no ${order.asset} to order ${a.orderId}'s address ${address}: nothing was recorded; check the hash and the chain (${unverifiedHint})`);
  }
  if (seen.confirmations < chain.confirmations) {
    throw conflict(`transaction ${txHash} has ${seen.confirmations} of the ${chain.confirmations} confirmations ${where} needs: nothing was recorded; the chain watcher counts it once it has them (it pays ${formatAmount(amount, decimals)} ${order.asset})`);
  }
  const given = a.amount === undefined ? undefined : parseAmount(a.amount, decimals);
  if (given !== undefined && given !== amount) {
    throw conflict(`chain ${chain.chainId} says transaction ${txHash} paid ${formatAmount(amount, decimals)} ${order.asset} to order ${a.orderId}'s address, not ${formatAmount(given, decimals)}: nothing was recorded`);
  }
  return { chainId: chain.chainId, asset: order.asset, amount, blockTime: seen.blockTime!, confirmations: seen.confirmations };
}
