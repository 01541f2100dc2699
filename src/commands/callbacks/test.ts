import { deliver } from '../../callbacks/deliver.js';
import { PRIVATE_HINT, privateHint } from '../../callbacks/guard.js';
import { signedEventBody } from '../../callbacks/event.js';
import { sampleEvent } from '../../callbacks/sample.js';
import type { Context } from '../../context.js';
import { usage } from '../../core/errors.js';
import { need } from '../common.js';
import { printJson, printRecord } from '../output.js';

/** One sample event, signed with the merchant's secret, sent once to --url under the same rules as real ones. */
export async function run(ctx: Context, opts: { url?: string; event?: string; allowPrivateCallbacks?: boolean }): Promise<number> {
  const url = await need(ctx, opts.url, 'url', 'URL to send the sample event to');
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw usage('--url must be an http or https URL');
  }
  const now = ctx.now();
  const fields = sampleEvent(opts.event ?? 'order.paid', now);
  const service = await ctx.local('callbacks test');
  const mchId = service.resolveMerchantId(ctx.globals.mchId);
  const secret = service.merchantSecret(mchId)!;
  const body = JSON.stringify(signedEventBody(fields, mchId, secret, now));
  // The flag, else what the ledger's service allows (the variable, or the public test wallet's merchant).
  const sent = await deliver(url, body, { allowPrivate: !!opts.allowPrivateCallbacks || service.inwardCallbacksAllowed(mchId) });
  // The guard's hint names serve's switch; here this command's own lifts it (a new-user trial).
  const r = { ...sent, error: sent.error && sent.error.replace(PRIVATE_HINT, privateHint('callbacks test --allow-private-callbacks')) };
  const ok = r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;
  if (ctx.globals.json) printJson(ctx, { eventId: fields.eventId, event: fields.event, mchId, acknowledged: ok, ...r });
  else {
    await printRecord(ctx, [
      ['event', `${fields.event} ${fields.eventId}`],
      ['merchant', mchId],
      ['status code', r.statusCode],
      ['latency', `${r.latencyMs}ms`],
      ['error', r.error],
      ['acknowledged', ok ? 'yes' : 'no'],
    ]);
  }
  return ok ? 0 : 1;
}
