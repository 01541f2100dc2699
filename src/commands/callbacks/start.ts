import type Database from 'better-sqlite3';
import { CallbackWorker, openSenderLedger } from '../../callbacks/worker.js';
import type { Context } from '../../context.js';
import type { LocalPaymentService } from '../../store/local-service.js';

/**
 * Starts the outbox's sender on the service's ledger (serve and `callbacks run`), logging one
 * line per attempt: the event, its id, the host and the answer, never the URL's path or query
 * (a merchant may keep a token there) nor the body.
 * The sender writes through a connection of its own (openSenderLedger says why).
 */
export function startCallbacks(ctx: Context, service: LocalPaymentService, o: { schedule: number[]; allowPrivate: boolean; line: (s: string) => void; err: (s: string) => void; watchedChains?: readonly string[] }): { stop(): Promise<void>; sqlite: Database.Database } {
  const own = openSenderLedger(service.ledger.path);
  const worker = new CallbackWorker({
    ledger: own,
    now: ctx.now,
    schedule: o.schedule,
    allowPrivate: o.allowPrivate,
    watchedChains: o.watchedChains ?? [],
    log: o.err,
    durable: () => service.durable(),
    onAttempt: (row, r, status) => {
      const answer = r.statusCode !== null ? String(r.statusCode) : `error (${r.error})`;
      o.line(`${new Date(ctx.now()).toISOString()} callback ${row.event} ${row.id} ${row.host} ${answer} ${r.latencyMs}ms ${status}`);
    },
  });
  worker.start();
  return {
    /** The sender's own connection (serve checkpoints the WAL for it, src/store/checkpointer.ts). */
    sqlite: own.sqlite,
    async stop() {
      await worker.stop();
      own.close();
    },
  };
}
