import { DEFAULT_SCHEDULE, parseSchedule } from '../../callbacks/schedule.js';
import { allowPrivateCallbacks, type Context } from '../../context.js';
import { startCallbacks } from './start.js';

/** The sender of serve, alone in the foreground: for a ledger that no serve runs on. */
export async function run(ctx: Context, opts: { callbackSchedule?: string; allowPrivateCallbacks?: boolean }): Promise<void> {
  const schedule = parseSchedule(opts.callbackSchedule ?? DEFAULT_SCHEDULE);
  const allowPrivate = !!opts.allowPrivateCallbacks || allowPrivateCallbacks(ctx.env);
  const service = await ctx.local('callbacks run');
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);
  const stopping = ctx.stopSignal();
  const worker = startCallbacks(ctx, service, { schedule, allowPrivate, line: (l) => ctx.io.stdout.write(`${l}\n`), err });
  err(`delivering callbacks from the ledger ${service.ledger.path}; stop with Ctrl-C`);
  if (allowPrivate) err('callbacks to loopback and private addresses are allowed (development only)');
  const signal = await stopping;
  err(`${signal}: finishing attempts in flight, then stopping`);
  await worker.stop();
  err('stopped');
}
