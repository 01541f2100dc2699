import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * An async request handler for a test's own server (a node, a proxy): node:http does not await
 * the handler, so a failure in it (the client gone mid-body, the node behind a proxy resetting
 * its connection as a test stops it) was an unhandled rejection, which fails the whole vitest run
 * whatever the tests said (seen once in a full run under load: the proxy's fetch to anvil got
 * ECONNRESET). Here such a failure cuts this connection, as a failing node does; the client under
 * test sees that, and the run goes on.
 */
export function handler(fn: (req: IncomingMessage, res: ServerResponse) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    fn(req, res).catch(() => req.socket.destroy());
  };
}
