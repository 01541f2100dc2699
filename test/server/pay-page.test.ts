import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/server/html.js';
import { PUBLIC_TEST_XPUBS } from '../../src/chains/sandbox/public-wallet.js';
import { TEST_WALLET } from '../helpers/service.js';
import { expectOk, expectRefused, MINUTE, nextOid, nextTx, startServer, T0, type Merchant, type TestServer } from './helpers.js';

/**
 * The payment page over a real socket on 127.0.0.1, with the server's clock injected: what it
 * sends (headers, policy, size, escaping) and the state it serves to its script. What a payer
 * sees in a browser is in pay-page-browser.test.ts.
 */

let s: TestServer;
let m: Merchant;

beforeAll(async () => {
  s = await startServer();
  m = await s.addMerchant({ name: 'Corner <Shop> & "Co"' });
});
afterAll(async () => {
  expect(await s.service.check()).toEqual([]);
  await s.close();
});

const page = (id: string, init?: RequestInit) => s.fetch(`/pay/${encodeURIComponent(id)}`, init);
const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const between = (text: string, open: string, close: string) => text.slice(text.indexOf(open) + open.length, text.indexOf(close));

describe('the template', () => {
  it('escapes every interpolated value, in text and in attributes, and gives it back unchanged to a parser', () => {
    fc.assert(
      fc.property(fc.string(), (v) => {
        const out = html`<p title="${v}">${v}</p>`.text;
        const inner = out.slice('<p title="'.length, out.length - '</p>'.length);
        expect(inner.slice(0, inner.indexOf('">'))).not.toMatch(/[<>"'`]/);
        const unescape = (t: string) => t.replace(/&(lt|gt|quot|#39|#96|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`', amp: '&' })[e]!);
        expect(unescape(escapeHtml(v))).toBe(v);
      }),
    );
  });
});

describe('GET /pay/{id}', () => {
  it('is HTML with a policy that runs only its own script and style, loads only the logo and talks only to itself', async () => {
    const logo = 'https://cdn.example.com/brand/logo.png?v=2';
    const o = await s.order(m, { logo });
    const r = await page(o.id);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    const script = between(r.text, '<script>', '</script>');
    const style = between(r.text, '<style>', '</style>');
    expect(csp).toBe(
      `default-src 'none'; script-src ${sha(script)}; style-src ${sha(style)}; img-src https://cdn.example.com/brand/logo.png; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    // Exactly one script and one style element, both inline: nothing else is fetched or run.
    expect(r.text.match(/<script/g)).toHaveLength(1);
    expect(r.text.match(/<style/g)).toHaveLength(1);
    expect(r.text).not.toMatch(/<link|<iframe|src="(?!https:\/\/cdn\.example\.com\/brand\/logo\.png\?v=2")/);
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('carries its script without comment lines or indentation, and the policy\'s hash is of exactly what it carries', async () => {
    const r = await page((await s.order(m)).id);
    const script = between(r.text, '<script>', '</script>');
    expect(script.split('\n').filter((l) => /^\s|^\/\//.test(l))).toEqual([]);
    expect(r.headers.get('content-security-policy')).toContain(`script-src ${sha(script)}`);
  });

  it('without a logo allows no image at all; a logo path CSP cannot express is allowed by its origin only', async () => {
    const plain = await page((await s.order(m)).id);
    expect(plain.headers.get('content-security-policy')).not.toContain('img-src');
    const odd = await page((await s.order(m, { logo: 'https://img.example.net/a;b,c.png' })).id);
    expect(odd.headers.get('content-security-policy')).toContain('img-src https://img.example.net;');
  });

  it('a logo whose host is not a plain host name is refused at create, and one already stored never reaches the policy', async () => {
    // Found by an attacker review: `https://a;b,c/x.png` put "img-src https://a;b,c" in the
    // header: the comma starts a second policy and the semicolon a new directive.
    // An IPv6 address too: no CSP source can name one, and the browser then blocks the logo.
    for (const logo of ['https://a;b,c/x.png', 'https://*.com/x.png', "https://a'b.com/x.png", 'https://a!b.com/x.png', 'https://[2606:4700:4700::1111]:8443/l.png']) {
      const r = await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '2', logo }));
      expectRefused(r, 400, "logo must be an http or https URL whose host is a plain host name or IPv4 address (a page's Content-Security-Policy cannot name an IPv6 address)");
    }
    for (const logo of ['https://cdn.example.com/l.png', 'https://xn--bcher-kva.example/l.png', 'http://93.184.216.34/l.png']) {
      expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '2', logo })));
    }
    // A row written before this check (straight into the file): the page shows no logo and the
    // policy keeps one directive per name.
    const o = await s.order(m, { logo: 'https://cdn.example.com/l.png' });
    s.ledger.sqlite.prepare('update orders set logo = ? where id = ?').run('https://a;b,c/x.png', o.id);
    const csp = (await page(o.id)).headers.get('content-security-policy')!;
    expect(csp).not.toContain('img-src');
    expect(csp).not.toMatch(/[,]/);
    expect(csp.split('; ').map((d) => d.split(' ')[0])).toEqual(['default-src', 'script-src', 'style-src', 'connect-src', 'base-uri', 'form-action', 'frame-ancestors']);
  });

  it('an order of a merchant on the public anvil test wallet: "Test money only", and no real network to pay on', async () => {
    // Found by an attacker review: serve --dev's page asked payers for real USDT on Ethereum, BNB
    // Smart Chain and Polygon, to addresses whose keys anyone has.
    // The page knows the wallet by its two xpubs: the test mnemonic's own (serve --dev's, test/cli/sandbox.test.ts).
    expect(PUBLIC_TEST_XPUBS).toEqual({ EVM: TEST_WALLET.evmXpub, TRON: TEST_WALLET.tronXpub });
    const r = await s.service.addMerchant({ name: 'Dev shop', evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });
    const o = await s.service.createOrder({ mchId: r.merchant.mchId, oid: nextOid(), uid: 'u1', amount: '3' });
    const text = (await page(o.id)).text;
    expect(text).toContain('Test money only');
    // This server knows no development chain: nothing to pay on, no address, no QR code.
    expect(text).toContain('no development network');
    for (const real of ['Ethereum', 'BNB Smart Chain', 'Polygon', 'TRON', o.addresses.EVM!, o.addresses.TRON!]) expect(text).not.toContain(real);
    expect(text).not.toContain('class="qr"');
    // Any other merchant's page is as before.
    const plain = (await page((await s.order(m)).id)).text;
    expect(plain).not.toContain('Test money only');
    expect(plain).toContain('Ethereum');
  });

  it("offers only the networks the service watches, never a development chain to a real merchant: the payer is not sent where no payment is seen, nor offered the sandbox's free tokens", async () => {
    // Found by an outside review: a real merchant's page on a serve --dev ledger offered the
    // development chain (whose token anyone can mint) and chains without an rpcUrl.
    const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
    const watched = await startServer({
      registryConfig: {
        chains: [{ chainId: 1, rpcUrl: 'http://127.0.0.1:1' }, { chainId: 31337, chainType: 'EVM', name: 'Development (anvil)', rpcUrl: 'http://127.0.0.1:2', development: true }],
        tokens: [{ chainId: 31337, address: TOKEN, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
      },
    });
    try {
      const real = await watched.addMerchant({ name: 'Real shop' });
      const text = (await watched.get(`/pay/${(await watched.order(real)).id}`)).text;
      expect(text).toContain('Ethereum');
      for (const not of ['BNB Smart Chain', 'Polygon', 'Development', TOKEN]) expect(text, not).not.toContain(not);
      // TRON, of which nothing is watched, is reconciled by hand: still offered, so a payer of a
      // TRON-only merchant has a way to pay.
      expect(text).toContain('TRON');
      // The sandbox's merchant still gets the sandbox, and only it.
      const dev = await watched.service.addMerchant({ name: 'Dev shop', evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });
      const devText = (await watched.get(`/pay/${(await watched.service.createOrder({ mchId: dev.merchant.mchId, oid: nextOid(), uid: 'u1', amount: '3' })).id}`)).text;
      expect(devText).toContain('Development (anvil)');
      expect(devText).not.toContain('Ethereum');
    } finally {
      await watched.close();
    }
  });

  it('an expired order partly paid, part of it late, says what arrived without calling all of it on time', async () => {
    // Found by an outside review: "5 USDT of the 10 USDT arrived before it expired" when 1 of
    // the 5 came after.
    const o = await s.order(m, { amount: '10', expiredAt: s.clock.now + MINUTE });
    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '4' });
    s.clock.now += 2 * MINUTE;
    try {
      await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '1' });
      const text = (await page(o.id)).text;
      expect(text).toContain('This payment request has expired');
      expect(text).toMatch(/<span id="expired-paid">5<\/span> USDT of the 10 USDT arrived\./);
      expect(text).not.toContain('before it expired');
    } finally {
      s.clock.now -= 2 * MINUTE;
    }
  });

  it('stays under 60 KB with the longest merchant values, every character of them escaped', async () => {
    const memo = '<>&"\''.repeat(51) + '<';
    const oid = '<"'.repeat(32);
    const o = await s.order(m, { memo, oid, logo: `https://example.com/${'<'.repeat(2000)}`, redirectUrl: `https://example.com/?q=${'"'.repeat(2000)}` });
    const r = await page(o.id);
    expect(r.status).toBe(200);
    expect(Buffer.byteLength(r.text)).toBeLessThan(60 * 1024);
    expect(r.text).toContain(escapeHtml(memo));
    expect(r.text).toContain(escapeHtml(oid));
    expect(r.text).not.toContain(memo);
    expect(r.text).not.toContain('<"<"');
    // The merchant name is merchant-given too.
    expect(r.text).toContain('Corner &lt;Shop&gt; &amp; &quot;Co&quot;');
  });

  it('shows the addresses only while the order can be paid', async () => {
    const o = await s.order(m, { expiredAt: T0 + 10 * MINUTE });
    const addresses = await s.service.getAddresses(o.id);
    const pending = await page(o.id);
    for (const a of Object.values(addresses)) expect(pending.text).toContain(a);

    s.clock.now = T0 + 11 * MINUTE;
    try {
      const expired = await page(o.id);
      expect(expired.text).toContain('This payment request has expired');
      for (const a of Object.values(addresses)) expect(expired.text).not.toContain(a);
    } finally {
      s.clock.now = T0;
    }
    const paid = await s.paidOrder(m, '3');
    const r = await page(paid.id);
    expect(r.text).toContain('data-status="PAID"');
    expect(r.text).not.toContain((await s.service.getAddresses(paid.id)).EVM!);
  });

  it('shows the ledger\'s state of the moment on every request: a page served again after a payment, a partial payment or time passing is the new one', async () => {
    const o = await s.order(m, { amount: '10', expiredAt: T0 + 30 * MINUTE });
    const addresses = await s.service.getAddresses(o.id);
    const first = await page(o.id);
    expect(first.text).toContain('data-status="PENDING_PAY"');
    // Without JavaScript the deadline, not a countdown that would stand still; the script fills in the countdown.
    expect(first.text).toContain('<span id="pay-by">Pay by</span> <span id="until">2025-01-15 12:30 UTC</span>');
    expect(first.text).toContain('<time id="left" datetime="2025-01-15T12:30:00.000Z"></time>');
    // The same state again: the same page.
    expect((await page(o.id)).text).toBe(first.text);

    // Time passing alone changes nothing on the page (the script takes the server's clock from
    // the state it polls): the page is a function of the ledger's state.
    s.clock.now = T0 + MINUTE + 500;
    try {
      const later = await page(o.id);
      expect(later.text).toBe(first.text);
      expect(later.text).not.toContain('data-now');
    } finally {
      s.clock.now = T0;
    }

    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '4.1' });
    const partly = await page(o.id);
    expect(partly.text).toContain('<div class="banner warn" id="partial"><p class="title">Partly paid</p>');
    expect(partly.text).toContain('<span id="paid-amount">4.1</span>');
    expect(partly.text).toContain('<span id="due-amount">5.9</span>');
    expect(partly.text).toContain('<span id="send-amount">5.9</span>');
    // The tab and the banner above ask for the rest, not the whole amount (a new-user trial: the
    // title still said "Pay 10 USDT" while 5.9 was due).
    expect(partly.text).toMatch(/<title>Pay the remaining 5\.9 USDT to \u2068[^<]*\u2069<\/title>/);
    expect(partly.text).toContain('<p class="title" id="waiting-title">Waiting for the rest of your payment</p>');
    for (const a of Object.values(addresses)) expect(partly.text).toContain(a);

    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '5.9' });
    const paid = await page(o.id);
    expect(paid.text).toContain('data-status="PAID"');
    expect(paid.text).toMatch(/<title>Paid: 10 USDT to \u2068/);
    expect(paid.text).toContain(`Order <bdi>${escapeHtml(o.oid)}</bdi> is paid.`);
    for (const a of Object.values(addresses)) expect(paid.text).not.toContain(a);
  });

  it('is made anew when anything it shows changes in the ledger, even by another process', async () => {
    const o = await s.order(m, { memo: 'first memo' });
    const before = await page(o.id);
    expect(before.text).toContain('first memo');
    // The same state: the page is served again as it was.
    expect((await page(o.id)).text).toBe(before.text);
    // Another connection to the ledger file (a CLI on the same machine) changes a column the page
    // shows, then the merchant's name: each shows on the next request, gzip-coded or not.
    const other = new Database(s.file);
    try {
      other.prepare('UPDATE orders SET memo = ? WHERE id = ?').run('second <memo>', o.id);
      const memo = await page(o.id);
      expect(memo.text).toContain('second &lt;memo&gt;');
      expect(memo.text).not.toContain('first memo');
      other.prepare('UPDATE merchants SET name = ? WHERE id = ?').run('Renamed & Co', m.mchId);
      const renamed = await page(o.id);
      expect(renamed.text).toContain('Renamed &amp; Co');
      expect(gunzipSync((await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': 'gzip' })).body).toString('utf8')).toBe(renamed.text);
    } finally {
      other.prepare('UPDATE merchants SET name = ? WHERE id = ?').run('Corner <Shop> & "Co"', m.mchId);
      other.close();
    }
    // And back: a name the page was once made with is read again, not taken from before.
    expect((await page(o.id)).text).toContain('Corner &lt;Shop&gt; &amp; &quot;Co&quot;');
  });

  it('links back only to the order\'s own http(s) redirect URL, and only when it has one', async () => {
    const withBack = await s.order(m, { redirectUrl: 'https://shop.example/thanks?o=1&x=2' });
    await s.service.markPaid({ id: withBack.id, txHash: nextTx() });
    const r = await page(withBack.id);
    expect(r.text.match(/href="[^"]*"/g)).toEqual(['href="https://shop.example/thanks?o=1&amp;x=2"']);
    const none = await s.paidOrder(m, '1');
    expect((await page(none.id)).text).not.toContain('href=');
  });

  it('answers an unknown or over-long id with one plain 404 page, and HEAD like GET without a body', async () => {
    const a = await page('ord_nothing');
    const b = await page('x'.repeat(65));
    for (const r of [a, b]) {
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.text).toContain('<title>Payment not found</title>');
      expect(r.text).not.toContain('<script');
    }
    expect(b.text).toBe(a.text);
    const o = await s.order(m);
    const head = await page(o.id, { method: 'HEAD' });
    expect({ status: head.status, text: head.text, type: head.headers.get('content-type') }).toEqual({ status: 200, text: '', type: 'text/html; charset=utf-8' });
  });
  it('goes gzip-coded to a client that takes gzip, and plain to one that does not; both are the same page', async () => {
    const o = await s.order(m, { memo: 'gzip <check>', amount: '10' });
    const plain = await rawGet(`/pay/${o.id}`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    const text = plain.body.toString('utf8');
    expect(text).toContain('gzip &lt;check&gt;');
    for (const ae of ['gzip, deflate', 'br;q=1, gzip;q=0.5', '*']) {
      const gz = await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': ae });
      expect([ae, gz.headers['content-encoding'], gz.headers.vary]).toEqual([ae, 'gzip', 'Accept-Encoding']);
      expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
      // A third of the bytes, and exactly the plain page once decoded, policy included.
      expect(gz.body.length).toBeLessThan(plain.body.length / 2);
      expect(gunzipSync(gz.body).toString('utf8')).toBe(text);
      expect(gz.headers['content-security-policy']).toBe(plain.headers['content-security-policy']);
    }
    for (const ae of ['identity', 'gzip;q=0', '*;q=0', 'br']) {
      const r = await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': ae });
      expect([ae, r.headers['content-encoding'], r.body.toString('utf8')]).toEqual([ae, undefined, text]);
    }
    // HEAD tells what GET would send, without the body.
    const gz = await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': 'gzip' });
    const head = await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': 'gzip' }, 'HEAD');
    expect([head.headers['content-encoding'], head.headers['content-length'], head.body.length]).toEqual(['gzip', String(gz.body.length), 0]);
    // A coded page is never an older state: paid, the next coded page is the new one.
    expect(text).toContain('data-status="PENDING_PAY"');
    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '4' });
    const partly = gunzipSync((await rawGet(`/pay/${o.id}`, { 'Accept-Encoding': 'gzip' })).body).toString('utf8');
    expect(partly).toContain('<span id="due-amount">6</span>');
    expect(partly).toBe((await rawGet(`/pay/${o.id}`, {})).body.toString('utf8'));
  });
});

describe('GET /pay/{id}/state', () => {
  it('an expired order whose payment confirms says so, unless that payment will not pay it (over 24 h late: held; a chain no longer known)', async () => {
    const HOUR = 60 * MINUTE;
    const sql = s.ledger.sqlite;
    const seen = sql.prepare("insert into chain_payments (chain_id, tx_hash, log_index, block_number, block_hash, block_time, order_id, token, to_address, raw_amount, amount, status, seen_at) values (?, ?, 0, 9, '0xb', ?, ?, 't', 'a', '1', 2000000, 'seen', 0)");
    const onTime = await s.order(m, { amount: '2', expiredAt: T0 + MINUTE });
    const tooLate = await s.order(m, { amount: '2', expiredAt: T0 + MINUTE });
    const unknownChain = await s.order(m, { amount: '2', expiredAt: T0 + MINUTE });
    seen.run('1', nextTx(), T0 + 30_000, onTime.id);
    seen.run('1', nextTx(), T0 + MINUTE + 25 * HOUR, tooLate.id);
    seen.run('999', nextTx(), T0 + 30_000, unknownChain.id);
    const before = s.clock.now;
    s.clock.now = T0 + 26 * HOUR;
    try {
      expect(expectOk(await s.get(`/pay/${onTime.id}/state`))).toMatchObject({ status: 'EXPIRED', confirming: { amount: '2', confirmations: 1, required: 12 } });
      const page = (await s.fetch(`/pay/${onTime.id}`)).text;
      expect(page).toContain('<div class="banner wait" id="confirming"><p class="title">Payment seen on the network</p>');
      expect(page).toContain('<div class="banner bad" id="expired" data-when="EXPIRED" hidden>');
      expect(page).toContain('<noscript>');
      for (const o of [tooLate, unknownChain]) {
        expect(expectOk(await s.get(`/pay/${o.id}/state`))).toMatchObject({ status: 'EXPIRED', confirming: null });
        const shown = (await s.fetch(`/pay/${o.id}`)).text;
        expect(shown).toContain('<div class="banner bad" id="expired" data-when="EXPIRED"><p class="title">This payment request has expired</p>');
        expect(shown).toContain('<div class="banner wait" id="confirming" hidden>');
        expect(shown).not.toContain('<noscript>');
      }
    } finally {
      s.clock.now = before;
      sql.prepare('delete from chain_payments').run();
    }
  });

  it('says what arrived and what is still due, in the envelope, with exact decimals', async () => {
    const o = await s.order(m, { amount: '10.000001' });
    expect(expectOk(await s.get(`/pay/${o.id}/state`))).toEqual({
      status: 'PENDING_PAY', amount: '10.000001', paidAmount: '0', dueAmount: '10.000001', asset: 'USDT', expiredAt: T0 + 30 * MINUTE, confirming: null,
    });
    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '4.1' });
    expect(expectOk(await s.get(`/pay/${o.id}/state`))).toMatchObject({ status: 'PENDING_PAY', paidAmount: '4.1', dueAmount: '5.900001' });
    await s.service.markPaid({ id: o.id, txHash: nextTx(), amount: '6' });
    expect(expectOk(await s.get(`/pay/${o.id}/state`))).toMatchObject({ status: 'PAID', paidAmount: '10.1', dueAmount: '0' });
  });

  it('reads EXPIRED at once past expiredAt, and Order not found for an unknown id', async () => {
    const o = await s.order(m, { expiredAt: T0 + MINUTE });
    s.clock.now = T0 + 2 * MINUTE;
    try {
      expect(expectOk(await s.get(`/pay/${o.id}/state`))).toMatchObject({ status: 'EXPIRED', dueAmount: '10' });
    } finally {
      s.clock.now = T0;
    }
    const r = await s.get('/pay/ord_nothing/state');
    expect({ status: r.status, json: r.json }).toMatchObject({ status: 404, json: { code: 0, msg: 'Order not found', data: null } });
  });
});

/** A GET (or HEAD) with node:http, which sends only the headers given and decodes nothing. */
function rawGet(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ headers: Record<string, string | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(s.url + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers as Record<string, string | undefined>, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
