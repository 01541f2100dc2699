import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { usage } from '../core/errors.js';
import { sign } from '../signing/index.js';
import { createApp } from '../server/app.js';
import { listen } from '../server/listen.js';
import { warn } from './output.js';

export async function run(ctx: Context, opts: { host?: string; port?: string; watch?: boolean; dev?: boolean }): Promise<void> {
  const host = opts.host ?? '127.0.0.1';
  const port = Number(opts.port ?? '8080');
  if (!/^\d{1,5}$/.test(opts.port ?? '8080') || port > 65535) throw usage('--port must be a number from 0 to 65535');
  const service = await ctx.local('serve');

  // Before anything reads the registry: the sandbox adds its chain to it. If serve fails from
  // here on, anvil still ends with this process (src/chains/sandbox/anvil.ts).
  const sandbox = opts.dev ? await (await import('./dev/sandbox.js')).startSandbox(ctx, service) : undefined;
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
  });
  const server = await listen(app, host, port);
  err(`cryptopay serving ${server.url}/api/v1 on the ledger ${service.ledger.path}`);
  if (sandbox) sandbox.announce(server.url);
  else if (firstRun) printFirstRun(ctx, err, server.url, firstRun);
  else err(`sign requests with a merchant's secret: cryptopay sign --fill --mch-id M... key=value ...`);
  // The chain watcher shares the ledger connection and its group commit; a failing node only backs it off.
  const watching = opts.watch === false ? undefined : await (await import('../chains/watch/start.js')).startWatching(service, { now: ctx.now, log: err });

  const signal = await ctx.stopSignal();
  err(`${signal}: finishing requests in flight, then stopping`);
  await server.close();
  await watching?.stop();
  derive.deriveAheadWith(undefined);
  await pool.close();
  await sandbox?.stop();
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
