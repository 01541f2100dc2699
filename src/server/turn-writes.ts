/**
 * The answers of one turn of the event loop, written to their sockets together at its end
 * (flush consolidation, as Netty's FlushConsolidationHandler does; issue #16).
 *
 * Why: on this kind of machine (a virtual machine, loopback or a LAN), the costliest part of an
 * answer is not ours but the wake-up of the client's thread that its bytes cause: a client
 * asleep in epoll is woken by an interrupt sent to its core, charged to the writer's system
 * call. Written one by one as each is made, ~35 µs apart, nearly every answer found the client
 * asleep again and paid that wake-up: perf showed 14 µs a request of serve's status GET in
 * `sock_def_readable`'s unlock alone, against 4 µs for a server answering the same bytes at
 * once. Written back to back at the end of the turn, one wake-up serves many answers: the
 * status GET used 0.53-0.70x the CPU a request and answered 1.28-1.9x the requests a second
 * (A/B runs against the build before), p99 lower (bench/CHANGES.md, twenty-fifth round).
 *
 * What it costs: an answer waits for the rest of its turn's synchronous work (the other requests
 * read in the same turn), and never for I/O: pending immediates keep libuv's poll from blocking.
 * At most `limit` answers wait at once: past it they are written at once, so a burst of many
 * connections (or a pipelining client) does not hold the first answer behind hundreds of others.
 * The order of the writes is the order the answers were made, so the answers pipelined on one
 * connection keep theirs (Node queues each behind the one before it anyway).
 */
export interface TurnWrites {
  /** Runs `write` at the end of this turn (or at once when `limit` writes already wait). It must not throw. */
  later(write: () => void): void;
}

export function turnWrites(limit = 64): TurnWrites {
  let waiting: Array<() => void> = [];
  let scheduled = false;
  const flush = () => {
    const writes = waiting;
    waiting = [];
    for (const write of writes) write();
  };
  const atTurnEnd = () => {
    scheduled = false;
    flush();
  };
  return {
    later(write) {
      waiting.push(write);
      if (waiting.length >= limit) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(atTurnEnd);
      }
    },
  };
}
