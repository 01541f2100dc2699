import type { Context } from '../context.js';
import { AppError } from '../core/errors.js';
import type { Owned, Owner } from '../store/owners.js';

/**
 * On the local ledger an operator acts on the whole ledger: with no --mch-id on a ledger of
 * several merchants, a command that names an order (by id or by oid), a withdrawal or a user acts
 * for the merchant that holds it (`ctx.globals.mchId` is set to it for the rest of the command;
 * from an oid or a uid, which are the merchant's own names, stderr says which merchant it took).
 * What several merchants hold is refused naming them; what none holds is refused as not found.
 * With a --mch-id of this ledger that does not hold it, the refusal names the merchant that does
 * (not under --json, whose words stay the interface's). Found by a new-user trial: refund and
 * withdraw confirm|reject|verify asked for --mch-id for an id only one merchant had, and the hint
 * named the first merchant, whose "not found" then misled. On a remote the profile's merchant is
 * the only one: nothing to resolve.
 */
export async function actForOwner(ctx: Context, what: Owned): Promise<void> {
  const named = Object.entries(what).find(([, v]) => v !== undefined) as [keyof Owned, string] | undefined;
  if (ctx.isRemote() || !named) return;
  const [kind, ref] = named;
  const local = await ctx.local('this command');
  const given = ctx.globals.mchId;
  if (given === undefined) {
    if ((await local.listMerchants()).length < 2) return;
    const owner = local.ownerOf(what);
    if (owner === undefined) {
      // An oid given as an order id (--id A-1): named as such, with the flag that takes it.
      const asOid = kind === 'orderId' && !ctx.globals.json ? local.ownerOf({ oid: ref }) : undefined;
      if (asOid) throw new AppError('not_found', `Order not found: ${ref} is not an order id but the oid of order ${asOid.orderId} (merchant ${asOid.mchId}): give it as --oid ${ref}`);
      throw notHeld(kind, ref, ctx.globals.json);
    }
    ctx.globals.mchId = owner.mchId;
    if (kind === 'oid' || kind === 'uid') ctx.io.stderr.write(`note: acting for merchant ${owner.mchId}, the only merchant with ${kind === 'oid' ? `oid ${ref}` : `user ${ref}`}\n`);
    return;
  }
  if (ctx.globals.json) return;
  // A merchant that is not this ledger's (a typo, another case): the operation says so itself.
  if (!(await local.listMerchants()).some((m) => m.mchId === given)) return;
  let owner: Owner | undefined;
  try {
    owner = local.ownerOf(what);
  } catch {
    // Held by several merchants, the given one perhaps among them: the operation decides.
    return;
  }
  if (owner === undefined || owner.mchId === given) return;
  if (kind === 'uid') throw new AppError('not_found', `user ${ref} has no activity with merchant ${given}: it is a user of merchant ${owner.mchId} (pass --mch-id ${owner.mchId})`);
  const thing = kind === 'withdrawal' ? `withdrawal ${ref}` : kind === 'oid' ? `oid ${ref} (order ${owner.orderId})` : `order ${ref}`;
  throw new AppError('not_found', `${kind === 'withdrawal' ? 'withdrawal not found' : 'Order not found'}: ${thing} is merchant ${owner.mchId}'s, not ${given}'s: pass --mch-id ${owner.mchId}`);
}

/** Nobody on this ledger holds it: said at once, not as a demand for --mch-id that could only end in "not found". */
function notHeld(kind: keyof Owned, ref: string, json: boolean): AppError {
  if (kind === 'withdrawal') return new AppError('not_found', json ? 'withdrawal not found' : `withdrawal not found: no merchant of this ledger has withdrawal ${ref} (cryptopay withdraw list lists them)`);
  if (kind === 'uid') return new AppError('not_found', `user ${ref} has no activity with any merchant of this ledger: no order, payment, refund, withdrawal or adjustment`);
  return new AppError('not_found', json ? 'Order not found' : `Order not found: no merchant of this ledger has an order with the ${kind === 'oid' ? 'oid' : 'id'} ${ref} (cryptopay order find ${ref} also searches uids, transaction hashes and deposit addresses)`);
}
