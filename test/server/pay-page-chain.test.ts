import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, launchChromium, watchedContext } from '../helpers/browser.js';
import { ledgerWithOrders, pay, startPayChain, writeChainsConfig, type PayChain } from '../chains/watch/anvil-support.js';
import { httpJson, killAll, runCli, spawnServe, tempDir, type Spawned } from './helpers.js';

/**
 * The payment page while the chain pays it: a real anvil with the test USDT, a real `serve`
 * watching it (run `npm run build` first) and Debian's chromium on the page. A payer who has paid
 * is told the payment was seen and not to pay again while it gathers its confirmations; a reorg
 * that drops it puts the page back to waiting; at depth it turns to paid by itself.
 */

const CONFIRMATIONS = 3;
const tmp = tempDir();
const db = join(tmp.dir, 'ledger.db');
let pc: PayChain;
let srv: Spawned;
let browser: Browser;
let orders: { id: string; addresses: { EVM?: string } }[];

beforeAll(async () => {
  pc = await startPayChain();
  const head = await pc.chain.provider.getBlockNumber();
  const chains = writeChainsConfig(tmp.dir, {
    chains: [{ chainId: 31337, chainType: 'EVM', name: 'Anvil', rpcUrl: pc.chain.rpcUrl, confirmations: CONFIRMATIONS, pollInterval: 200, startBlock: head }],
    tokens: [{ chainId: 31337, address: await pc.usdt.getAddress(), symbol: 'USDT', asset: 'USDT', decimals: 6 }],
  });
  ({ orders } = await ledgerWithOrders(db, ['12.5', '4']));
  [srv, browser] = await Promise.all([spawnServe(db, { CRYPTOPAY_CHAINS: chains }), launchChromium()]);
  await srv.waitFor(/watching chain 31337 \(Anvil\)/);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
  killAll();
  await pc?.stop();
  tmp.cleanup();
});

const state = async (id: string) => (await httpJson(srv.url, `/pay/${id}/state`)).json.data;

describe('the payment page follows the chain', () => {
  it('says a payment was seen with k of n confirmations, not to pay again; turns to paid at depth', async () => {
    const o = orders[0]!;
    expect(await state(o.id)).toMatchObject({ status: 'PENDING_PAY', confirming: null });
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(`${srv.url}/pay/${o.id}`);
    expect(await page.locator('.status').innerText()).toContain('Waiting for your payment');
    expect(await page.locator('#confirming').isVisible()).toBe(false);

    await pay(pc.usdt, o.addresses.EVM!, 12_500_000n);
    await page.getByText('Payment seen on the network').waitFor({ timeout: 15_000 });
    const banner = await page.locator('#confirming').innerText();
    expect(banner).toContain('12.5 USDT is waiting for its confirmations: 1 of 3 confirmations');
    expect(banner).toContain('Do not pay again. This page updates by itself.');
    expect(await page.locator('#waiting').isVisible()).toBe(false);
    expect(await state(o.id)).toMatchObject({ status: 'PENDING_PAY', paidAmount: '0', confirming: { amount: '12.5', confirmations: 1, required: CONFIRMATIONS } });
    // The page served afresh says so too, before its script runs.
    const fresh = await (await fetch(`${srv.url}/pay/${o.id}`)).text();
    expect(fresh).toMatch(/<div class="banner wait" id="confirming"><p class="title">Payment seen on the network<\/p><p><span id="seen-amount">12\.5<\/span> USDT is waiting for its confirmations: <span id="seen-depth">[12] of 3 confirmations<\/span>/);
    expect(fresh).toMatch(/<div class="banner wait" id="waiting" data-when="PENDING_PAY" hidden>/);
    // Its chain is read by this serve: the page says a payment is seen without anyone's help.
    expect(fresh).toContain('<p id="updates" hidden>This page updates by itself once the payment is confirmed on the network.</p>');
    // Without its script the page does not update by itself, and does not say it does.
    expect(fresh).toContain('Do not pay again.<span id="updates-seen" hidden> This page updates by itself.</span>');

    await pc.chain.mine(1);
    await page.getByText('2 of 3 confirmations').waitFor({ timeout: 15_000 });
    await pc.chain.mine(1);
    await page.getByText('Payment received').waitFor({ timeout: 15_000 });
    expect(await page.locator('#confirming').isVisible()).toBe(false);
    expect(await state(o.id)).toMatchObject({ status: 'PAID', paidAmount: '12.5', confirming: null });
    await w.context.close();
  });

  it('a reorg that drops the payment before its confirmations puts the page back to waiting', async () => {
    const o = orders[1]!;
    const p = pc.chain.provider;
    const w = await watchedContext(browser, { viewport: { width: 1280, height: 900 } });
    const page = await w.page();
    await page.goto(`${srv.url}/pay/${o.id}`);
    const snap = await p.send('evm_snapshot', []);
    await pay(pc.usdt, o.addresses.EVM!, 4_000_000n);
    await page.getByText('Payment seen on the network').waitFor({ timeout: 15_000 });
    await p.send('evm_revert', [snap]);
    await pc.chain.mine(CONFIRMATIONS + 2);
    await page.getByText('Waiting for your payment').waitFor({ timeout: 15_000 });
    expect(await page.locator('#confirming').isVisible()).toBe(false);
    expect(await state(o.id)).toMatchObject({ status: 'PENDING_PAY', paidAmount: '0', confirming: null });
    await w.context.close();
    const check = await runCli(['ledger', 'check', '--db', db]);
    expect(check.code, check.stderr).toBe(0);
  });

  it('an order that expires while its payment confirms says the payment was seen, not that it expired; then paid', async () => {
    // Made 55 s ago with a lifetime of a minute: it expires in 5 s.
    const { orders: [o] } = await ledgerWithOrders(db, ['7'], '1m', () => Date.now() - 55_000);
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(`${srv.url}/pay/${o!.id}`);
    await pay(pc.usdt, o!.addresses.EVM!, 7_000_000n);
    await page.getByText('Payment seen on the network').waitFor({ timeout: 15_000 });
    while ((await state(o!.id)).status !== 'EXPIRED') await new Promise((r) => setTimeout(r, 250));
    expect(await state(o!.id)).toMatchObject({ status: 'EXPIRED', paidAmount: '0', confirming: { amount: '7', confirmations: 1, required: CONFIRMATIONS } });
    // The open page, once it has polled the expired state, and the page served afresh.
    await expect.poll(() => page.locator('body').getAttribute('data-status'), { timeout: 15_000 }).toBe('EXPIRED');
    expect(await page.locator('#confirming').isVisible()).toBe(true);
    expect(await page.locator('#expired').isVisible()).toBe(false);
    expect(await page.locator('#waiting').isVisible()).toBe(false);
    // As usable as every other state (axe), and the page's script ran without a refusal or error.
    expect((await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    expect(w.console.filter((l) => /Content Security Policy|pageerror|Refused/.test(l))).toEqual([]);
    const fresh = await (await fetch(`${srv.url}/pay/${o!.id}`)).text();
    expect(fresh).toMatch(/<div class="banner wait" id="confirming"><p class="title">Payment seen on the network<\/p><p><span id="seen-amount">7<\/span> USDT is waiting for its confirmations/);
    expect(fresh).toMatch(/<div class="banner bad" id="expired" data-when="EXPIRED" hidden>/);
    expect(fresh).not.toMatch(/hidden hidden/);
    await pc.chain.mine(2);
    await page.getByText('Payment received').waitFor({ timeout: 15_000 });
    expect(await page.locator('#confirming').isVisible()).toBe(false);
    expect(await state(o!.id)).toMatchObject({ status: 'PAID', paidAmount: '7', confirming: null });
    await w.context.close();
  });

  it('an open page keeps asking every few seconds just after the expiry: a payment seen then is shown at once, not a quarter of a minute later', async () => {
    const { orders: [o] } = await ledgerWithOrders(db, ['3'], '1m', () => Date.now() - 57_000);
    const w = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    const page = await w.page();
    await page.goto(`${srv.url}/pay/${o!.id}`);
    await page.getByText('This payment request has expired').waitFor({ timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    await pay(pc.usdt, o!.addresses.EVM!, 3_000_000n);
    const seenAt = Date.now();
    await page.getByText('Payment seen on the network').waitFor({ timeout: 15_000 });
    expect(Date.now() - seenAt).toBeLessThan(6_000);
    expect(await page.locator('#expired').isVisible()).toBe(false);
    await pc.chain.mine(2);
    await page.getByText('Payment received').waitFor({ timeout: 15_000 });
    await w.context.close();
  });
});
