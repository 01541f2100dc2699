import { createSocket, type Socket } from 'node:dgram';

/**
 * A DNS server on 127.0.0.1 (UDP) for resolver tests: answers A queries from `names`, an empty
 * answer for a known name's other types, NXDOMAIN for any other name; or, `silent`, nothing at
 * all (a name server that never answers). Counts the queries it got. Stopped by the test.
 */
export interface DnsServer {
  /** host:port, as Resolver.setServers takes it. */
  address: string;
  queries: string[];
  close(): Promise<void>;
}

export async function startDnsServer(opts: { names?: Record<string, string>; silent?: boolean } = {}): Promise<DnsServer> {
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (msg, from) => {
    const labels: string[] = [];
    let at = 12;
    while (msg[at]! > 0) {
      labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString('ascii'));
      at += 1 + msg[at]!;
    }
    const question = msg.subarray(12, at + 5);
    const type = msg.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    queries.push(`${name}/${type}`);
    if (opts.silent) return;
    const address = opts.names?.[name];
    const answers = address !== undefined && type === 1 ? [Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address.split('.').map(Number)])] : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(address === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, question, ...answers]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
