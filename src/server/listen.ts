import { createServer, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { App } from './app.js';

/** The one file that opens a socket. */
export interface Listening {
  url: string;
  port: number;
  /** Stop accepting, let in-flight requests finish, then resolve. */
  close(): Promise<void>;
}

export function listen(app: App, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = createServer(app.listener);
    server.keepAliveTimeout = 5_000;
    server.on('clientError', answerClientError);
    server.once('error', reject);
    server.listen(port, host, () => {
      const info = server.address() as AddressInfo;
      const shownHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        port: info.port,
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
 * A request Node refuses before the app sees it (malformed HTTP, headers over Node's limit)
 * still gets the envelope of decisions §7 instead of Node's bare status line.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, msg] =
    err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'the request line and headers are too large']
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'the request took too long to arrive']
    : [400, 'malformed HTTP request'];
  const body = JSON.stringify({ code: 0, msg, data: null, systemTime: Date.now() });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
