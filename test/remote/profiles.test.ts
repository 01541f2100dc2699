/**
 * Remote profiles: `cryptopay profile add|list|use|remove`, kept in
 * $XDG_CONFIG_HOME/cryptopay/config.json with mode 0600. With an active profile every operation
 * goes to its remote with no flags; an explicit --db still means the local ledger. A config or
 * secret file that others can read is refused, never used.
 *
 * The steps of the first block build on each other (one user's session), so they run in order.
 */
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMerchant, closedPort, home, pathIn, serve, stopAll, tiny, type Home, type Merchant, type Served } from './_support.js';

afterAll(stopAll);

const mode = (p: string) => statSync(p).mode & 0o777;
const posts = (s: Served) => (s.stdout().match(/ POST \/api\/v1\/order 200 /g) ?? []).length;

describe('a session with profiles', () => {
  let h: Home;
  let m: Merchant;
  let server: Served;
  /** A second, local ledger for --db. */
  let localDb: string;
  let remoteOrder: string;
  /** A profile whose remote is down. */
  let downUrl: string;

  beforeAll(async () => {
    h = home();
    localDb = pathIn(h, 'local', 'ledger.db');
    [m] = await Promise.all([addMerchant(h), h.json(['--db', localDb, 'merchant', 'add', '--name', 'Local shop', '--generate-wallet'])]);
    server = await serve(h);
  });

  it('profile add prod --remote URL --mch-id M --use, secret from CRYPTOPAY_SECRET: config.json 0600 in a 0700 folder', async () => {
    const r = await h.cli(['profile', 'add', 'prod', '--remote', server.url, '--mch-id', m.mchId, '--use'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`profile prod saved in ${h.configFile}\n`);
    expect(r.stderr).toBe(
      `checked: ${server.url} accepts the credentials of ${m.mchId} (Shop)\nactive: operations now go to ${server.url}; \`cryptopay profile use --none\` returns to the local ledger\n`,
    );
    expect(mode(h.configFile)).toBe(0o600);
    expect(mode(h.configDir)).toBe(0o700);
    const config = JSON.parse(readFileSync(h.configFile, 'utf8'));
    expect(config).toEqual({ active: 'prod', profiles: { prod: { remote: server.url, mchId: m.mchId, secret: m.secret } } });
  });

  // Found by an integrator review: with the profile active, sign said "no merchant secret" and
  // listen asked for a local ledger, so the secret had to be exported again.
  it('sign and sign verify take the active profile\'s secret (and sign --fill its mchId); the body signed is accepted by the remote', async () => {
    const signed = await h.cli(['sign', '--fill', 'op=summary']);
    expect(signed.code, signed.stderr).toBe(0);
    expect(JSON.parse(signed.stdout)).toMatchObject({ op: 'summary', mchId: m.mchId });
    expect(signed.stderr).toBe('note: signed with the secret of profile prod\n');
    expect(signed.stdout + signed.stderr).not.toContain(m.secret);
    const res = await fetch(`${server.url}/api/v1/summary`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: signed.stdout });
    expect(await res.json()).toMatchObject({ code: 1, data: { mchId: m.mchId } });
    const verified = await h.cli(['sign', 'verify', '--body', signed.stdout.trim()]);
    expect(verified, verified.stderr).toMatchObject({ code: 0, stdout: 'signature valid\n' });
    // CRYPTOPAY_SECRET still comes first: another secret's signature does not verify.
    const other = await h.cli(['sign', 'verify', '--body', signed.stdout.trim()], { env: { CRYPTOPAY_SECRET: 'sk_another' } });
    expect(other.code).toBe(1);
  });

  it('profile list shows it, active, without the secret (plain and --json)', async () => {
    const [plain, json] = await Promise.all([h.cli(['profile', 'list']), h.cli(['--json', 'profile', 'list'])]);
    expect(plain).toEqual({ code: 0, stdout: `active\tname\tremote\tmchId\tsecret\ttimeout\n*\tprod\t${server.url}\t${m.mchId}\tstored\t-\n`, stderr: '' });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([{ name: 'prod', active: true, remote: server.url, mchId: m.mchId, secret: 'stored', timeout: null }]);
    expect(plain.stdout + json.stdout).not.toContain(m.secret);
  });

  it('operations then go to the remote with no flags at all', async () => {
    const before = posts(server);
    const created = await h.cli(['--json', 'order', 'create', '--oid', 'P-1', '--uid', 'u1', '--amount', '3']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    remoteOrder = JSON.parse(created.stdout).id;
    const status = await h.cli(['order', 'status', remoteOrder]);
    expect(status).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(posts(server)).toBe(before + 1);
    expect(server.stdout()).toContain(`GET /api/v1/order/${remoteOrder}/status 200`);
    // The order is on the server's ledger, and no default local ledger was made.
    const onServer = await h.json(['--db', h.db, 'order', 'list']);
    expect(onServer.map((o: { id: string }) => o.id)).toEqual([remoteOrder]);
    expect(existsSync(h.defaultLedger)).toBe(false);
  });

  it('an empty CRYPTOPAY_REMOTE or CRYPTOPAY_MCH_ID counts as unset: the profile still applies', async () => {
    const empty = { CRYPTOPAY_REMOTE: '', CRYPTOPAY_MCH_ID: '' };
    const [status, refund, create] = await Promise.all([
      h.cliExact(['order', 'status', remoteOrder], empty),
      // Refused by the remote (not paid), not refused as "needs a local ledger".
      h.cliExact(['refund', '--id', remoteOrder, '--amount', '1', '--yes'], empty),
      h.cliExact(['--json', 'order', 'create', '--oid', 'P-E', '--uid', 'u1', '--amount', '1'], empty),
    ]);
    expect(status).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(refund).toEqual({ code: 1, stdout: '', stderr: 'error: order status is not Paid (it is PENDING_PAY)\n' });
    expect(create).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(create.stdout)).toMatchObject({ oid: 'P-E' });
    expect(server.stdout()).toContain('POST /api/v1/refund 409');
    expect(existsSync(h.defaultLedger)).toBe(false);
  });

  it('an explicit --db still means the local ledger', async () => {
    const before = posts(server);
    const [created, merchants] = await Promise.all([
      h.cli(['--db', localDb, '--json', 'order', 'create', '--oid', 'L-1', '--uid', 'u1', '--amount', '4']),
      h.cli(['--db', localDb, '--json', 'merchant', 'list']),
    ]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(merchants.code).toBe(0);
    expect(JSON.parse(merchants.stdout).map((x: { name: string }) => x.name)).toEqual(['Local shop']);
    const local = await h.json(['--db', localDb, 'order', 'list']);
    expect(local.map((o: { oid: string }) => o.oid)).toEqual(['L-1']);
    expect(posts(server)).toBe(before);
  });

  it('an exported CRYPTOPAY_DB means the local ledger over the active profile; a flag on the line still decides; with CRYPTOPAY_REMOTE set too, nothing is guessed (exit 2)', async () => {
    const before = posts(server);
    const local = { CRYPTOPAY_DB: localDb };
    const [list, status, created, viaProfile, viaRemote] = await Promise.all([
      h.cliExact(['--json', 'order', 'list'], local),
      h.cliExact(['order', 'status', remoteOrder], local),
      h.cliExact(['--json', 'order', 'create', '--oid', 'L-2', '--uid', 'u1', '--amount', '2'], local),
      h.cliExact(['--profile', 'prod', 'order', 'status', remoteOrder], local),
      h.cliExact(['--remote', server.url, 'order', 'status', remoteOrder], { ...local, CRYPTOPAY_SECRET: m.secret }),
    ]);
    expect(list.code).toBe(0);
    // The local ledger's orders: L-1, and L-2 if the create beside it committed first.
    expect(JSON.parse(list.stdout).map((o: { oid: string }) => o.oid).filter((oid: string) => oid !== 'L-2')).toEqual(['L-1']);
    expect(status).toMatchObject({ code: 1, stdout: '' });
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(viaProfile).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(viaRemote).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect((await h.json(['--db', localDb, 'order', 'list'])).map((o: { oid: string }) => o.oid).sort()).toEqual(['L-1', 'L-2']);
    expect(posts(server)).toBe(before);

    const both = { CRYPTOPAY_DB: localDb, CRYPTOPAY_REMOTE: server.url };
    const [refused, byDb, byProfile] = await Promise.all([
      h.cliExact(['refund', '--id', remoteOrder, '--amount', '1', '--yes'], both),
      h.cliExact(['--db', localDb, '--json', 'order', 'list'], both),
      h.cliExact(['--profile', 'prod', 'order', 'status', remoteOrder], both),
    ]);
    expect(refused).toEqual({ code: 2, stdout: '', stderr: 'error: CRYPTOPAY_DB and CRYPTOPAY_REMOTE are both set: say which with --db PATH or --remote URL, or unset one\n' });
    expect(byDb.code).toBe(0);
    expect(byProfile).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    expect(await h.cli(['--db', localDb, '--profile', 'prod', 'order', 'list'])).toEqual({ code: 2, stdout: '', stderr: 'error: give either --db (local ledger) or a remote, not both\n' });
    // Making a profile active in such a shell says where operations really go.
    const use = await h.cliExact(['profile', 'use', 'prod'], local);
    expect(use).toMatchObject({ code: 0, stderr: `active profile: prod (${server.url})\nnote: CRYPTOPAY_DB is set in this shell and decides before the active profile: unset it (or pass --profile) for operations here to go to the profile\n` });
    expect((await h.cliExact(['profile', 'use', 'prod'], {})).stderr).toBe(`active profile: prod (${server.url})\n`);
    // profile add --use says the same.
    const added = await h.cliExact(['profile', 'add', 'shadowed', '--url', server.url, '--mch-id', m.mchId, '--use', '--no-check'], { ...both, CRYPTOPAY_SECRET: m.secret });
    expect(added.code).toBe(0);
    expect(added.stderr).toContain('note: CRYPTOPAY_DB and CRYPTOPAY_REMOTE are set in this shell and decide before the active profile: unset them (or pass --profile) for operations here to go to the profile\n');
    expect((await h.cliExact(['profile', 'remove', 'shadowed'], {})).code).toBe(0);
    expect((await h.cliExact(['profile', 'use', 'prod'], {})).code).toBe(0);
  });

  it('--profile NAME picks a profile that is not the active one', async () => {
    const other = (downUrl = `http://127.0.0.1:${await closedPort()}`);
    // The server is down: profile add refuses to save unchecked credentials, unless told to.
    const refused = await h.cli(['profile', 'add', 'down', '--url', other, '--mch-id', m.mchId], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(refused).toEqual({
      code: 3,
      stdout: '',
      stderr: `error: cannot reach the remote ${other}: ECONNREFUSED; the profile was not saved (--no-check saves it without asking the server)\n`,
    });
    expect(JSON.parse(readFileSync(h.configFile, 'utf8')).profiles.down).toBeUndefined();
    const add = await h.cli(['profile', 'add', 'down', '--url', other, '--mch-id', m.mchId, '--no-check'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(add).toMatchObject({
      code: 0,
      stderr: 'not checked against the server (--no-check): `cryptopay profile test` checks it\nuse it with --profile down, or make it the default with `cryptopay profile use down`\n',
    });
    const [viaOther, viaActive] = await Promise.all([h.cli(['--profile', 'down', 'order', 'status', remoteOrder]), h.cli(['order', 'status', remoteOrder])]);
    // The URL is the profile's: said, with how to save a new one (a new-user trial's profile of a
    // serve --port 0 went stale at its restart, and the message did not say whose URL it was).
    expect(viaOther).toMatchObject({
      code: 3,
      stderr: `error: cannot reach the remote ${other}, the URL profile down keeps: ECONNREFUSED; if its service moved (serve --port 0 listens on a new port each start), save the profile again with the new URL: cryptopay profile add down --url URL (this replaces the saved profile, its secret included)\n`,
    });
    expect(viaActive).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    const gone = await h.cli(['--profile', 'nope', 'order', 'status', remoteOrder]);
    expect(gone).toEqual({ code: 2, stdout: '', stderr: 'error: there is no profile named nope: see cryptopay profile list\n' });
  });

  it('profile use --none returns to the local ledger; profile use NAME makes it active again', async () => {
    const none = await h.cli(['profile', 'use', '--none']);
    expect(none).toEqual({ code: 0, stdout: '', stderr: 'no active profile: operations run on the local ledger\n' });
    expect(mode(h.configFile)).toBe(0o600);
    const before = server.stdout();
    // The default local ledger, which does not exist: reading never creates it (decisions §10).
    const [status, merchants, list] = await Promise.all([
      h.cli(['order', 'status', remoteOrder]),
      h.cli(['--json', 'merchant', 'list']),
      h.cli(['profile', 'list']),
    ]);
    expect(status).toEqual({ code: 3, stdout: '', stderr: `error: no ledger at ${h.defaultLedger} (nothing was created): check --db or CRYPTOPAY_DB, or start a ledger with cryptopay merchant add\n` });
    expect(merchants.code).toBe(3);
    expect(JSON.parse(merchants.stderr)).toEqual({ error: { kind: 'unavailable', message: expect.stringContaining(`no ledger at ${h.defaultLedger}`) } });
    // No row is marked active (plain output writes an empty cell as -).
    expect(list.stdout).toBe(`active\tname\tremote\tmchId\tsecret\ttimeout\n-\tprod\t${server.url}\t${m.mchId}\tstored\t-\n-\tdown\t${downUrl}\t${m.mchId}\tstored\t-\n`);
    expect(existsSync(h.defaultLedger)).toBe(false);
    expect(server.stdout()).toBe(before);

    const use = await h.cli(['profile', 'use', 'prod']);
    expect(use).toEqual({ code: 0, stdout: '', stderr: `active profile: prod (${server.url})\n` });
    expect(await h.cli(['order', 'status', remoteOrder])).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
    const unknown = await h.cli(['profile', 'use', 'nope']);
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: 'error: there is no profile named nope: see cryptopay profile list\n' });
  });

  it('a config file that others can read is refused (exit 2, with the chmod hint), by every command', async () => {
    chmodSync(h.configFile, 0o644);
    try {
      const hint = `error: the config file ${h.configFile} can be read by others (mode 644); it may hold secrets, so it is not used: run chmod 600 ${h.configFile}\n`;
      const results = await Promise.all([
        h.cli(['profile', 'list']),
        h.cli(['order', 'status', remoteOrder]),
        h.cli(['order', 'create', '--oid', 'P-2', '--uid', 'u1', '--amount', '1']),
        h.cli(['profile', 'use', '--none']),
      ]);
      for (const r of results) expect(r).toEqual({ code: 2, stdout: '', stderr: hint });
      const json = await h.cli(['--json', 'address', remoteOrder]);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'usage', message: hint.slice('error: '.length, -1) } });
      expect(mode(h.configFile)).toBe(0o644); // refused, not silently "fixed" behind the user's back
      expect(JSON.parse(readFileSync(h.configFile, 'utf8')).active).toBe('prod');
    } finally {
      chmodSync(h.configFile, 0o600);
    }
    expect(await h.cli(['order', 'status', remoteOrder])).toEqual({ code: 0, stdout: 'PENDING_PAY\n', stderr: '' });
  });

  // A new-user trial: profile add over a saved profile replaced it without a word, its stored
  // secret (perhaps the only copy) with it.
  it('profile add over a saved profile asks first; without a terminal it needs --yes, and nothing is saved or sent before', async () => {
    const before = readFileSync(h.configFile, 'utf8');
    const refused = await h.cli(['profile', 'add', 'prod', '--remote', server.url, '--mch-id', 'M999999'], { env: { CRYPTOPAY_SECRET: 'sk_other' } });
    expect(refused).toEqual({
      code: 2, stdout: '',
      stderr: 'error: Replace profile prod: this replaces a saved profile and the secret it keeps, so it needs confirmation; pass --yes to confirm without a terminal (nothing was changed)\n',
    });
    expect(readFileSync(h.configFile, 'utf8')).toBe(before);
    const replaced = await h.cli(['profile', 'add', 'prod', '--remote', server.url, '--mch-id', m.mchId, '--use', '--yes'], { env: { CRYPTOPAY_SECRET: m.secret } });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(JSON.parse(readFileSync(h.configFile, 'utf8')).profiles.prod).toEqual({ remote: server.url, mchId: m.mchId, secret: m.secret });
  });

  it('profile remove: gone from the list; removing the active one returns to the local ledger', async () => {
    const [down, prod] = [await h.cli(['profile', 'remove', 'down']), await h.cli(['profile', 'remove', 'prod'])];
    expect(down).toEqual({ code: 0, stdout: '', stderr: 'profile down removed\n' });
    expect(prod).toEqual({ code: 0, stdout: '', stderr: 'profile prod removed\n' });
    const [list, status, again] = await Promise.all([
      h.cli(['--json', 'profile', 'list']),
      h.cli(['order', 'status', remoteOrder]),
      h.cli(['profile', 'remove', 'prod']),
    ]);
    expect(list).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    expect(status).toEqual({ code: 3, stdout: '', stderr: `error: no ledger at ${h.defaultLedger} (nothing was created): check --db or CRYPTOPAY_DB, or start a ledger with cryptopay merchant add\n` });
    expect(again).toEqual({ code: 2, stdout: '', stderr: 'error: there is no profile named prod: see cryptopay profile list\n' });
    expect(JSON.parse(readFileSync(h.configFile, 'utf8'))).toEqual({ active: null, profiles: {} });
    expect(mode(h.configFile)).toBe(0o600);
  });
});

describe('secret files', () => {
  let h: Home;
  let m: Merchant;
  let server: Served;

  beforeAll(async () => {
    h = home();
    m = await addMerchant(h);
    server = await serve(h);
  });

  it('--secret-file with mode 0644 is refused (exit 2, chmod hint), for an operation and for profile add; nothing is sent', async () => {
    const file = pathIn(h, 'secrets', 'open.txt');
    writeFileSync(file, `${m.secret}\n`, { mode: 0o644 });
    chmodSync(file, 0o644);
    const hint = `error: the secret file ${file} can be read by others (mode 644); it may hold secrets, so it is not used: run chmod 600 ${file}\n`;
    const [op, add] = await Promise.all([
      h.cli(['--remote', server.url, '--mch-id', m.mchId, '--secret-file', file, 'order', 'create', '--oid', 'S-1', '--uid', 'u1', '--amount', '1']),
      h.cli(['profile', 'add', 'open', '--remote', server.url, '--mch-id', m.mchId, '--secret-file', file]),
    ]);
    expect(op).toEqual({ code: 2, stdout: '', stderr: hint });
    expect(add).toEqual({ code: 2, stdout: '', stderr: hint });
    expect(existsSync(h.configFile)).toBe(false);
    expect(server.stdout()).toBe('');
  });

  it('--secret-file with mode 0600 signs, and wins over CRYPTOPAY_SECRET', async () => {
    const file = pathIn(h, 'secrets', 'ok.txt');
    writeFileSync(file, `${m.secret}\n`, { mode: 0o600 });
    const r = await h.cli(['--remote', server.url, '--mch-id', m.mchId, '--secret-file', file, '--json', 'order', 'create', '--oid', 'S-2', '--uid', 'u1', '--amount', '1'], {
      env: { CRYPTOPAY_SECRET: 'sk_wrong_wrong_wrong_wrong_wrong' },
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ oid: 'S-2', status: 'PENDING_PAY' });
  });

  it('a profile with --secret-file stores only the path and reads the file at each use', async () => {
    const file = pathIn(h, 'secrets', 'profile.txt');
    writeFileSync(file, `${m.secret}\n`, { mode: 0o600 });
    const add = await h.cli(['--json', 'profile', 'add', 'filed', '--remote', server.url, '--mch-id', m.mchId, '--secret-file', file, '--use']);
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toEqual({ name: 'filed', remote: server.url, mchId: m.mchId, secret: `file ${file}`, active: true, checked: { name: 'Shop', asset: 'USDT' } });
    const config = readFileSync(h.configFile, 'utf8');
    expect(JSON.parse(config).profiles.filed).toEqual({ remote: server.url, mchId: m.mchId, secretFile: file });
    expect(config).not.toContain(m.secret);
    expect(mode(h.configFile)).toBe(0o600);

    const create = (oid: string) => h.cli(['order', 'create', '--oid', oid, '--uid', 'u1', '--amount', '1']);
    expect(await create('F-1')).toMatchObject({ code: 0, stderr: '' });

    // The file is read when used: another secret in it now is refused by the server...
    writeFileSync(file, 'sk_not_the_merchant_secret_at_all\n');
    expect(await create('F-2')).toEqual({
      code: 1, stdout: '',
      stderr: `error: signature does not match: the remote ${server.url} refused the signature of merchant ${m.mchId}, made with the secret from profile filed's secret file ${file} (check that merchant id and that secret)\n`,
    });
    // ...a file made readable by others is refused before anything is sent...
    writeFileSync(file, `${m.secret}\n`);
    chmodSync(file, 0o640);
    const open = await create('F-3');
    expect(open).toEqual({ code: 2, stdout: '', stderr: `error: the secret file ${file} can be read by others (mode 640); it may hold secrets, so it is not used: run chmod 600 ${file}\n` });
    // ...a missing one says so...
    rmSync(file);
    expect(await create('F-4')).toEqual({ code: 2, stdout: '', stderr: `error: cannot read the secret file ${file}: no such file (ENOENT)\n` });
    // ...and the restored file works again.
    writeFileSync(file, `${m.secret}\n`, { mode: 0o600 });
    expect(await create('F-5')).toMatchObject({ code: 0, stderr: '' });

    const onServer = await h.json(['--db', h.db, 'order', 'list']);
    expect(onServer.map((o: { oid: string }) => o.oid).sort()).toEqual(['F-1', 'F-5', 'S-2']);
  });
});

describe('a profile without a secret, with a timeout', () => {
  it('keeps the timeout for its requests, and signed operations then ask for a secret (exit 2)', async () => {
    const hang = await tiny(() => {});
    const h = home();
    const add = await h.cli(['profile', 'add', 'slow', '--url', hang.url, '--mch-id', 'M100001', '--timeout', '1500ms', '--use', '--no-check']);
    expect(add.code).toBe(0);
    expect(add.stderr).toContain('no secret stored: signed operations will need CRYPTOPAY_SECRET or --secret-file\n');
    const [list, get, signed] = await Promise.all([
      h.cli(['--json', 'profile', 'list']),
      h.cli(['order', 'status', 'ord_AAAAAAAAAAAAAAAAAAAAAA']),
      h.cli(['order', 'create', '--oid', 'T-1', '--uid', 'u1', '--amount', '1']),
    ]);
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'slow', active: true, remote: hang.url, mchId: 'M100001', secret: 'none', timeout: '1500ms' }]);
    expect(get).toEqual({ code: 3, stdout: '', stderr: `error: the remote ${hang.url} did not answer within 1.5 s\n` });
    expect(signed).toEqual({ code: 2, stdout: '', stderr: 'error: remote mode needs the merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, or store it in a profile\n' });
    // 1.5 s, not the default 10 s: on a loaded machine a shorter limit could pass before this
    // process's server had read the request (CI saw 250 ms do so).
    expect(hang.hits).toEqual(['GET /api/v1/order/ord_AAAAAAAAAAAAAAAAAAAAAA/status']);
  });
});

describe("profile names that are an object's own words (an outside review)", () => {
  it('__proto__, constructor and toString are refused by profile add; naming them elsewhere says there is no such profile', async () => {
    const h = home();
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await h.cli(['profile', 'add', name, '--remote', 'http://127.0.0.1:18999', '--mch-id', 'M100001', '--no-check']);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: ${name} cannot be a profile name: it is a reserved word of JavaScript objects; choose another\n` });
    }
    expect(existsSync(h.configFile)).toBe(false);
    const ok = await h.cli(['profile', 'add', 'real', '--remote', 'http://127.0.0.1:18999', '--mch-id', 'M100001', '--no-check']);
    expect(ok.code).toBe(0);
    for (const name of ['constructor', 'toString', '__proto__']) {
      expect(await h.cli(['profile', 'show', name])).toMatchObject({ code: 2, stderr: `error: there is no profile named ${name}: see cryptopay profile list\n` });
      expect(await h.cli(['--profile', name, 'order', 'list'])).toMatchObject({ code: 2, stderr: `error: there is no profile named ${name}: see cryptopay profile list\n` });
      expect(await h.cli(['profile', 'use', name])).toMatchObject({ code: 2, stderr: `error: there is no profile named ${name}: see cryptopay profile list\n` });
      expect(await h.cli(['profile', 'remove', name])).toMatchObject({ code: 2, stderr: `error: there is no profile named ${name}: see cryptopay profile list\n` });
    }
  });
});
