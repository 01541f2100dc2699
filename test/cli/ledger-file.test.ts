import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox, SLOW } from './_support.js';

const mode = (p: string) => statSync(p).mode & 0o777;

describe.concurrent('the ledger file', { timeout: SLOW }, () => {
  it('is created with mode 0600, its missing directories created, by --db', async () => {
    const s = sandbox();
    const db = join(s.dir, 'deep', 'er', 'ledger.db');
    const r = await s.bare(['--db', db, 'merchant', 'add', '--name', 'S', '--generate-wallet']);
    expect(r).toMatchObject({ code: 0 });
    expect(mode(db)).toBe(0o600);
    // Nobody else may even list the folder that holds merchant secrets.
    expect(mode(join(s.dir, 'deep', 'er')) & 0o077).toBe(0);
  });

  it('is CRYPTOPAY_DB when there is no --db, and --db wins over CRYPTOPAY_DB', async () => {
    const s = sandbox();
    const fromEnv = join(s.dir, 'env', 'ledger.db');
    const fromFlag = join(s.dir, 'flag', 'ledger.db');
    const viaEnv = await s.bare(['merchant', 'add', '--name', 'EnvShop', '--generate-wallet', '--json'], { env: { CRYPTOPAY_DB: fromEnv } });
    expect(viaEnv.code).toBe(0);
    expect(mode(fromEnv)).toBe(0o600);

    const [listEnv, listFlag] = await Promise.all([
      s.bare(['merchant', 'list', '--json'], { env: { CRYPTOPAY_DB: fromEnv } }),
      s.bare(['--db', fromFlag, 'merchant', 'list', '--json'], { env: { CRYPTOPAY_DB: fromEnv } }),
    ]);
    expect(JSON.parse(listEnv.stdout).map((m: { name: string }) => m.name)).toEqual(['EnvShop']);
    // --db wins: it names a ledger that does not exist, which a listing never creates.
    expect(listFlag.code).toBe(3);
    expect(listFlag.stderr).toContain(`no ledger at ${fromFlag}`);
    expect(existsSync(fromFlag)).toBe(false);
  });

  it('defaults to $XDG_DATA_HOME/cryptopay/ledger.db when neither --db nor CRYPTOPAY_DB is given', async () => {
    const s = sandbox();
    const xdg = join(s.dir, 'data-home');
    const expected = join(xdg, 'cryptopay', 'ledger.db');
    expect(existsSync(expected)).toBe(false);
    const add = await s.bare(['merchant', 'add', '--name', 'XdgShop', '--generate-wallet'], { env: { XDG_DATA_HOME: xdg } });
    expect(add.code).toBe(0);
    expect(mode(expected)).toBe(0o600);
    const list = await s.bare(['--json', 'merchant', 'list'], { env: { XDG_DATA_HOME: xdg } });
    expect(JSON.parse(list.stdout).map((m: { name: string }) => m.name)).toEqual(['XdgShop']);
  });

  it('that is a directory: exit 3, and stderr says the ledger cannot be opened and where', async () => {
    const s = sandbox();
    const dir = join(s.dir, 'a-folder');
    mkdirSync(dir);
    const r = await s.bare(['--db', dir, 'order', 'list']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('cannot open the ledger');
    expect(r.stderr).toContain(dir);
  });

  it('that is not SQLite: exit 3 with a clear message (plain and --json), and the file is left untouched', async () => {
    const s = sandbox();
    const file = join(s.dir, 'notes.txt');
    const content = `my shopping list, not a database\n${'milk, eggs, bread\n'.repeat(300)}`;
    writeFileSync(file, content, { mode: 0o600 });
    const [plain, json] = await Promise.all([
      s.bare(['--db', file, 'merchant', 'list']),
      s.bare(['--db', file, '--json', 'order', 'status', 'ord_x']),
    ]);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(/cannot open the ledger at .*notes\.txt: file is not a database/);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).error).toMatchObject({ kind: 'unavailable', message: expect.stringContaining('not a database') });
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it('whose directory cannot be created: exit 3', async () => {
    const s = sandbox();
    const blocker = join(s.dir, 'blocker');
    writeFileSync(blocker, 'a file where a folder should be');
    const r = await s.bare(['--db', join(blocker, 'ledger.db'), 'merchant', 'add', '--name', 'S', '--generate-wallet']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cannot open the ledger');
  });
});
