import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { App } from './app.js';

/**
 * How long a client may hold the server and how many may hold it at once (issue #10 item 7):
 * without them one client keeps thousands of idle sockets open, or a body trickling in one
 * byte at a time keeps a request open for minutes.
 */
export interface HttpLimits {
  /** From the connection (or the end of the previous request) to the end of the headers. */
  headersTimeoutMs: number;
  /** From the connection (or the previous request) to the end of the whole request, body included. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long (Node adds 1 s of grace). */
  keepAliveTimeoutMs: number;
  /** Open connections served at once; one more is answered 503 and closed. */
  maxConnections: number;
  /**
   * Open connections of one client address (an IPv6 /64 counts as one) served at once, so that
   * one client cannot take the whole cap; 0 for none (behind a proxy every client is its address).
   */
  maxConnectionsPerClient: number;
  /** How often Node looks for requests past their time: a timeout fires at most this late. */
  checkIntervalMs: number;
}

/** The limits `cryptopay serve` runs with (docs/operations.md says why these values). */
export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  maxConnectionsPerClient: 100,
  checkIntervalMs: 1_000,
});

/** How long a connection we are closing may linger for its peer to read our answer. */
const LINGER_MS = 2_000;
/**
 * Connections past the cap are held only while they get their 503; past this many more Node
 * drops them unanswered, so a flood cannot use descriptors while being refused.
 */
const REFUSING_AT_ONCE = 64;

/** The one file that opens a socket. */
export interface Listening {
  url: string;
  port: number;
  /** The limits the socket server actually runs with. */
  limits: HttpLimits;
  /** Stop accepting, let in-flight requests finish, then resolve. */
  close(): Promise<void>;
}

export function listen(app: App, host: string, port: number, limits: Partial<HttpLimits> = {}): Promise<Listening> {
  const l: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...limits };
  /**
   * The latest response of each connection: what a later refusal must wait for while it is not
   * finished (judged when the refusal comes, rather than by a 'finish' listener per request).
   */
  const latest = new WeakMap<Socket, ServerResponse>();
  const inFlight = (socket: Socket): ServerResponse | undefined => {
    const res = latest.get(socket);
    return res && !res.writableFinished ? res : undefined;
  };
  const refused = new WeakSet<Socket>();
  const answeredError = new WeakSet<Socket>();
  let open = 0;
  /** Open connections by client (clientKey), while it has any. */
  const perClient = new Map<string, number>();

  /** A refusal written straight onto the socket, then the connection closed. */
  const writeRaw = (socket: Socket, status: number, msg: string, extra: Record<string, string> = {}) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const a = app.refusal(status, msg, { ...extra, Connection: 'close' });
    app.logRefusal(status);
    const head = Object.entries({ ...a.headers, 'Content-Length': String(Buffer.byteLength(a.body)) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${a.body}`);
    linger(socket);
  };

  /** Our answer on a request's own response, closing the connection after it. */
  const answerOn = (res: ServerResponse, status: number, msg: string, extra: Record<string, string> = {}) => {
    const a = app.refusal(status, msg, { ...extra, Connection: 'close' });
    res.writeHead(a.status, { ...a.headers, 'Content-Length': Buffer.byteLength(a.body) }).end(a.body);
    linger(res.socket);
  };

  const track = (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, res);
  };

  const server = createServer(
    {
      headersTimeout: l.headersTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      keepAliveTimeout: l.keepAliveTimeoutMs,
      connectionsCheckingInterval: l.checkIntervalMs,
      // The app answers a missing Host itself, in the envelope (Node's own answer has no body).
      requireHostHeader: false,
    },
    (req, res) => {
      if (refused.has(req.socket)) return;
      track(req, res);
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        app.logRefusal(400, req.method, pathOf(req.url));
        answerOn(res, 400, 'the Host header is required in HTTP/1.1');
        return;
      }
      app.listener(req, res);
    },
  );
  server.maxConnections = l.maxConnections + REFUSING_AT_ONCE;

  // Node answers an Expect it does not meet with a bare 417; 100-continue is still met by Node.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    track(req, res);
    app.logRefusal(417, req.method, pathOf(req.url));
    answerOn(res, 417, `Expect: ${String(req.headers.expect).slice(0, 64)} is not supported (only 100-continue)`);
  });

  // Node drops a CONNECT it has no listener for without a word; it is a method we do not take.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    writeRaw(socket, 405, 'CONNECT is not allowed: this is not a proxy');
  });

  // Runs before Node's own connection listener: a connection past the cap never reaches the app.
  server.prependListener('connection', (socket: Socket) => {
    const refuse = (msg: string) => {
      refused.add(socket);
      socket.on('error', () => socket.destroy());
      writeRaw(socket, 503, msg, { 'Retry-After': '1' });
    };
    if (open >= l.maxConnections) {
      refuse(`the server has ${l.maxConnections} open connections, its limit; retry shortly`);
      return;
    }
    const client = l.maxConnectionsPerClient > 0 ? clientKey(socket.remoteAddress ?? '') : undefined;
    if (client !== undefined) {
      const n = perClient.get(client) ?? 0;
      if (n >= l.maxConnectionsPerClient) {
        const cap = l.maxConnectionsPerClient;
        refuse(`this client address has reached its limit of ${cap} open connection${cap === 1 ? '' : 's'}; close some or retry shortly`);
        return;
      }
      perClient.set(client, n + 1);
    }
    open++;
    socket.once('close', () => {
      open--;
      if (client === undefined) return;
      const n = perClient.get(client)! - 1;
      if (n === 0) perClient.delete(client);
      else perClient.set(client, n);
    });
  });

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A parser in error answers every later chunk with the same error: answer once.
    if (answeredError.has(socket) || refused.has(socket)) return;
    answeredError.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, msg] = clientErrorAnswer(err);
    const res = inFlight(socket);
    if (!res) {
      writeRaw(socket, status, msg);
    } else if (!res.req.complete) {
      // The fault is in this request's own body (a bad chunk, a body too slow): it gets the answer.
      if (!res.headersSent) answerOn(res, status, msg);
      else {
        // The app answered before reading the whole body (a 413): let that answer out, then close.
        res.once('finish', () => {
          socket.end();
          linger(socket);
        });
      }
    } else {
      // Earlier requests were whole and are owed their answers first (pipelining): the order
      // they created must not lose its answer to the garbage that followed.
      res.once('finish', () => writeRaw(socket, status, msg));
    }
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // Accept errors after the start (out of descriptors) must not end the process.
      server.on('error', () => {});
      const info = server.address() as AddressInfo;
      const shownHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        port: info.port,
        limits: {
          headersTimeoutMs: server.headersTimeout,
          requestTimeoutMs: server.requestTimeout,
          keepAliveTimeoutMs: server.keepAliveTimeout,
          maxConnections: l.maxConnections,
          maxConnectionsPerClient: l.maxConnectionsPerClient,
          checkIntervalMs: l.checkIntervalMs,
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/**
 * Who a connection counts against for the per-client cap: its IPv4 address (an IPv4-mapped IPv6
 * one as that IPv4), or the /64 of its IPv6 address: one subscriber or host usually has a whole
 * /64, so counting single IPv6 addresses would let one client open a connection from each.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0]!.toLowerCase();
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  // With "::", the groups it stands for are zeros; only the first four groups matter.
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
}

/** The path of a request for the access log: no query (it may carry anything), at most 200 characters. */
function pathOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0]!;
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** Lets the peer read what we wrote, but not hold the descriptor for long. */
function linger(socket: Socket | null): void {
  if (!socket) return;
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** What a request Node refused before the app saw it is answered (decisions §7: always the envelope). */
function clientErrorAnswer(err: NodeJS.ErrnoException): [number, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request line and headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request took too long to arrive'];
    default:
      return [400, 'malformed HTTP request'];
  }
}
