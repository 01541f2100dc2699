import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { invalid } from '../core/errors.js';
import { openLedger, type Ledger } from '../store/db.js';
import { expiryDue, sweepExpired } from '../store/expiry-sweep.js';
import { groupCommit } from '../store/group-commit.js';
import {
  busyHosts,
  claimDue,
  deliveryDue,
  findCallback,
  handedRows,
  leaseForResend,
  merchantSecret,
  onOutboxWrite,
  recordAttempt,
  releaseLeases,
  takeNewRows,
  type CallbackRow,
  type CallbackStatus,
  type EventFields,
} from '../store/outbox.js';
import { allowedAddress, deliver, DELIVERY_TIMEOUT_MS, InwardRefusal, type Connector, type DeliveryResult, type Resolver } from './deliver.js';
import { signedEventBody } from './event.js';
import { parseSchedule, retryDelay, DEFAULT_SCHEDULE } from './schedule.js';

/**
 * The sender's own connection to the ledger, committing without waiting for fsync
 * (synchronous = NORMAL, still WAL): what it writes is leases and attempts, and a power cut that
 * forgets one only means an event is sent again, which at-least-once delivery allows. The events
 * themselves were made durable by the transaction of the change they report. With the ledger's
 * FULL, two fsyncs per delivery held the sender to a fifth of a bare loop of POSTs (bench/RESULTS.md).
 */
export function openSenderLedger(path: string): Ledger {
  const ledger = openLedger(path);
  ledger.sqlite.pragma('synchronous = NORMAL');
  return ledger;
}

/** How often the expiry sweep's cursor is written when no order expired meanwhile. */
const CURSOR_EVERY_MS = 5 * 60_000;

export interface WorkerOptions {
  ledger: Ledger;
  now: () => number;
  /** Delays after each failed attempt, ms (default decisions §9's 15s ... 24h). */
  schedule?: readonly number[];
  allowPrivate?: boolean;
  timeoutMs?: number;
  resolver?: Resolver;
  connector?: Connector;
  /** How often the ledger is looked at for rows other processes wrote and retries come due. */
  pollMs?: number;
  /** How often unpaid orders past their expiry are looked for (order.expired within 5 s of its sweep being due). */
  sweepMs?: number;
  /**
   * The chains this process watches (serve): order.expired waits until each has been read past
   * the expiry (src/store/expiry-sweep.ts), as for chains other processes hold the lease of.
   */
  watchedChains?: readonly string[];
  /** Attempts in flight at once, in all. */
  maxInFlight?: number;
  /** Attempts in flight at once to one host:port: a slow or dead receiver holds only these. */
  perHost?: number;
  /**
   * Attempts in flight at once for one merchant, whatever its receivers: a merchant whose
   * receivers all hang holds only these (an attacker review filled all 128 with eight).
   */
  perMerchant?: number;
  /** How long a leased row is this sender's; past it another sender may take it over. */
  leaseMs?: number;
  random?: () => number;
  owner?: string;
  /** Failures of the worker itself (the ledger busy); never a secret. */
  log?: (line: string) => void;
  /**
   * Take the rows that this process writes to this ledger file straight from their transaction,
   * leased to this sender (default true): the first attempt then follows the commit at once.
   */
  handoff?: boolean;
  /** Each attempt as it is recorded (for serve's log line, tests and the bench). */
  onAttempt?: (row: CallbackRow, result: DeliveryResult, status: CallbackStatus) => void;
  /**
   * serve: settles once what the ledger's own connection committed is on disk (it fsyncs after
   * COMMIT, off the event loop). An event read before then is not sent before then: a callback
   * must never announce a change a power cut could still take back.
   */
  durable?: () => Promise<void> | undefined;
}

export interface AttemptReport extends DeliveryResult {
  id: string;
  status: CallbackStatus;
}

/**
 * The sender of the outbox (decisions §9, issue #13): runs in `serve` and in `cryptopay
 * callbacks run`. It leases due rows (one process per attempt), sends each outside any
 * transaction, and records the attempt. Bounded in flight in all and per host, so a receiver
 * that hangs holds only its own slots, each for at most the timeout.
 */
export class CallbackWorker {
  private readonly o: Required<Omit<WorkerOptions, 'resolver' | 'connector' | 'log' | 'onAttempt' | 'durable'>> & Pick<WorkerOptions, 'resolver' | 'connector' | 'log' | 'onAttempt' | 'durable'>;
  private stopHandoff: (() => void) | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perHostNow = new Map<string, number>();
  private readonly perMerchantNow = new Map<string, number>();
  /** Attempts waiting for their receiver (inFlight also holds those being recorded). */
  private sending = 0;
  /** The tick under way, and writes not tied to an attempt: stop() waits for both. */
  private current: Promise<void> = Promise.resolve();
  private readonly background = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private ticking = false;
  private again = false;
  private lastSweep = -Infinity;
  /** The last claim got all it asked for: more are likely due, so the next skips the read that asks. */
  private moreDue = false;
  private cursorWritten = -Infinity;

  constructor(opts: WorkerOptions) {
    this.o = {
      schedule: parseSchedule(DEFAULT_SCHEDULE),
      allowPrivate: false,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      pollMs: 500,
      sweepMs: 1000,
      watchedChains: [],
      maxInFlight: 128,
      perHost: 16,
      perMerchant: 32,
      leaseMs: 60_000,
      random: Math.random,
      handoff: true,
      owner: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
      ...opts,
    };
    // A lease must outlive the attempt, or a second sender could take a row still being sent.
    if (this.o.leaseMs <= this.o.timeoutMs) this.o.leaseMs = this.o.timeoutMs * 2;
  }

  get owner(): string {
    return this.o.owner;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = onOutboxWrite(() => this.wake());
    if (this.o.handoff && this.o.ledger.path !== ':memory:') {
      this.stopHandoff = takeNewRows(this.o.ledger.path, { owner: this.o.owner, leaseMs: this.o.leaseMs, take: (ids) => this.take(ids) });
    }
    this.timer = setInterval(() => this.wake(), this.o.pollMs);
    this.wake();
  }

  /** Stops leasing; resolves when the attempts in flight are recorded (each ends within the timeout). */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.stopHandoff?.();
    // The ledger may be closed once this resolves: nothing of ours may still be queued on it.
    while (this.inFlight.size || this.background.size || this.ticking) {
      await Promise.allSettled([...this.inFlight.values(), ...this.background, this.current]);
    }
  }

  /** Looks for work now (a row was written in this process, or a slot came free). */
  wake(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    this.current = this.tick().finally(() => {
      this.ticking = false;
      if (this.again) {
        this.again = false;
        setImmediate(() => this.wake());
      }
    });
  }

  /**
   * Rows a transaction of this process wrote leased to us, now committed: sent at once, as
   * capacity allows; the rest are given back to the poll (their lease cleared).
   */
  private take(ids: string[]): void {
    let rows: CallbackRow[];
    try {
      rows = handedRows(this.o.ledger.db, ids, this.o.owner);
    } catch (e) {
      this.o.log?.(`callbacks: ${(e as Error).message}; the poll will find them`);
      return;
    }
    const back: string[] = [];
    for (const row of rows) {
      if (this.running && this.sending < this.o.maxInFlight && (this.perHostNow.get(row.host) ?? 0) < this.o.perHost && (this.perMerchantNow.get(row.merchantId) ?? 0) < this.o.perMerchant) this.track(row);
      else back.push(row.id);
    }
    if (back.length) {
      const released = this.write(() => releaseLeases(this.o.ledger.db, this.o.owner, back)).then(
        () => this.wake(),
        (e: unknown) => this.o.log?.(`callbacks: ${(e as Error).message}`),
      );
      this.background.add(released);
      void released.finally(() => this.background.delete(released));
    }
  }

  private write<T>(fn: () => T): Promise<T> {
    return groupCommit(this.o.ledger.sqlite).submit(fn);
  }

  private async tick(): Promise<void> {
    try {
      const now = this.o.now();
      const db = this.o.ledger.db;
      if (now - this.lastSweep >= this.o.sweepMs) {
        this.lastSweep = now;
        // The cursor is written at least every few minutes, so a restart looks back no further.
        const watched = this.o.watchedChains;
        if (expiryDue(db, now, watched) || now - this.cursorWritten >= CURSOR_EVERY_MS) {
          this.cursorWritten = now;
          await this.write(() => sweepExpired(db, now, { watched }));
        }
      }
      const room = this.o.maxInFlight - this.sending;
      if (room <= 0 || !this.running) return;
      if (!this.moreDue && !deliveryDue(db, this.o.now(), busyHosts(this.perHostNow, this.o.perHost))) return;
      // Each row's merchant secret is read in the claim's transaction (inside a transaction a
      // read costs a fraction of one on its own), a moment before the row is signed and sent.
      const claimed = await this.write(() =>
        claimDue(db, {
          now: this.o.now(), owner: this.o.owner, leaseMs: this.o.leaseMs, limit: room, perHost: this.o.perHost, inFlight: this.perHostNow,
          perMerchant: this.o.perMerchant, merchantsInFlight: this.perMerchantNow,
        })
          .map((row) => ({ row, secret: merchantSecret(db, row.merchantId) ?? null })),
      );
      this.moreDue = claimed.length === room;
      if (!this.running) {
        await this.write(() => releaseLeases(db, this.o.owner, claimed.map((c) => c.row.id)));
        return;
      }
      for (const { row, secret } of claimed) this.track(row, secret);
    } catch (e) {
      this.o.log?.(`callbacks: ${(e as Error).message}; trying again`);
    }
  }

  /** `secret`: the merchant's, read with the lease (null: the merchant is gone); else read now. */
  private track(row: CallbackRow, secret?: string | null): Promise<AttemptReport> {
    this.sending++;
    this.perHostNow.set(row.host, (this.perHostNow.get(row.host) ?? 0) + 1);
    this.perMerchantNow.set(row.merchantId, (this.perMerchantNow.get(row.merchantId) ?? 0) + 1);
    let freed = false;
    // The slot is the receiver's: it is free as soon as the answer is in, and the next due row
    // is leased in the same turn as this attempt is recorded, so both share one commit.
    const free = () => {
      if (freed) return;
      freed = true;
      this.sending--;
      const n = (this.perHostNow.get(row.host) ?? 1) - 1;
      if (n > 0) this.perHostNow.set(row.host, n);
      else this.perHostNow.delete(row.host);
      const m = (this.perMerchantNow.get(row.merchantId) ?? 1) - 1;
      if (m > 0) this.perMerchantNow.set(row.merchantId, m);
      else this.perMerchantNow.delete(row.merchantId);
      this.wake();
    };
    const attempt = this.attempt(row, free, secret);
    const done = attempt.then(
      () => undefined,
      (e: unknown) => this.o.log?.(`callbacks: ${row.id}: ${(e as Error).message}`),
    ).finally(() => {
      free();
      this.inFlight.delete(row.id);
    });
    this.inFlight.set(row.id, done);
    return attempt;
  }

  /** One attempt of a leased row, recorded. `answered` is called once the receiver has answered (or not). */
  private async attempt(row: CallbackRow, answered: () => void = () => {}, leasedWith?: string | null): Promise<AttemptReport> {
    const durable = this.o.durable?.();
    if (durable) await durable;
    const at = this.o.now();
    const secret = leasedWith === undefined ? merchantSecret(this.o.ledger.db, row.merchantId) : leasedWith;
    let result: DeliveryResult;
    if (!secret) {
      result = { statusCode: null, latencyMs: 0, error: `merchant ${row.merchantId} no longer exists` };
    } else {
      try {
        // Signed now, with the merchant's current secret (read with this attempt's lease at the
        // earliest): a rotated secret applies to retries too.
        const body = JSON.stringify(signedEventBody(JSON.parse(row.payload) as EventFields, row.merchantId, secret, at));
        result = await deliver(row.url, body, {
          allowPrivate: this.o.allowPrivate, timeoutMs: this.o.timeoutMs, resolver: this.o.resolver, connector: this.o.connector,
        });
      } catch (e) {
        // Whatever kept it from being sent is this attempt's failure, recorded on the schedule: a
        // throw here used to leave the row leased and due again for ever (an outside review).
        result = { statusCode: null, latencyMs: 0, error: `not sent: ${(e as Error).message}` };
      }
    }
    const recorded = this.write(() =>
      recordAttempt(this.o.ledger.db, { id: row.id, owner: this.o.owner, at, ...result }, (step) => retryDelay(this.o.schedule, step, this.o.random)),
    );
    answered();
    const status = await recorded;
    this.o.onAttempt?.(row, result, status);
    return { id: row.id, status, ...result };
  }

  /**
   * An operator's resend (`callbacks resend`): a new attempt now, same eventId, with the whole
   * schedule ahead of it should it fail. Works whether or not the worker runs.
   */
  async resend(id: string, mchId?: string): Promise<AttemptReport> {
    // This process's own guard is asked first: a refusal of its making is not the receiver's
    // failure, and recorded as one it put a delivered event back to pending, for serve (which
    // may allow the address) to send again (an operator review).
    const { url } = findCallback(this.o.ledger.db, id, mchId);
    try {
      await allowedAddress(new URL(url).hostname, { allowPrivate: this.o.allowPrivate, resolver: this.o.resolver });
    } catch (e) {
      if (e instanceof InwardRefusal) {
        throw invalid(`${e.reason}: this command sends from this process, which sends no callback to loopback, private, link-local or reserved addresses; give it --allow-private-callbacks (development). Nothing was changed.`);
      }
      // A name that does not resolve now is the receiver's side: the attempt records it.
    }
    const row = await this.write(() => leaseForResend(this.o.ledger.db, id, { now: this.o.now(), owner: this.o.owner, leaseMs: this.o.leaseMs, mchId }));
    return this.track(row);
  }
}
