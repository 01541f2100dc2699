import type { Context } from '../../context.js';
import type { Order } from '../../core/types.js';
import { isAppError, usage } from '../../core/errors.js';
import { checked, need } from '../common.js';
import { expiry, isFromNow } from '../fields.js';
import { printOrder } from '../views.js';
import { localPayUrl } from './local-pay-url.js';

export async function run(ctx: Context, opts: Record<string, string | boolean | undefined>): Promise<void> {
  const text = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  // Every value given is checked before a question is asked or anything is created.
  for (const flag of ['oid', 'uid', 'amount', 'memo', 'notify-url', 'redirect-url', 'logo']) {
    checked(text(opts[flag.replace(/-(.)/g, (_, c: string) => c.toUpperCase())]), flag);
  }
  const expiredAt = text(opts.expiredAt) === undefined ? undefined : expiry(text(opts.expiredAt)!, ctx.now());
  if (typeof expiredAt === 'string') throw usage(expiredAt);
  const oid = await need(ctx, text(opts.oid), 'oid', 'Merchant order number (oid)');
  const uid = await need(ctx, text(opts.uid), 'uid', 'User id (uid)');
  const amount = await need(ctx, text(opts.amount), 'amount', 'Amount');
  const service = await ctx.service();
  const request = {
    mchId: ctx.globals.mchId,
    oid,
    uid,
    amount,
    memo: text(opts.memo),
    expiredAt,
    notifyUrl: text(opts.notifyUrl),
    redirectUrl: text(opts.redirectUrl),
    logo: text(opts.logo),
  };
  const before = ctx.now();
  let retried = false;
  const order = await service.createOrder(request).catch(async (e: unknown) => {
    // A retry with the same duration (--expired-at 2h) works the expiry out again from its own
    // now, so the order the first run made "differs" in expiredAt alone: it is the same order,
    // answered as a retry without --expired-at is (an integrator review), and said on stderr.
    // Only when the first run's order expires that duration after it was made (within a minute:
    // the clocks of this machine and a remote's): another duration still differs (a code review).
    const given = text(opts.expiredAt);
    if (!given || !isFromNow(given) || !isAppError(e) || e.kind !== 'conflict' || !/ with a different expiredAt$/.test(e.message)) throw e;
    const first = await service.showOrder({ mchId: ctx.globals.mchId, oid }).catch(() => undefined);
    const meant = first ? expiry(given, first.createdAt) : undefined;
    if (typeof meant !== 'number' || Math.abs(meant - first!.expiredAt) > 60_000) throw e;
    const { expiredAt: _again, ...rest } = request;
    const existing = await service.createOrder(rest);
    ctx.io.stderr.write(`order ${oid} was created by an earlier run with --expired-at ${given} too; counted from that run, its expiry stays ${new Date(existing.expiredAt).toISOString()}\n`);
    retried = true;
    return existing;
  });
  // A remote answers with its payUrl; on the local ledger it is where `serve` said it is.
  const shown: Order = order.payUrl || ctx.isRemote() ? order : { ...order, payUrl: await localPayUrl(ctx, order.id) };
  // The interface's answer does not name the asset, nor whether the order was made now (a retry
  // with the same fields answers the order made before, by design); the order read back does
  // (nothing said if that read fails: the order is there either way).
  const detail = await service.showOrder({ mchId: ctx.globals.mchId, id: order.id }).catch(() => undefined);
  // Made before this run began: on a remote, by the remote's clock, so a minute of difference is allowed.
  if (detail && !retried && detail.createdAt < before - (ctx.isRemote() ? 60_000 : 0)) {
    ctx.io.stderr.write(`order ${oid} already existed (created ${new Date(detail.createdAt).toISOString()}, ${detail.status}): this is that order; nothing new was created\n`);
  }
  await printOrder(ctx, shown, ctx.globals.json ? undefined : detail?.asset);
  if (opts.qr && !ctx.globals.json) {
    const { qrText } = await import('../../qr/text.js');
    for (const [chain, address] of Object.entries(shown.addresses)) {
      if (address) ctx.io.stdout.write(`\n${chain} ${address}\n${qrText(address, ctx.color, ctx.env.TERM === 'dumb')}`);
    }
  }
}
