import { gzipSync } from 'node:zlib';
import { Lru } from '../core/lru.js';
import { isPlainHost } from '../core/plain-host.js';
import { qrSvg } from '../qr/svg.js';
import { html, httpUrl, isolated, trusted, type Html } from './html.js';
import { CSS_HASH, PAGE_CSS, PAGE_SCRIPT, SCRIPT_HASH } from './pay-page-assets.js';
import type { PayMethod, PayPageModel } from './pay-page-data.js';

/** A rendered page: the HTML and the headers that must travel with it. */
export interface Page {
  status: number;
  body: string | Buffer;
  headers: Record<string, string>;
}

/**
 * The source allowed for the logo: the exact URL where CSP can express it (no query or
 * fragment, no character that separates CSP directives), else the logo's origin.
 */
function logoSource(logo: URL): string {
  const exact = `${logo.origin}${logo.pathname}`;
  return /^[A-Za-z0-9\-._~%!$&'()*+=:@/[\]]+$/.test(logo.pathname) && !/[;,]/.test(exact) ? exact : logo.origin;
}

/** The logo, when its host can stand in the policy; else none. */
function plainLogo(logo: URL | undefined): URL | undefined {
  return logo && isPlainHost(logo.hostname) ? logo : undefined;
}

/**
 * Only this page's own script and style run (by hash), it talks only to its own origin, and
 * loads no image but the logo. No frames, forms or base URL changes.
 */
export function contentSecurityPolicy(logo?: URL, script = true): string {
  return [
    "default-src 'none'",
    script ? `script-src ${SCRIPT_HASH}` : undefined,
    `style-src ${CSS_HASH}`,
    logo ? `img-src ${logoSource(logo)}` : undefined,
    script ? "connect-src 'self'" : undefined,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ]
    .filter(Boolean)
    .join('; ');
}

function headers(csp: string): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': csp,
    // The order id in the address is the capability to see the order: never sent to the logo's host.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    // The same URL answers gzip or plain by the request's Accept-Encoding.
    Vary: 'Accept-Encoding',
  };
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * An address's QR code never changes, and drawing one (the symbol, its error correction, eight
 * masks scored) was over a third of a page: kept for the addresses of the pages served lately
 * (a payer reloads the page; ~3 KB each).
 */
const qrCodes = new Lru<string, string>(512);

function qrOf(text: string): string {
  let svg = qrCodes.get(text);
  if (svg === undefined) {
    svg = qrSvg(text);
    qrCodes.set(text, svg);
  }
  return svg;
}

/** `data-when` names the statuses a block shows in; the script flips them as the order moves. */
/** Shown in these statuses (the script follows the status it polls), and `unless` is false. */
const when = (statuses: string, current: string, unless = false) =>
  html`data-when="${statuses}"${statuses.split(' ').includes(current) && !unless ? '' : trusted(' hidden')}`;

function method(m: PayMethod, asset: string): Html {
  const key = m.chainType.toLowerCase();
  const names = m.networks.map((n) => n.name);
  const where = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? m.chainType);
  return html`<article class="method" aria-labelledby="m-${key}">
<h3 id="m-${key}">Pay on ${where}</h3>
<div class="qr" role="img" aria-label="QR code of the ${m.chainType} address">${trusted(qrOf(m.address))}</div>
<div class="addr">
<span class="muted" id="l-${key}">${m.chainType} address</span>
<code id="a-${key}" aria-labelledby="l-${key}">${m.address}</code>
<button type="button" class="copy" data-copy="a-${key}" hidden>Copy ${m.chainType} address</button>
</div>
<p class="hint">${m.networks.length > 1 ? `This one address receives ${asset} on each of these networks:` : `Send ${asset} on this network only:`}</p>
<ul class="nets">${m.networks.map(
    (n) => html`<li><span class="net">${n.name}</span> <span class="muted">(chain ${n.chainId})</span>${n.tokens.map(
      (t) => html`<br><span class="muted">${t.symbol} contract</span> <code>${t.address}</code>`,
    )}</li>`,
  )}</ul>
</article>`;
}

/** "1 of 3 confirmations" (a chain since removed from the config has no known depth). */
function depth(c: PayPageModel['state']['confirming']): string {
  return c ? `${c.confirmations} of ${c.required || '?'} confirmations` : '';
}

/** A page made once for a model, and served while the ledger's state is exactly that model. */
interface KeptPage {
  /** The model the page was made from: it is reused only for an equal one. */
  model: PayPageModel;
  page: Page;
  /** The page gzip-coded, made when a client that takes gzip first asks for it. */
  gzipped?: Page;
}

/**
 * Pages served lately, by order id. A page is a function of its model alone (the order's
 * status, amounts, expiry, addresses, merchant values, the networks), not of the time it is
 * served: the script takes the server's clock from the state it polls at once, and without
 * JavaScript the page gives the deadline, not a countdown that would stand still. Each request
 * still reads the model from the ledger, and a page is reused only if the model is exactly the
 * one it was made from, so a page never shows a state other than the ledger's. At most 64
 * (~18 KB each).
 */
const pages = new Lru<string, KeptPage>(64);

/** The page of a model; gzip-coded when the client takes gzip (`acceptsGzip` of its request). */
export function renderPayPage(p: PayPageModel, gzip = false): Page {
  let kept = pages.get(p.id);
  if (!kept || !same(kept.model, p)) {
    kept = { model: p, page: pageOf(p) };
    pages.set(p.id, kept);
  }
  if (!gzip) return kept.page;
  kept.gzipped ??= gzippedOf(kept.page);
  return kept.gzipped;
}

/**
 * A page gzip-coded, once per kept page: ~16 KB of HTML becomes ~6 KB, which a payer on a slow
 * mobile link waits for a third as long, and which the server writes and the kernel copies a
 * third of. Level 9: it is made once and served many times.
 */
function gzippedOf(page: Page): Page {
  return { status: page.status, body: gzipSync(page.body, { level: 9 }), headers: Object.freeze({ ...page.headers, 'Content-Encoding': 'gzip' }) };
}

/**
 * Deep equality of two models (plain data: strings, numbers, null, arrays, objects), every field
 * compared whatever the model comes to hold; the networks lists are shared per registry, so
 * they are mostly the same object.
 */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * What the tab says, before the merchant's name: what is asked of the payer now (the rest, once
 * part arrived: a tab that asked for the whole amount had the payer send it again), or what became
 * of the order. The page's script says the same when the state changes (pay-page-assets.ts).
 */
function titleOf(s: PayPageModel['state']): string {
  if (s.status === 'PENDING_PAY') return s.paidAmount !== '0' ? `Pay the remaining ${s.dueAmount} ${s.asset}` : `Pay ${s.amount} ${s.asset}`;
  const done = s.status === 'PAID' ? 'Paid' : s.status === 'EXPIRED' ? 'Expired' : 'Refunded';
  return `${done}: ${s.amount} ${s.asset}`;
}

function pageOf(p: PayPageModel): Page {
  const s = p.state;
  // A logo stored before create checked its host (or written into the file) is left out, never
  // put into the policy.
  const logo = plainLogo(httpUrl(p.logo));
  const back = httpUrl(p.redirectUrl);
  const pending = s.status === 'PENDING_PAY';
  // Asking for the rest only while the order can still be paid; once expired the banner there says what arrived.
  const partial = pending && s.paidAmount !== '0';
  // Merchant text in the page's sentences, each isolated (src/server/html.ts); the title cannot
  // hold markup, so there the name is isolated by U+2068 ... U+2069.
  const name = isolated(p.merchantName);
  const oid = isolated(p.oid);
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${back && s.status === 'PAID' && html`<noscript><meta http-equiv="refresh" content="5;url=${back.href}"></noscript>`}
<title>${titleOf(s)} to \u2068${p.merchantName}\u2069</title>
<style>${trusted(PAGE_CSS)}</style>
</head>
<body data-state="${encodeURIComponent(p.id)}/state" data-status="${s.status}" data-expires="${s.expiredAt}" data-amount="${s.amount}" data-asset="${s.asset}">
<main>
<div class="card">
<header class="merchant">
${logo && html`<img class="logo" src="${logo.href}" alt="" width="56" height="56" referrerpolicy="no-referrer">`}
<div><p class="merchant-name">${name}</p><p class="eyebrow">Payment request</p></div>
</header>
<section class="summary" aria-labelledby="amount-title">
<div>
<h1 id="amount-title">Amount <span class="amount">${s.amount}<span class="asset">${s.asset}</span></span></h1>
<dl class="facts">
<dt>Order number</dt><dd>${oid}</dd>
${p.memo && html`<dt>Note</dt><dd>${isolated(p.memo)}</dd>`}
</dl>
</div>
<p class="timer" ${when('PENDING_PAY', s.status)}><span id="live-left" hidden>Time left <time id="left" datetime="${new Date(s.expiredAt).toISOString()}"></time><br>until</span><span id="pay-by">Pay by</span> <span id="until">${utc(s.expiredAt)}</span></p>
</section>
${p.testOnly && html`<div class="banner bad" id="test-only"><p class="title">Test money only</p><p>This is a development sandbox. Its addresses belong to a publicly known test wallet: anything sent to them on a real network can be taken by anyone. Pay only with test tokens on a development network.</p></div>`}
<div class="status" role="status" aria-live="polite">
<div class="banner wait" id="waiting" ${when('PENDING_PAY', s.status, !!s.confirming)}><p class="title" id="waiting-title">${partial ? 'Waiting for the rest of your payment' : 'Waiting for your payment'}</p><p id="updates" hidden>${p.watched ? 'This page updates by itself once the payment is confirmed on the network.' : 'This page updates by itself once the shop has recorded your payment.'}</p></div>
<div class="banner wait" id="confirming"${s.confirming ? '' : trusted(' hidden')}><p class="title">Payment seen on the network</p><p><span id="seen-amount">${s.confirming?.amount ?? '0'}</span> ${s.asset} is waiting for its confirmations: <span id="seen-depth">${depth(s.confirming)}</span>. Do not pay again.<span id="updates-seen" hidden> This page updates by itself.</span></p></div>
<div class="banner warn" id="partial"${partial ? '' : trusted(' hidden')}><p class="title">Partly paid</p><p><span id="paid-amount">${s.paidAmount}</span> ${s.asset} arrived; <strong><span id="due-amount">${s.dueAmount}</span> ${s.asset}</strong> is still due. Send the rest to the same address.</p></div>
<div class="banner ok" ${when('PAID', s.status)}><p class="title">Payment received</p><p>Thank you. Order ${oid} is paid.</p></div>
<div class="banner bad" id="expired" ${when('EXPIRED', s.status, !!s.confirming)}><p class="title">This payment request has expired</p><p id="expired-partial"${s.paidAmount !== '0' ? '' : trusted(' hidden')}><span id="expired-paid">${s.paidAmount}</span> ${s.asset} of the ${s.amount} ${s.asset} arrived.</p><p>Do not send anything to its addresses any more. If you already paid, your payment is not lost: contact ${name} with order number ${oid} and the transaction hash of your payment.</p></div>
<div class="banner ok" ${when('REFUNDED', s.status)}><p class="title">This order was refunded</p><p>Contact ${name} about order ${oid} if you have questions.</p></div>
<p class="sr-only" id="said"></p>
</div>
${back && html`<p class="redirect" ${when('PAID', s.status)}>Returning you to ${back.host} in <span id="secs">5</span> seconds. <a id="return" href="${back.href}" rel="noreferrer">Return to ${name} now</a></p>`}
${pending && html`<section id="pay" ${when('PENDING_PAY', s.status)} aria-labelledby="pay-title">
<h2 id="pay-title">How to pay</h2>
<p class="hint">Send <span id="send-amount">${s.dueAmount}</span> ${s.asset} to the address below, on one of the networks listed under it. Other tokens, or other networks, cannot be credited to this order.</p>
<div class="methods">${p.methods.map((m) => method(m, s.asset))}</div>
${p.testOnly && p.methods.length === 0 && html`<p class="hint">This server has no development network to pay this order on.</p>`}
${!p.testOnly && p.methods.length === 0 && html`<p class="hint">There is no network to pay this order on here: ask the shop how to pay.</p>`}
</section>`}
${(pending || s.confirming) && html`<noscript><p class="hint">This page does not update by itself without JavaScript: reload it to see whether your payment has arrived.</p></noscript>`}
</div>
<p class="foot">Payment ${p.id}</p>
</main>
<script>${trusted(PAGE_SCRIPT)}</script>
</body>
</html>
`;
  // Bytes once: each request writes them as they are, with their length known.
  const bytes = Buffer.from(page.text, 'utf8');
  return { status: 200, body: bytes, headers: Object.freeze(headers(contentSecurityPolicy(logo))) };
}

/** An id that names no order: a plain page, the same for every such id. */
export function renderNotFound(): Page {
  const body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment not found</title>
<style>${trusted(PAGE_CSS)}</style>
</head>
<body>
<main>
<div class="card">
<h1 class="merchant-name">Payment not found</h1>
<p>There is no payment request at this address. Check the link you were given, or ask the shop for a new one.</p>
</div>
</main>
</body>
</html>
`;
  return { status: 404, body: body.text, headers: headers(contentSecurityPolicy(undefined, false)) };
}
