/**
 * The real CLI with its code cache (src/code-cache.ts) in $XDG_CACHE_HOME: a command run with no
 * cache, with the entries its first run wrote, with every entry corrupt, or with a cache folder
 * that cannot be made, prints the same thing.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, SLOW } from './_support.js';

function entriesUnder(root: string): string[] {
  const code = join(root, 'cryptopay', 'code');
  return readdirSync(code).flatMap((d) => readdirSync(join(code, d)).map((f) => join(code, d, f)));
}

describe('code cache', { timeout: SLOW }, () => {
  it('order status and --help give the same output cold, warm and with every entry corrupt; nothing is written where it cannot be', async () => {
    const s = sandbox();
    const cache = join(s.dir, 'cache');
    const env = { XDG_CACHE_HOME: cache };
    await s.json(['merchant', 'add', '--name', 'Shop', '--generate-wallet'], { env });
    const order = await s.json(['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '1'], { env });

    const status = () => s.run(['order', 'status', 'A-1'], { env });
    const help = () => s.run(['--help'], { env });
    const cold = [await status(), await help()];
    expect(cold[0]).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(cold[1]).toMatchObject({ code: 0, stderr: '' });
    expect(cold[1].stdout).toMatch(/^Usage: cryptopay/);
    const entries = entriesUnder(cache);
    expect(entries.some((e) => e.endsWith('/main.cjs.v8'))).toBe(true);
    for (const e of entries) expect(statSync(e).mode & 0o777).toBe(0o600);

    // Warm: the entries are used, not written again.
    const written = new Map(entries.map((e) => [e, statSync(e).mtimeMs]));
    expect([await status(), await help()]).toEqual(cold);
    for (const [e, t] of written) expect(statSync(e).mtimeMs, e).toBe(t);

    for (const e of entries) {
      const data = readFileSync(e);
      data[data.length >> 1] ^= 0x55;
      writeFileSync(e, data);
    }
    expect([await status(), await help()]).toEqual(cold);
    expect((await s.json(['order', 'status', order.id], { env })).status).toBe('PENDING_PAY');

    // A file where the cache folder would go: the command runs as without a cache.
    const blocked = { XDG_CACHE_HOME: join(s.dir, 'ledger.db') };
    expect([await s.run(['order', 'status', 'A-1'], { env: blocked }), await s.run(['--help'], { env: blocked })]).toEqual(cold);
    expect(statSync(join(s.dir, 'ledger.db')).isFile()).toBe(true);
  });
});
