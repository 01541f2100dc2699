import type { z } from 'zod';
import {
  balanceSchema,
  callbackListSchema,
  callbackShowSchema,
  chainsSchema,
  heldListSchema,
  logFollowSchema,
  logSchema,
  merchantMeSchema,
  orderFindSchema,
  orderListSchema,
  orderShowSchema,
  refundListSchema,
  summarySchema,
  withdrawListSchema,
  withdrawShowSchema,
} from '../core/schemas.js';
import { merchantError } from '../callbacks/attempt-errors.js';
import type { OperatorExtensions, PaymentService } from '../core/service.js';
import type { AuditView, CallbackView } from '../core/types.js';

/**
 * Adds one signed read: `run` gets the input parsed with `schema` and the merchant whose secret
 * verified (src/server/app.ts builds it on its signed routes).
 */
export type ReadRoute = <S extends z.ZodObject>(path: string, schema: S, run: (s: PaymentService & OperatorExtensions, q: z.output<S>, mchId: string) => Promise<unknown>) => void;

/**
 * The operator's reads for remote mode (decisions §12, docs/api.md "The operator's reads"): each
 * reads the signing merchant's rows and no other's, by the `mchId` it is given.
 */
export function operatorReads(read: ReadRoute): void {
  read('/api/v1/merchant', merchantMeSchema, (s, _q, mchId) => s.whoami(mchId));
  // The lists answer an array, or with `page: true` a page: the rows, how many match in all, how
  // many come before, the next cursor (the CLI's "showing 51-100 of 230").
  read('/api/v1/order/list', orderListSchema, (s, q, mchId) => {
    const f = { mchId, status: q.status, uid: q.uid, oid: q.oid, since: q.since, until: q.until, cursor: q.cursor, limit: q.limit };
    return q.page ? s.pageOrders(f) : s.listOrders(f);
  });
  read('/api/v1/order/show', orderShowSchema, (s, q, mchId) => s.showOrder({ mchId, id: q.id, oid: q.oid }));
  read('/api/v1/order/find', orderFindSchema, (s, q, mchId) => s.findOrders(q.q, { mchId, limit: q.limit }));
  read('/api/v1/order/held', heldListSchema, (s, q, mchId) => s.heldPayments({ mchId, orderId: q.orderId }));
  read('/api/v1/withdraw/list', withdrawListSchema, (s, q, mchId) => {
    const f = { mchId, status: q.status, uid: q.uid, since: q.since, until: q.until, cursor: q.cursor, limit: q.limit };
    return q.page ? s.pageWithdrawals(f) : s.listWithdrawals(f);
  });
  read('/api/v1/withdraw/show', withdrawShowSchema, (s, q, mchId) => s.getWithdrawal(q.id, mchId));
  read('/api/v1/refund/list', refundListSchema, (s, q, mchId) => {
    const f = { mchId, orderId: q.orderId, cursor: q.cursor, limit: q.limit };
    return q.page ? s.pageRefunds(f) : s.listRefunds(f);
  });
  read('/api/v1/balance', balanceSchema, (s, q, mchId) => s.balance(q.uid, { mchId, asset: q.asset?.toUpperCase(), known: q.known }));
  // Why an attempt failed, in the words a merchant may read (src/callbacks/attempt-errors.ts):
  // never what the service's resolver made of a name inside its network.
  read('/api/v1/callbacks/list', callbackListSchema, async (s, q, mchId) => {
    const f = { mchId, status: q.status, orderId: q.orderId, withdrawalId: q.withdrawalId, cursor: q.cursor, limit: q.limit };
    if (!q.page) return (await s.listCallbacks(f)).map(forMerchant);
    const page = await s.pageCallbacks(f);
    return { ...page, items: page.items.map(forMerchant) };
  });
  // Which process of the service sent an attempt (host:pid) is the operator's business, not the merchant's.
  read('/api/v1/callbacks/show', callbackShowSchema, async (s, q, mchId) => {
    const c = await s.showCallback(q.id, mchId);
    return { ...forMerchant(c), history: c.history.map((a) => ({ ...a, error: merchantError(a.error), by: 'service' })) };
  });
  // The log of the signing merchant, numbered on its own (src/store/audit-log.ts); who acted is
  // the merchant itself (api:<mchId>), a chain, or "operator": an operator's name is the login
  // account of the server or what --operator said, not the merchant's to read (an outside review).
  read('/api/v1/log', logSchema, async (s, q, mchId) => {
    const f = { mchId, orderId: q.orderId, withdrawalId: q.withdrawalId, since: q.since, until: q.until, cursor: q.cursor, limit: q.limit };
    if (!q.page) return (await s.log(f)).map(actorForMerchant);
    const page = await s.pageLog(f);
    return { ...page, items: page.items.map(actorForMerchant) };
  });
  read('/api/v1/log/follow', logFollowSchema, async (s, q, mchId) => {
    const follow = await s.followLog({ mchId, orderId: q.orderId, withdrawalId: q.withdrawalId, since: q.since, after: q.after, limit: q.limit });
    return { ...follow, entries: follow.entries.map(actorForMerchant) };
  });
  // The chains' part is the service's: a deep reorg's report names the payment it left credited,
  // another merchant's as likely as not, and a node's error names the node (an internal address
  // for a node of one's own: a review). The merchant reads that there is one, and no more.
  read('/api/v1/summary', summarySchema, async (s, _q, mchId) => {
    const summary = await s.summary({ mchId });
    return { ...summary, chains: summary.chains.map((c) => ({ ...c, lastError: c.lastError && NODE_TROUBLE, deepReorg: c.deepReorg && deepReorgForMerchant(c.deepReorg) })) };
  });
  // Every merchant's withdrawals go through the same chains: nothing in it is one merchant's.
  read('/api/v1/chains', chainsSchema, (s) => s.knownChains());
}

const forMerchant = <C extends CallbackView>(c: C): C => ({ ...c, lastError: merchantError(c.lastError) });

const actorForMerchant = (e: AuditView): AuditView => (/^(api|chain):/.test(e.actor) ? e : { ...e, actor: 'operator' });

/** A chain's last error as any merchant may read it: the node's address and answer are the operator's. */
const NODE_TROUBLE = "the service could not read this chain's node at its last try (the operator's summary says why)";

/** A deep reorg's report (its time, then what it found) as any merchant may read it. */
function deepReorgForMerchant(report: string): string {
  const at = /^\d{4}-\d\d-\d\dT[\d:.]+Z /.exec(report)?.[0] ?? '';
  return `${at}a reorg deeper than the chain's confirmations replaced blocks that held payments already counted; the operator is checking them`;
}
