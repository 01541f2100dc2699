import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv } from '../helpers/cli.js';
import { CLEAN_ENV, SLOW, withMerchant } from './_support.js';

/** Issue #15 item 5: a reader that stops early (`| head -1`) is not an error of the CLI. */
describe('pipes', { timeout: SLOW }, () => {
  it('order list | head -1 prints one line and exits quietly: no EPIPE stack trace', async () => {
    const s = await withMerchant();
    // Enough rows that the table is still being written when head has gone.
    await s.json(['order', 'create', '--oid', 'P-0', '--uid', 'u', '--amount', '1']);
    const sqlite = (await import('better-sqlite3')).default;
    const db = new sqlite(s.db);
    try {
      const row = db.prepare("select * from orders where oid = 'P-0'").get() as Record<string, unknown>;
      const insert = db.prepare(`insert into orders (${Object.keys(row).join(', ')}) values (${Object.keys(row).map((k) => `@${k}`).join(', ')})`);
      db.transaction(() => {
        for (let i = 1; i < 1000; i++) insert.run({ ...row, id: `ord_pipe${String(i).padStart(20, '0')}`, oid: `P-${i}` });
      })();
    } finally {
      db.close();
    }
    const r = spawnSync('sh', ['-c', `"${BIN}" --db "${s.db}" order list --limit 1000 | head -1`], {
      env: cliEnv(CLEAN_ENV), encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    // The header row, then head closes the pipe while 1000 rows are still to come.
    expect(r.stdout).toBe('id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires\n');
    expect(r.stdout).not.toMatch(/EPIPE|node:events|Unhandled/);
  });
});
