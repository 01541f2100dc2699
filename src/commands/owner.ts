import type { Context } from '../context.js';
import { AppError } from '../core/errors.js';
import type { Owned } from '../store/owners.js';

const NAMES: Record<keyof Owned, string> = { order: 'order', withdrawal: 'withdrawal', uid: 'user' };

/**
 * On the local ledger an operator acts on the whole ledger: with no --mch-id on a ledger of
 * several merchants, a command that names an order (id or oid), a withdrawal or a user acts for
 * the merchant that holds it (`ctx.globals.mchId` is set to it for the rest of the command); one
 * that several merchants hold is refused naming them. With a --mch-id that does not hold it, the
 * refusal names the merchant that does (not under --json, whose words stay the interface's).
 * Found by a new-user trial: refund, withdraw confirm|reject|verify and balance asked for
 * --mch-id for an id only one merchant had, and the hint named the first merchant, whose "not
 * found" then misled. On a remote the profile's merchant is the only one: nothing to resolve.
 */
export async function actForOwner(ctx: Context, what: Owned, opts: { otherMerchant?: 'refuse' | 'allow' } = {}): Promise<void> {
  if (ctx.isRemote() || Object.values(what).every((v) => v === undefined)) return;
  const local = await ctx.local('this command');
  const given = ctx.globals.mchId;
  if (given === undefined) {
    if ((await local.listMerchants()).length < 2) return;
    const owner = local.ownerOf(what);
    if (owner !== undefined) ctx.globals.mchId = owner;
    return;
  }
  // balance adjust may credit a user new to the merchant given, whoever else has that uid.
  if (ctx.globals.json || opts.otherMerchant === 'allow') return;
  let owner: string | undefined;
  try {
    owner = local.ownerOf(what);
  } catch {
    // Held by several merchants, the given one perhaps among them: the operation decides.
    return;
  }
  if (owner === undefined || owner === given) return;
  const [kind, ref] = Object.entries(what).find(([, v]) => v !== undefined) as [keyof Owned, string];
  if (kind === 'uid') throw new AppError('not_found', `user ${ref} has no activity with merchant ${given}: it is a user of merchant ${owner} (pass --mch-id ${owner})`);
  const notFound = kind === 'withdrawal' ? 'withdrawal not found' : 'Order not found';
  throw new AppError('not_found', `${notFound}: ${NAMES[kind]} ${ref} is merchant ${owner}'s, not ${given}'s: pass --mch-id ${owner}`);
}
