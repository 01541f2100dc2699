import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on, for "the remote is down" tests. Not one the kernel
 * hands out for port 0 (32768-60999 on Linux): a port released after such a bind could be given
 * at once to a serve, an anvil or a test server of another test file running alongside, which
 * would then answer. Below that range, port-0 listeners never land, and 20000-31999 holds none
 * of the ports browsers block (the highest is 10080), which the CLI refuses before connecting.
 */
export async function closedPort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
    if (tries > 100) throw new Error('no closed port found in 20000-31999');
  }
}
