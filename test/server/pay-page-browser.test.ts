import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, launchChromium, watchedContext, type Watched } from '../helpers/browser.js';
import { crop, decodePng } from '../helpers/png.js';
import { readQr } from '../helpers/qr-decode.js';
import { evmTx, killAll, runCli, spawnServe, tempDir, type Spawned } from './helpers.js';

/**
 * The payment page as a payer sees it: the real `cryptopay serve` on a ledger file, orders made
 * and paid with the real CLI on the same file, Debian's chromium driving the page. A tiny shop
 * server on 127.0.0.1 serves the merchant's logo and the page the payer returns to.
 */

const tmp = tempDir();
const db = join(tmp.dir, 'ledger.db');
// PAY_PAGE_SHOTS=DIR keeps the screenshots, to look at them.
const SHOTS = process.env.PAY_PAGE_SHOTS ?? join(tmp.dir, 'shots');
let srv: Spawned;
let browser: Browser;
let shop: { server: Server; url: string; hits: string[] };
let seq = 0;
let tx = 0x9000;

interface Created {
  id: string;
  oid: string;
  amount: string;
  payUrl: string;
  addresses: { EVM?: string; TRON?: string };
}

async function cli(args: string[]) {
  // The test's shop serves the logo on 127.0.0.1: development, where a logo at an inward address
  // is allowed (as under serve --dev).
  const r = await runCli(['--db', db, ...args], { CRYPTOPAY_ALLOW_PRIVATE_CALLBACKS: '1' });
  return r;
}

async function createOrder(opts: { amount?: string; oid?: string; memo?: string; logo?: string; redirectUrl?: string; expiredAt?: number } = {}): Promise<Created> {
  const oid = opts.oid ?? `page-${++seq}`;
  const args = ['order', 'create', '--json', '--oid', oid, '--uid', 'payer-1', '--amount', opts.amount ?? '12.5'];
  if (opts.memo) args.push('--memo', opts.memo);
  if (opts.logo) args.push('--logo', opts.logo);
  if (opts.redirectUrl) args.push('--redirect-url', opts.redirectUrl);
  if (opts.expiredAt) args.push('--expired-at', String(opts.expiredAt));
  const r = await cli(args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Created;
}

async function markPaid(id: string, amount?: string) {
  const args = ['order', 'mark-paid', id, '--tx-hash', evmTx(++tx), '--yes'];
  if (amount) args.push('--amount', amount);
  const r = await cli(args);
  expect(r.code, r.stderr).toBe(0);
}

function startShop(): Promise<typeof shop> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url?.startsWith('/logo.svg')) {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end(
        '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56" viewBox="0 0 56 56"><rect width="56" height="56" rx="12" fill="#0f766e"/><path d="M16 36l8-16 8 12 8-8" stroke="#fff" stroke-width="4" fill="none"/></svg>',
      );
    } else res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Back at the shop</title><p>Thanks');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits })),
  );
}

beforeAll(async () => {
  const m = await runCli(['--db', db, 'merchant', 'add', '--name', 'Lucky Shop', '--generate-wallet']);
  expect(m.code, m.stderr).toBe(0);
  [srv, shop, browser] = await Promise.all([spawnServe(db), startShop(), launchChromium()]);
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
  killAll();
  await new Promise((r) => shop?.server.close(r));
  tmp.cleanup();
});

const shown = (page: Page, selector: string) => page.locator(selector).isVisible();

/** Every QR code on the screen, decoded from a screenshot of the whole page. */
async function qrCodesOnScreen(page: Page, name: string): Promise<(string | null)[]> {
  const png = await page.screenshot({ fullPage: true });
  writeFileSync(join(SHOTS, `${name}.png`), png);
  const img = decodePng(png);
  const out: (string | null)[] = [];
  for (const qr of await page.locator('.qr').all()) {
    const box = (await qr.boundingBox())!;
    const part = crop(img, box);
    out.push(readQr(part));
  }
  return out;
}

function expectNoSeriousViolations(v: Awaited<ReturnType<typeof axeViolations>>) {
  expect(v.filter((x) => x.impact === 'serious' || x.impact === 'critical')).toEqual([]);
}

/** Console lines that say the page's own script or style was blocked, or the script failed. */
const troubles = (w: Watched) => w.console.filter((l) => /Content Security Policy|pageerror|Refused/.test(l));

describe('the payment page in a real browser', () => {
  it('shows amount, order number, addresses with QR codes and networks, at 360 px and at 1280 px', async () => {
    const logo = `${shop.url}/logo.svg`;
    const o = await createOrder({ memo: 'Two coffees', logo });
    // A local `order create` prints the address the running serve announced.
    expect(o.payUrl).toBe(`${srv.url}/pay/${o.id}`);

    for (const width of [360, 1280]) {
      const w = await watchedContext(browser, { viewport: { width, height: 900 } });
      const page = await w.page();
      const res = (await page.goto(o.payUrl))!;
      expect(res.status()).toBe(200);
      // The page with its inline QR codes, style and script is well under 60 KB.
      expect((await res.body()).length).toBeLessThan(60 * 1024);
      await expect.poll(() => page.evaluate('document.querySelector(".logo").complete && document.querySelector(".logo").naturalWidth')).toBe(56);

      const text = await page.locator('main').innerText();
      expect(text).toContain('Lucky Shop');
      expect(await page.locator('.amount').innerText()).toMatch(/^12\.5\s*USDT$/);
      expect(text).toContain(o.oid);
      expect(text).toContain('Two coffees');
      for (const net of ['Ethereum', 'BNB Smart Chain', 'Polygon', 'TRON', '0xdAC17F958D2ee523a2206206994597C13D831ec7', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t']) {
        expect(text).toContain(net);
      }
      expect(await page.locator('#a-evm').innerText()).toBe(o.addresses.EVM);
      expect(await page.locator('#a-tron').innerText()).toBe(o.addresses.TRON);
      // The script runs (its hash is in the CSP): copy buttons appear, the countdown moves.
      expect(await page.getByRole('button', { name: 'Copy EVM address' }).isVisible()).toBe(true);
      const before = await page.locator('#left').innerText();
      expect(before).toMatch(/^(29|30):\d\d$/);
      await expect.poll(() => page.locator('#left').innerText(), { timeout: 5000 }).not.toBe(before);
      // Nothing sticks out sideways on a phone.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);

      expect(await qrCodesOnScreen(page, `pending-${width}`)).toEqual([o.addresses.EVM, o.addresses.TRON]);
      expectNoSeriousViolations(await axeViolations(page));

      // The copy button puts the address on the clipboard and says so.
      await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
      // By keyboard alone: Tab reaches the button, Enter copies.
      let focused = '';
      for (let i = 0; i < 10 && focused !== 'Copy TRON address'; i++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate<string>('document.activeElement ? document.activeElement.textContent : ""');
      }
      expect(focused).toBe('Copy TRON address');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(o.addresses.TRON);
      expect(await page.locator('#said').innerText()).toBe('Address copied');

      // One request for the page, one for the logo, then only the state it polls.
      await page.waitForTimeout(3500);
      const other = w.requests.filter((u) => u !== o.payUrl && u !== logo && u !== `${srv.url}/pay/${o.id}/state`);
      expect(other).toEqual([]);
      expect(w.requests.filter((u) => u === o.payUrl)).toHaveLength(1);
      expect(w.requests).toContain(`${srv.url}/pay/${o.id}/state`);
      expect(troubles(w)).toEqual([]);
      await w.context.close();
    }
  });

  it('turns to paid without a reload when the payment is recorded, then returns the payer to the shop', async () => {
    const back = `${shop.url}/return?order=42`;
    const o = await createOrder({ redirectUrl: back });
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(o.payUrl);
    expect(await page.locator('.status').innerText()).toContain('Waiting for your payment');
    await page.evaluate('window.sameDocument = true');

    await markPaid(o.id);
    await page.getByText('Payment received').waitFor({ timeout: 15_000 });
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    expect(await shown(page, '#pay')).toBe(false);
    expect(await page.getByRole('link', { name: 'Return to Lucky Shop now' }).getAttribute('href')).toBe(back);
    await page.screenshot({ path: join(SHOTS, 'paid-360.png'), fullPage: true });
    expectNoSeriousViolations(await axeViolations(page));

    await page.waitForURL(back, { timeout: 15_000 });
    expect(shop.hits).toContain('/return?order=42');
    expect(troubles(w)).toEqual([]);
    await w.context.close();
  });

  // A new-user trial: without JavaScript a paid order's page said "Returning you to ... in 5
  // seconds" and stayed. It now returns the payer there by itself (a refresh in a noscript).
  it('returns the payer to the shop without JavaScript too, once the order is paid', async () => {
    const back = `${shop.url}/return?order=nojs`;
    const o = await createOrder({ redirectUrl: back });
    await markPaid(o.id);
    const off = await watchedContext(browser, { javaScriptEnabled: false });
    const page = await off.page();
    await page.goto(o.payUrl);
    expect(await page.locator('main').innerText()).toContain('Payment received');
    await page.waitForURL(back, { timeout: 15_000 });
    expect(shop.hits).toContain('/return?order=nojs');
    await off.context.close();
    // An unpaid order's page does not send anyone anywhere.
    const unpaid = await createOrder({ redirectUrl: back });
    const html = await (await fetch(unpaid.payUrl)).text();
    expect(html).not.toContain('http-equiv="refresh"');
  });

  it('shows what arrived and what is still due when underpaid, and paid once the rest arrives', async () => {
    const o = await createOrder({ amount: '12.5' });
    const w = await watchedContext(browser, { viewport: { width: 1280, height: 900 } });
    const page = await w.page();
    await page.goto(o.payUrl);
    expect(await shown(page, '#partial')).toBe(false);

    await markPaid(o.id, '5');
    await page.locator('#partial').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#partial').innerText()).toMatch(/5 USDT arrived; 7\.5 USDT is still due/);
    // The tab and the banner above it ask for the rest, changed in place by the page's script.
    expect(await page.title()).toMatch(/^Pay the remaining 7\.5 USDT to \u2068.+\u2069$/);
    expect(await page.locator('#waiting-title').innerText()).toBe('Waiting for the rest of your payment');
    // Still payable: the addresses stay, asking for what is left.
    expect(await shown(page, '#pay')).toBe(true);
    expect(await page.locator('#send-amount').innerText()).toBe('7.5');
    await page.screenshot({ path: join(SHOTS, 'underpaid-1280.png'), fullPage: true });

    await markPaid(o.id, '7.5');
    await page.getByText('Payment received').waitFor({ timeout: 15_000 });
    expect(await shown(page, '#partial')).toBe(false);
    expect(await page.title()).toMatch(/^Paid: 12\.5 USDT to \u2068.+\u2069$/);
    expect(troubles(w)).toEqual([]);
    await w.context.close();
  });

  it('hides the addresses once expired and says what to do for who already paid', async () => {
    const o = await createOrder({ expiredAt: Date.now() + 6000 });
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(o.payUrl);
    expect(await shown(page, '#pay')).toBe(true);

    await page.getByText('This payment request has expired').waitFor({ timeout: 20_000 });
    expect(await shown(page, '#pay')).toBe(false);
    expect(await shown(page, '.timer')).toBe(false);
    expect(await page.locator('.status').innerText()).toContain(`If you already paid, your payment is not lost: contact Lucky Shop with order number ${o.oid}`);
    await page.screenshot({ path: join(SHOTS, 'expired-360.png'), fullPage: true });
    expectNoSeriousViolations(await axeViolations(page));

    // Loaded afresh, an expired page does not even carry the addresses.
    const again = await fetch(o.payUrl);
    const html = await again.text();
    expect(html).toContain('This payment request has expired');
    expect(html).not.toContain(o.addresses.EVM!);
    expect(html).not.toContain(o.addresses.TRON!);
    expect(troubles(w)).toEqual([]);
    await w.context.close();
  });

  it('says it updates by itself only where it does: without JavaScript it asks for a reload while unpaid, and says nothing of either once paid', async () => {
    // Found by an outside review: without JavaScript the page said both "updates by itself" and
    // "does not update by itself", and a paid order's page still asked for a reload.
    const o = await createOrder({ amount: '2' });
    const off = await watchedContext(browser, { javaScriptEnabled: false });
    const on = await watchedContext(browser);
    const visible = async (w: Watched) => {
      const page = await w.page();
      await page.goto(o.payUrl);
      return page.locator('main').innerText();
    };
    const [plain, live] = await Promise.all([visible(off), visible(on)]);
    expect(plain).not.toContain('updates by itself once');
    expect(plain).toContain('reload it to see whether your payment has arrived');
    // This serve reads no chain (no rpcUrl): the order is paid once the shop records it, and the
    // page promises no more than that (a new-user trial, F9); a watched chain's page: pay-page-chain.
    expect(live).toContain('This page updates by itself once the shop has recorded your payment.');
    expect(live).not.toContain('confirmed on the network');
    expect(live).not.toContain('reload it to see');
    await markPaid(o.id);
    const paid = await visible(off);
    expect(paid).toContain('Payment received');
    expect(paid).not.toMatch(/reload it|updates by itself/);
    await Promise.all([off.context.close(), on.context.close()]);
  });

  it('once a partly paid order expires, stops asking for the rest and says what arrived', async () => {
    // Long enough for two CLI runs on a busy machine before it expires.
    const o = await createOrder({ amount: '12.5', expiredAt: Date.now() + 12_000 });
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(o.payUrl);
    await markPaid(o.id, '5');
    await page.locator('#partial').waitFor({ state: 'visible', timeout: 15_000 });

    await page.getByText('This payment request has expired').waitFor({ timeout: 20_000 });
    // "Send the rest to the same address" would contradict "do not send anything any more".
    expect(await shown(page, '#partial')).toBe(false);
    expect(await shown(page, '#pay')).toBe(false);
    expect(await page.locator('.status').innerText()).toContain('5 USDT of the 12.5 USDT arrived.');
    await page.screenshot({ path: join(SHOTS, 'expired-partly-paid-360.png'), fullPage: true });

    // Loaded afresh it says the same.
    const html = await (await fetch(o.payUrl)).text();
    expect(html).toMatch(/<div class="banner warn" id="partial" hidden>/);
    expect(troubles(w)).toEqual([]);
    await w.context.close();
  });

  it('keeps markup and script injected through the memo, oid, logo and redirect URL inert', async () => {
    const attack = `document.title='pwned'`;
    const memo = `<script>${attack}</script><img src=x onerror="${attack}">`;
    const oid = `"><svg onload="${attack}">`;
    const logo = `${shop.url}/logo.svg?x="><script>${attack}</script>`;
    const back = `${shop.url}/return?next='"><script>${attack}</script>`;
    const o = await createOrder({ oid, memo, logo, redirectUrl: back });

    const w = await watchedContext(browser, { viewport: { width: 1280, height: 900 } });
    const page = await w.page();
    await page.goto(o.payUrl);
    expect(await page.title()).not.toContain('pwned');
    // The values show as the text they are; the page has only its own script and the logo image.
    expect(await page.locator('.facts dd').allInnerTexts()).toEqual([oid, memo]);
    expect(await page.evaluate('document.scripts.length')).toBe(1);
    expect(await page.evaluate('[...document.images].map((i) => i.src)')).toEqual([new URL(logo).href]);
    expect(await page.locator('svg[onload], [onerror]').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'injection-1280.png'), fullPage: true });

    await markPaid(o.id);
    await page.waitForURL((u) => u.href === new URL(back).href, { timeout: 20_000 });
    expect(shop.hits).toContain(new URL(back).pathname + new URL(back).search);
    expect(w.requests.every((u) => u.startsWith(`${srv.url}/pay/`) || u === new URL(logo).href || u === new URL(back).href)).toBe(true);
    expect(w.console.filter((l) => /pageerror/.test(l))).toEqual([]);
    await w.context.close();

    // A redirect that is not http(s) never gets into an order.
    const refused = await cli(['order', 'create', '--oid', `js-${seq}`, '--uid', 'u', '--amount', '1', '--redirect-url', 'javascript:alert(1)']);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: 'error: --redirect-url must be an http or https URL\n' });
  });

  it('shows the amount, the addresses and their QR codes without JavaScript', async () => {
    const o = await createOrder();
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 }, javaScriptEnabled: false });
    const page = await w.page();
    await page.goto(o.payUrl);
    expect(await page.locator('.amount').innerText()).toMatch(/^12\.5\s*USDT$/);
    expect(await page.locator('#a-evm').isVisible()).toBe(true);
    expect(await page.locator('#a-tron').isVisible()).toBe(true);
    expect(await page.locator('noscript').count()).toBe(1);
    expect(await page.getByRole('button', { name: /Copy/ }).count()).toBe(0);
    // A countdown would stand still without the script: the deadline instead.
    expect(await page.locator('.timer').innerText()).toMatch(/^Pay by \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(await qrCodesOnScreen(page, 'nojs-360')).toEqual([o.addresses.EVM, o.addresses.TRON]);
    await w.context.close();
  });

  it('counts down by the server\'s clock at once on a device whose clock is two hours slow', async () => {
    const o = await createOrder();
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    // Every Date.now() of the page reads two hours behind, from before its script runs.
    await w.context.addInitScript('{ const real = Date.now; Date.now = () => real() - 2 * 3600 * 1000; }');
    const page = await w.page();
    await page.goto(o.payUrl);
    // 30 minutes by the server's clock, not 2:30 hours by the device's, within a moment of loading:
    // the script asks for the server's time at once and redraws the countdown as soon as it
    // knows it. (It used to wait for its next one-second tick: an outside stress run measured the
    // server's time showing 891-997 ms after goto; with the redraw, 32-69 ms.)
    await expect.poll(() => page.locator('#left').innerText(), { timeout: 750, interval: 20 }).toMatch(/^(29|30):\d\d$/);
    expect(await page.locator('.timer').innerText()).toMatch(/^Time left (29|30):\d\d\nuntil /);
    expect(await page.locator('#pay-by').isVisible()).toBe(false);
    expect(await page.locator('#a-evm').isVisible()).toBe(true);
    expect(troubles(w)).toEqual([]);
    await w.context.close();
  });

  it('answers an unknown order with a plain 404 page', async () => {
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    const res = (await page.goto(`${srv.url}/pay/ord_doesnotexist`))!;
    expect(res.status()).toBe(404);
    expect(await page.title()).toBe('Payment not found');
    expectNoSeriousViolations(await axeViolations(page));
    await w.context.close();
  });
});
