import { connect, type Socket } from 'node:net';

/**
 * Raw HTTP/1.1 over node:net, for what fetch will not do: pipelined or malformed requests,
 * bodies that trickle in, connections held open.
 */

export interface RawResponse {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export interface RawExchange {
  /** Every byte the server sent. */
  raw: string;
  responses: RawResponse[];
  /** Milliseconds from the connection to the server closing it, or undefined if it did not within the wait. */
  closedAfterMs: number | undefined;
}

/** Splits what a server sent on one connection into its responses (Content-Length framed). */
export function parseResponses(raw: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = Buffer.from(raw, 'latin1');
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`an incomplete response head: ${JSON.stringify(rest.toString('latin1'))}`);
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const body = rest.subarray(end + 4, end + 4 + length).toString('utf8');
    rest = rest.subarray(end + 4 + length);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    out.push({ statusLine: statusLine!, status: Number(statusLine!.split(' ')[1]), headers, body, json });
  }
  return out;
}

/** Connects to the server of `url`; resolves once connected. */
export function open(url: string, localAddress?: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(u.port), host: u.hostname, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Writes each part (a pause of `gapMs` between parts), then waits until the server closes the
 * connection or `waitMs` passes (then closes it itself), and returns what came back.
 */
export async function exchange(url: string, parts: (string | Buffer)[], opts: { gapMs?: number; waitMs?: number } = {}): Promise<RawExchange> {
  const start = Date.now();
  const socket = await open(url);
  let raw = '';
  let closedAfterMs: number | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (raw += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('end', () => (closedAfterMs ??= Date.now() - start));
  for (const [i, p] of parts.entries()) {
    if (socket.destroyed) break;
    if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
    socket.write(p);
  }
  const timer = new Promise<void>((resolve) => setTimeout(resolve, opts.waitMs ?? 5_000).unref());
  await Promise.race([closed, timer]);
  if (closedAfterMs === undefined && socket.destroyed) closedAfterMs = Date.now() - start;
  socket.destroy();
  return { raw, responses: parseResponses(raw), closedAfterMs };
}

/** The answer to one request on its own connection (`Connection: close` is the caller's to send). */
export async function one(url: string, request: string, waitMs = 5_000): Promise<RawResponse[]> {
  return (await exchange(url, [request], { waitMs })).responses;
}
