import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { usage } from '../core/errors.js';
import { sign } from '../signing/index.js';
import { createApp } from '../server/app.js';
import { listen } from '../server/listen.js';
import { warn } from './output.js';

export async function run(ctx: Context, opts: { host?: string; port?: string; publicUrl?: string }): Promise<void> {
  const host = opts.host ?? '127.0.0.1';
  const port = Number(opts.port ?? '8080');
  if (!/^\d{1,5}$/.test(opts.port ?? '8080') || port > 65535) throw usage('--port must be a number from 0 to 65535');
  const { parsePublicUrl } = await import('../server/pay-url.js');
  const givenPublicUrl = opts.publicUrl === undefined ? undefined : parsePublicUrl(opts.publicUrl);
  const service = await ctx.local('serve');
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);

  let firstRun: { mchId: string; secret: string; mnemonic?: string } | undefined;
  if (service.countMerchants() === 0) {
    const created = await service.addMerchant({ name: 'Development merchant', generateWallet: true });
    firstRun = { mchId: created.merchant.mchId, secret: created.secret, mnemonic: created.mnemonic };
  }

  // Access-log lines are written once per turn of the event loop, not once per request: under
  // load that is one write call for many lines.
  const log = lineBuffer((text) => ctx.io.stdout.write(text));
  // Built once here so that no request pays for it; addresses are derived ahead of demand on a
  // second thread, so creating an order mostly finds its addresses ready.
  const derive = await import('../chains/deriver.js');
  (await import('../chains/ckd.js')).warmUpDerivation();
  const pool = (await import('../chains/derive-ahead.js')).startDerivationWorker({ onError: err });
  derive.deriveAheadWith(pool);
  for (const w of service.walletCursors(8)) pool.prime(w.chain, w.xpub, w.next);
  const app = createApp({
    backend: service,
    now: ctx.now,
    accessLog: (line) => log.push(line),
    errorLog: err,
    publicUrl: givenPublicUrl,
  });
  const { writeSetting } = await import('../store/settings.js');
  const server = await listen(app, host, port);
  // Known only now when --port 0 picked a free port; kept in the ledger so a local
  // `order create` prints the same payUrl as this server answers.
  const publicUrl = givenPublicUrl ?? server.url;
  app.setPublicUrl(publicUrl);
  writeSetting(service.ledger, 'public_url', publicUrl, ctx.now());
  err(`cryptopay serving ${server.url}/api/v1 on the ledger ${service.ledger.path}`);
  err(`payment pages at ${publicUrl}/pay/{order id}`);
  if (firstRun) printFirstRun(ctx, err, server.url, firstRun);
  else err(`sign requests with a merchant's secret: cryptopay sign --fill --mch-id M... key=value ...`);

  const signal = await ctx.stopSignal();
  err(`${signal}: finishing requests in flight, then stopping`);
  await server.close();
  derive.deriveAheadWith(undefined);
  await pool.close();
  log.flush();
  err('stopped; ledger closed');
}

function lineBuffer(write: (text: string) => void) {
  let lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const text = `${lines.join('\n')}\n`;
    lines = [];
    write(text);
  };
  return {
    push(line: string) {
      if (lines.length === 0) setImmediate(flush);
      lines.push(line);
    },
    flush,
  };
}

function printFirstRun(ctx: Context, err: (s: string) => void, url: string, m: { mchId: string; secret: string; mnemonic?: string }): void {
  const body = {
    mchId: m.mchId,
    oid: `demo-${ctx.now()}`,
    uid: 'user-1',
    amount: '12.50',
    timestamp: ctx.now(),
    nonce: randomBytes(12).toString('hex'),
  };
  const signed = JSON.stringify({ ...body, sign: sign(body, m.secret) });
  err('');
  err('The ledger was empty, so a development merchant was created:');
  err(`  mchId   ${m.mchId}`);
  err(`  secret  ${m.secret}`);
  if (m.mnemonic) {
    err(`  wallet  ${m.mnemonic}`);
    void warn(ctx, '  These 24 words are the wallet behind every address of this merchant. They are shown once and not stored: do not send real funds to a development wallet you have not written down.');
  }
  err('');
  err('Create an order (signed now, valid for 5 minutes):');
  err(`  curl -s -X POST ${url}/api/v1/order -H 'Content-Type: application/json' -d '${signed}'`);
  err('');
  err('Sign your own bodies:');
  err(`  CRYPTOPAY_SECRET=<secret> cryptopay sign --fill --mch-id ${m.mchId} oid=A-1 uid=u1 amount=10 --json`);
  err('');
}
