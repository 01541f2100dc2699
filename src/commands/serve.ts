import { DEFAULT_SCHEDULE, parseSchedule } from '../callbacks/schedule.js';
import { allowPrivateCallbacks, chainsConfigPath, type Context } from '../context.js';
import { AppError, usage } from '../core/errors.js';
import { stopAll, type StopStep } from '../core/stop-all.js';
import { createApp } from '../server/app.js';
import { sqliteAddon } from '../store/db.js';
import { syncInBackground } from '../store/wal-sync.js';
import { anchorReads } from '../store/read-anchor.js';
import { DEFAULT_HTTP_LIMITS, listen, type HttpLimits } from '../server/listen.js';
import { startCallbacks } from './callbacks/start.js';
import { refuseSecondDev, signHint, soleMchId, startDev, type DevMode } from './serve-dev.js';


/**
 * serve's heap (src/server/heap-policy.ts): a young generation of 2 x 4 MiB, never past 2 x 8
 * MiB (V8 lets it reach 2 x 16 MiB), and an old one collected when it has grown by half over
 * what was live (a quarter was tried in the sixth round and not kept: bench/CHANGES.md). The
 * policy settles at 2 x 4 MiB with this bound. 2 x 8 MiB settled was kept at first
 * (bench/CHANGES.md, third round: memory) for a hint of more CPU per status GET; measured again
 * with bench/ab.mjs (4 rounds, load 1.3-1.7) 2 x 4 MiB cost nothing visible (status GET 35.6 vs
 * 39.7 us of CPU, page 73.9 vs 76.4 us) and held serve's peak RSS 3-10 MB lower under each load
 * (bench/CHANGES.md, fifth round).
 */
export const SERVE_HEAP = { youngMiB: 16, growingPercent: 50 };

export interface ServeOptions {
  host?: string;
  port?: string;
  maxConnections?: string;
  maxConnectionsPerClient?: string;
  /** false with --no-watch. */
  watch?: boolean;
  dev?: boolean;
  callbackSchedule?: string;
  allowPrivateCallbacks?: boolean;
  publicUrl?: string;
}

/**
 * The HTTP limits serve runs with: the defaults of listen.ts, with the caps from
 * --max-connections and --max-connections-per-client.
 */
export function serveLimits(opts: ServeOptions): HttpLimits {
  const limits = { ...DEFAULT_HTTP_LIMITS };
  if (opts.maxConnections !== undefined) limits.maxConnections = capOption(opts.maxConnections, '--max-connections', false);
  if (opts.maxConnectionsPerClient !== undefined) limits.maxConnectionsPerClient = capOption(opts.maxConnectionsPerClient, '--max-connections-per-client', true);
  return limits;
}

/** A connection cap's value: a whole number up to 999999, from 1, or from 0 (no cap) where `zeroIsOff`. */
function capOption(given: string, flag: string, zeroIsOff: boolean): number {
  const ok = zeroIsOff ? /^(0|[1-9]\d{0,5})$/ : /^[1-9]\d{0,5}$/;
  if (!ok.test(given)) throw usage(`${flag} must be a whole number from ${zeroIsOff ? '0 (no cap)' : '1'} to 999999`);
  return Number(given);
}

export async function run(ctx: Context, opts: ServeOptions): Promise<void> {
  const host = opts.host ?? '127.0.0.1';
  const port = Number(opts.port ?? '8080');
  if (!/^\d{1,5}$/.test(opts.port ?? '8080') || port > 65535) throw usage('--port must be a number from 0 to 65535');
  const limits = serveLimits(opts);
  const { defaultPublicUrl, parsePublicUrl } = await import('../server/pay-url.js');
  const givenPublicUrl = opts.publicUrl === undefined ? undefined : parsePublicUrl(opts.publicUrl);
  const schedule = parseSchedule(opts.callbackSchedule ?? DEFAULT_SCHEDULE);
  // --dev sends callbacks to the developer's own machine, where its receiver runs.
  const allowPrivate = !!opts.allowPrivateCallbacks || !!opts.dev || allowPrivateCallbacks(ctx.env);
  const service = (await ctx.local('serve', { create: true })).withPrivateCallbacks(allowPrivate);
  // Many requests in flight: COMMIT's fsync moves off the event loop, answers still wait for it.
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);
  syncInBackground(service.ledger, (message) => err(`error: ${message}`));
  // The GETs of one turn share SQLite's file locks instead of each taking them anew.
  const anchor = anchorReads(service.ledger, sqliteAddon());
  // A chains config that does not hold stops serve here, before it binds a port or starts a
  // chain, rather than after it says it serves.
  await service.registry();
  // Before the port and the ledger are touched: a second --dev on this ledger is refused.
  if (opts.dev) await refuseSecondDev(service, shellQuote(ctx.command()));

  // Access-log lines are written once per turn of the event loop, not once per request: under
  // load that is one write call for many lines.
  const log = lineBuffer((text) => ctx.io.stdout.write(text));
  // Built once here so that no request pays for it; addresses are derived ahead of demand on a
  // second thread, so creating an order mostly finds its addresses ready.
  const derive = await import('../chains/deriver.js');
  // Before the derivation table is built: its bigints are the first thing to grow the heap.
  const releaseHeap = (await import('../server/heap-policy.js')).holdServeHeap(SERVE_HEAP);
  (await import('../chains/ckd.js')).warmUpDerivation();
  // The address pool on a thread of its own, at the lowest priority (src/chains/derive-worker.ts).
  const pool = (await import('../chains/derive-ahead.js')).startDerivationWorker({ onError: err });
  derive.deriveAheadWith(pool);
  for (const w of service.walletCursors(8)) pool.prime(w.chain, w.xpub, w.next);
  // The last steps of every way out: the derivation thread is asked to end, not left to be
  // stopped at exit inside a slice (src/core/end-worker.ts); its thread ends by itself after the
  // slice of addresses it is on, and is stopped only if it does not.
  const lastSteps: StopStep[] = [
    ['the address derivation thread', async () => {
      derive.deriveAheadWith(undefined);
      if ((await pool.close()) === 'terminated') err('the address derivation thread did not end within 10 s of being asked to; it was stopped');
    }],
    ['the heap policy', releaseHeap],
    ['the read anchor', () => anchor?.close()],
  ];
  /** A start that failed: whatever started stops, and the failure that stopped it is the one thrown. */
  const failedStart = async (e: unknown, steps: StopStep[]): Promise<never> => {
    await stopAll([...steps, ...lastSteps], err).catch(() => {});
    throw e;
  };
  const app = createApp({
    backend: service,
    now: ctx.now,
    accessLog: (line) => log.push(line),
    errorLog: err,
    publicUrl: givenPublicUrl,
  });
  // Listened for before the first line is printed: whoever reads that line may stop us at once.
  const stopping = ctx.stopSignal();
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(app, host, port, limits);
  } catch (e) {
    return failedStart(listenError(e, host, port), []);
  }
  // Known only now when --port 0 picked a free port; kept in the ledger so a local
  // `order create` prints the same payUrl as this server answers.
  const fallback = defaultPublicUrl(server.url);
  const publicUrl = givenPublicUrl ?? fallback.url;
  app.setPublicUrl(publicUrl);
  // Only --dev creates anything (decisions §10), and only once the port is ours: a failed start
  // leaves the ledger as it was. A plain serve on an empty ledger says how to add a merchant,
  // and serves it as soon as it exists (merchants are read per request).
  let dev: DevMode | undefined;
  let watching: Awaited<ReturnType<typeof import('../chains/watch/start.js').startWatching>>;
  try {
    // The first write of the start (a lock held too long, a full disk fail it here): inside this
    // try, so that a failure closes the port and ends the process instead of leaving it serving
    // 500s (a durability review found serve held the port and ignored SIGTERM).
    const { writeSetting } = await import('../store/settings.js');
    writeSetting(service.ledger, 'public_url', publicUrl, ctx.now());
    dev = opts.dev ? await startDev(ctx, service, err) : undefined;
    const empty = !dev && service.countMerchants() === 0;
    err(`cryptopay serving ${server.url}/api/v1 on the ledger ${service.ledger.path}`);
    err(`payment pages at ${publicUrl}/pay/{order id}`);
    if (!givenPublicUrl && fallback.wildcard) err(`  that is this machine only: give --public-url with the address payers reach this server at`);
    const { blockedPortOf, blockedPortReason } = await import('../core/blocked-ports.js');
    const publicPort = blockedPortOf(new URL(publicUrl));
    if (publicPort !== undefined) err(`  warning: ${blockedPortReason(publicPort)}: payment pages there will not open, and cryptopay --remote cannot reach it; choose another --port (or a --public-url on another port)`);
    if (dev) dev.announce(server.url, opts.watch !== false);
    else if (empty) noMerchantHint(err, service.ledger.path, shellQuote(ctx.command()));
    else err(signHint(shellQuote(ctx.command()), await soleMchId(service)));
    // After --dev, which may have put its chain into the registry. The chain watcher shares the
    // ledger connection and its group commit; a failing node only backs it off.
    watching = opts.watch === false ? undefined : await (await import('../chains/watch/start.js')).startWatching(service, { now: ctx.now, log: err });
    // Payment pages show every chain a merchant has a wallet for: an operator must hear that
    // nothing will see the payments made there.
    if (!watching) {
      err(
        opts.watch === false
          ? 'not watching any chain (--no-watch): payments on chain are not seen here; orders turn PAID only when another process watches (cryptopay watch) or by order mark-paid'
          // The file itself: "the file CRYPTOPAY_CHAINS names" named none when it was unset (a new-user trial).
          : `no chain is watched (none in the chains config has an rpcUrl and a token): payments on chain are not seen, and orders turn PAID only by order mark-paid; give a chain an rpcUrl in the chains config, ${chainsConfigPath(ctx.env)} (docs/operations.md, "Chains and tokens")`,
      );
    }
  } catch (e) {
    // Whatever started must stop, or the process would go on serving after saying it failed.
    return failedStart(e, [['the HTTP server', () => server.close()], ['the development chain', () => dev?.close()]]);
  }

  let callbacks: ReturnType<typeof startCallbacks> | undefined;
  let checkpoints: { close(): Promise<void> };
  try {
    // The outbox's sender: every committed event reaches its notifyUrl (decisions §9).
    callbacks = startCallbacks(ctx, service, { schedule, allowPrivate, line: (l) => log.push(l), err, watchedChains: watching?.chains ?? [] });
    if (allowPrivate) err('callbacks to loopback and private addresses are allowed (development only)');
    // WAL checkpoints on a thread of their own, not inside a COMMIT on the event loop.
    checkpoints = (await import('../store/checkpointer.js')).checkpointInBackground(service.ledger, { others: [callbacks.sqlite], onError: err });
  } catch (e) {
    return failedStart(e, [
      ['the HTTP server', () => server.close()],
      ['the chain watcher', () => watching?.stop()],
      ['the callback sender', () => callbacks?.stop()],
      ['the development chain', () => dev?.close()],
    ]);
  }

  const signal = await stopping;
  err(`${signal}: finishing requests in flight, then stopping`);
  // Every step runs even when one before it fails (src/core/stop-all.ts). The watcher before the
  // sender: a payment it records on the way out still reaches the sender.
  await stopAll(
    [
      ['the HTTP server', () => server.close()],
      ['the chain watcher', () => watching?.stop()],
      ['the callback sender', () => callbacks!.stop()],
      ['the WAL checkpoints', () => checkpoints.close()],
      ['the development chain', () => dev?.close()],
      ...lastSteps,
      ['the access log', () => log.flush()],
    ],
    err,
  );
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

function listenError(e: unknown, host: string, port: number): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  // The port is the machine's state, not a mistake of the command line: exit 3, like a ledger or
  // a remote that cannot be reached (issue #15 item 5). A --host that is no address here is usage.
  if (code === 'EADDRINUSE') return new AppError('unavailable', `cannot listen on ${where}: the port is in use (by another cryptopay serve?); pick another with --port, or --port 0 for any free one`);
  if (code === 'EACCES') return new AppError('unavailable', `cannot listen on ${where}: permission denied (ports below 1024 need privileges); pick another with --port`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return usage(`cannot listen on ${where}: --host is not an address of this machine`);
  return e;
}

/** A path as a shell reads it back: bare when it holds nothing the shell would act on. */
function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function noMerchantHint(err: (s: string) => void, ledgerPath: string, cli: string): void {
  err('The ledger has no merchant yet, so every signed request is refused. Add one; the server picks it up at once, no restart needed:');
  err(`  ${cli} merchant add --db ${shellQuote(ledgerPath)} --name "My shop" --generate-wallet`);
  err(`Or, to try it out, start with \`${cli} serve --dev\`: on an empty ledger it creates a development merchant and prints how to use it.`);
}
