import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultPublicUrl } from '../../src/server/pay-url.js';
import { sign } from '../../src/signing/index.js';
import { runCli } from '../helpers/cli.js';
import { readQr } from '../helpers/qr-decode.js';
import { httpJson, killAll, nextNonce, spawnServe, tempDir } from '../server/helpers.js';

/**
 * payUrl (decisions §11) end to end with the real binary: `serve --public-url`, create order's
 * answer, what `order create` prints locally and against a remote, and `--qr`.
 */

const tmp = tempDir();
let n = 0;
const newDb = () => join(tmp.dir, `ledger-${++n}.db`);
afterEach(() => killAll());
afterAll(() => tmp.cleanup());

async function merchant(db: string): Promise<{ mchId: string; secret: string }> {
  const r = await runCli(['--db', db, 'merchant', 'add', '--name', 'Shop', '--generate-wallet', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

async function createOverHttp(url: string, m: { mchId: string; secret: string }, oid: string) {
  const body = { mchId: m.mchId, oid, uid: 'u1', amount: '3', timestamp: Date.now(), nonce: nextNonce() };
  const r = await httpJson(url, '/api/v1/order', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...body, sign: sign(body, m.secret) }) });
  expect(r.status, r.text).toBe(200);
  return (r.json as { data: { id: string; payUrl: string } }).data;
}

const payUrlLine = (stdout: string) => /^pay url {7}(\S+)$/m.exec(stdout)?.[1];

describe('serve --public-url', () => {
  it('is the base of payUrl in create order, and a local order create on the same ledger prints the same base', async () => {
    const db = newDb();
    const m = await merchant(db);
    const srv = await spawnServe(db, {}, ['--public-url', 'https://pay.example.com/shop/']);
    await srv.waitFor(/^payment pages at https:\/\/pay\.example\.com\/shop\/pay\/\{order id\}$/m);
    const order = await createOverHttp(srv.url, m, 'A-1');
    expect(order.payUrl).toBe(`https://pay.example.com/shop/pay/${order.id}`);

    const local = await runCli(['--db', db, 'order', 'create', '--oid', 'A-2', '--uid', 'u1', '--amount', '1']);
    expect(local.code, local.stderr).toBe(0);
    const id = /^id {12}(\S+)$/m.exec(local.stdout)![1];
    expect(payUrlLine(local.stdout)).toBe(`https://pay.example.com/shop/pay/${id}`);
    const json = await runCli(['--db', db, 'order', 'create', '--oid', 'A-3', '--uid', 'u1', '--amount', '1', '--json']);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.payUrl).toBe(`https://pay.example.com/shop/pay/${parsed.id}`);
    await srv.stop();
  });

  it('defaults to the address serve listens on, where the page is served', async () => {
    const db = newDb();
    const m = await merchant(db);
    const srv = await spawnServe(db);
    const order = await createOverHttp(srv.url, m, 'B-1');
    expect(order.payUrl).toBe(`${srv.url}/pay/${order.id}`);
    const pageRes = await fetch(order.payUrl);
    expect(pageRes.status).toBe(200);
    expect(await pageRes.text()).toContain('B-1');

    // Against the remote, order create prints the payUrl the server answered.
    const remote = await runCli(['order', 'create', '--oid', 'B-2', '--uid', 'u1', '--amount', '1', '--remote', srv.url, '--mch-id', m.mchId], {
      env: { CRYPTOPAY_SECRET: m.secret },
    });
    expect(remote.code, remote.stderr).toBe(0);
    const id = /^id {12}(\S+)$/m.exec(remote.stdout)![1];
    expect(payUrlLine(remote.stdout)).toBe(`${srv.url}/pay/${id}`);
    await srv.stop();
  });

  it.each([
    ['ftp://pay.example.com', '--public-url must be an http or https URL'],
    ['pay.example.com', '--public-url must be an absolute http(s) URL such as https://pay.example.com, got "pay.example.com"'],
    ['https://pay.example.com/?a=1', '--public-url takes no query or fragment'],
    ['https://user:pw@pay.example.com', '--public-url must not carry a user name or password'],
  ])('refuses %s as a usage error, before listening', async (value, msg) => {
    const db = newDb();
    const r = await runCli(['--db', db, 'serve', '--port', '0', '--public-url', value]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `error: ${msg}\n` });
  });
});

describe('the default base of payUrl', () => {
  it('is the address serve listens on, or this machine when it listens on every interface (a payer cannot open 0.0.0.0)', () => {
    expect(defaultPublicUrl('http://127.0.0.1:8080')).toEqual({ url: 'http://127.0.0.1:8080', wildcard: false });
    expect(defaultPublicUrl('http://[::1]:9000')).toEqual({ url: 'http://[::1]:9000', wildcard: false });
    expect(defaultPublicUrl('http://192.168.1.20:8080')).toEqual({ url: 'http://192.168.1.20:8080', wildcard: false });
    expect(defaultPublicUrl('http://0.0.0.0:8080')).toEqual({ url: 'http://127.0.0.1:8080', wildcard: true });
    expect(defaultPublicUrl('http://[::]:8080')).toEqual({ url: 'http://[::1]:8080', wildcard: true });
  });
});

describe('order create', () => {
  it('on a ledger no serve has announced, points at where serve listens by default', async () => {
    const db = newDb();
    await merchant(db);
    const r = await runCli(['--db', db, 'order', 'create', '--oid', 'C-1', '--uid', 'u1', '--amount', '1']);
    const id = /^id {12}(\S+)$/m.exec(r.stdout)![1];
    expect(payUrlLine(r.stdout)).toBe(`http://127.0.0.1:8080/pay/${id}`);
  });

  it('--qr draws a QR code per address that a scanner reads as that address', async () => {
    const db = newDb();
    await merchant(db);
    const r = await runCli(['--db', db, 'order', 'create', '--oid', 'Q-1', '--uid', 'u1', '--amount', '1', '--qr']);
    expect(r.code, r.stderr).toBe(0);
    const evm = /^EVM address {3}(\S+)$/m.exec(r.stdout)![1]!;
    const tron = /^TRON address {2}(\S+)$/m.exec(r.stdout)![1]!;
    const blocks = r.stdout.split(/^(?:EVM|TRON) \S+$/m).slice(1);
    expect(blocks).toHaveLength(2);
    expect(blocks.map(decodeTerminalQr)).toEqual([evm, tron]);
    expect(r.stdout).toContain(`\nEVM ${evm}\n`);

    const json = await runCli(['--db', db, 'order', 'create', '--oid', 'Q-2', '--uid', 'u1', '--amount', '1', '--qr', '--json']);
    // --json stays one JSON document.
    expect(JSON.parse(json.stdout).addresses.EVM).toMatch(/^0x/);
  });

  it('--qr under TERM=dumb draws with ASCII only (## a module), and still scans as the address', async () => {
    const db = newDb();
    await merchant(db);
    const r = await runCli(['--db', db, 'order', 'create', '--oid', 'Q-3', '--uid', 'u1', '--amount', '1', '--qr'], { env: { TERM: 'dumb' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[\x20-\x7e\n]*$/);
    const evm = /^EVM address {3}(\S+)$/m.exec(r.stdout)![1]!;
    const tron = /^TRON address {2}(\S+)$/m.exec(r.stdout)![1]!;
    const blocks = r.stdout.split(/^(?:EVM|TRON) \S+$/m).slice(1);
    expect(blocks.map(decodeAsciiQr)).toEqual([evm, tron]);
  });
});

/** `##` cells back to modules (ASCII drawing, one line a row of modules). */
function decodeAsciiQr(block: string): string | null {
  const rows = block.split('\n').filter((l) => l.length > 0).map((line) => Array.from({ length: line.length / 2 }, (_, i) => line.slice(2 * i, 2 * i + 2) === '##'));
  return readModules(rows);
}

/** Half-block characters back to modules, drawn 4 px a module, read with jsQR. */
function decodeTerminalQr(block: string): string | null {
  const lines = block.split('\n').filter((l) => l.length > 0);
  const rows: boolean[][] = [];
  for (const line of lines) {
    const chars = [...line];
    rows.push(chars.map((c) => c === '█' || c === '▀'));
    rows.push(chars.map((c) => c === '█' || c === '▄'));
  }
  return readModules(rows);
}

/** Modules drawn 4 px each on white, read with jsQR. */
function readModules(rows: boolean[][]): string | null {
  const scale = 4;
  const pad = 4 * scale;
  const w = rows[0]!.length * scale + 2 * pad;
  const h = rows.length * scale + 2 * pad;
  const data = new Uint8ClampedArray(w * h * 4).fill(255);
  rows.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const o = ((pad + y * scale + dy) * w + pad + x * scale + dx) * 4;
          data[o] = data[o + 1] = data[o + 2] = 0;
        }
      }
    }),
  );
  return readQr({ data, width: w, height: h });
}
