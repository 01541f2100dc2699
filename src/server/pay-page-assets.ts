import { createHash } from 'node:crypto';

/**
 * The payment page's only style sheet and script, inline so that the page is one request, and
 * allowed by their hashes in the Content-Security-Policy: no other script or style can run,
 * whatever a merchant value smuggles into the page. Both are constants: nothing is ever
 * interpolated into them (the script reads its data from attributes and the DOM).
 */
export const PAGE_CSS = `
:root{color-scheme:light;--ink:#14171f;--muted:#535b6b;--line:#dfe3ea;--bg:#f3f5f8;--card:#fff;--accent:#1f4fd1;--ok:#0d6b3a;--okbg:#e6f4ec;--warn:#8a4b00;--warnbg:#fdf2e1;--bad:#a1232b;--badbg:#fbe9ea}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:960px;margin:0 auto;padding:16px 12px 32px}
@media (min-width:720px){main{padding:40px 24px 48px}}
.card{background:var(--card);border:1px solid var(--line);border-radius:14px;padding:20px;box-shadow:0 1px 2px rgba(20,23,31,.05)}
@media (min-width:720px){.card{padding:28px 32px}}
.merchant{display:flex;align-items:center;gap:14px;margin-bottom:16px}
.logo{width:56px;height:56px;object-fit:contain;border-radius:10px;background:#fff;border:1px solid var(--line);flex:none}
.merchant-name{font-size:1.125rem;font-weight:600;margin:0;overflow-wrap:anywhere}
.eyebrow{margin:0;color:var(--muted);font-size:.875rem}
.summary{display:grid;gap:16px}
@media (min-width:720px){.summary{grid-template-columns:1fr auto;align-items:end}}
h1{margin:0;font-size:1rem;font-weight:500;color:var(--muted)}
.amount{display:block;color:var(--ink);font-size:2.25rem;font-weight:700;letter-spacing:-.01em;line-height:1.15;overflow-wrap:anywhere}
.amount .asset{font-size:1.25rem;font-weight:600;color:var(--muted);margin-left:.25em}
.facts{margin:12px 0 0;display:grid;gap:4px 16px;grid-template-columns:auto 1fr;font-size:.9375rem}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
.timer{margin:0;font-size:.9375rem;color:var(--muted)}
.timer time{font-variant-numeric:tabular-nums;font-weight:700;color:var(--ink);font-size:1.25rem}
.status{margin:20px 0 0}
.status:empty{display:none}
.banner{border-radius:10px;padding:14px 16px;margin:0 0 12px;border:1px solid transparent}
.banner p{margin:0}
.banner p+p{margin-top:6px}
.banner .title{font-weight:700;font-size:1.0625rem}
.banner.wait{background:#eef2fb;border-color:#d4ddf5}
.banner.ok{background:var(--okbg);border-color:#b9dfc8;color:var(--ok)}
.banner.ok p:not(.title){color:var(--ink)}
.banner.warn{background:var(--warnbg);border-color:#f1d4a6}
.banner.warn .title{color:var(--warn)}
.banner.bad{background:var(--badbg);border-color:#f0c4c7}
.banner.bad .title{color:var(--bad)}
.redirect{margin:0 0 12px}
a{color:var(--accent);text-underline-offset:2px}
a:focus-visible,button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
h2{font-size:1.125rem;margin:28px 0 4px}
.hint{margin:0 0 16px;color:var(--muted);font-size:.9375rem}
.methods{display:grid;gap:16px}
@media (min-width:720px){.methods{grid-template-columns:repeat(auto-fit,minmax(380px,1fr))}}
.method{border:1px solid var(--line);border-radius:12px;padding:18px;display:grid;gap:12px;align-content:start}
.method h3{margin:0;font-size:1rem}
.qr{width:216px;max-width:100%;aspect-ratio:1;margin:0 auto;padding:8px;background:#fff;border:1px solid var(--line);border-radius:8px}
.qr svg{display:block;width:100%;height:100%}
.addr{display:grid;gap:8px}
.addr code{display:block;font:600 .9375rem/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:10px 12px;word-break:break-all;user-select:all}
.copy{justify-self:start;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:8px;padding:9px 16px;min-height:44px;cursor:pointer}
.copy:hover{background:#173ea6}
.nets{margin:0;padding:0;list-style:none;display:grid;gap:8px;font-size:.875rem}
.nets li{border-top:1px solid var(--line);padding-top:8px}
.nets .net{font-weight:600}
.nets code{font:.8125rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all;color:var(--muted)}
.muted{color:var(--muted)}
.foot{margin:20px 0 0;font-size:.8125rem;color:var(--muted);text-align:center;overflow-wrap:anywhere}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
[hidden]{display:none!important}
`.trim();

/**
 * What the page carries of its script: without its comments and indentation (~1.2 of ~5.6 KB,
 * every page). Line breaks stay, so no statement runs into the next; the script has no template
 * or multi-line string, so no text of its own changes.
 */
const tidy = (source: string) =>
  source
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
    .join('\n');

export const PAGE_SCRIPT = tidy(`
(function () {
  'use strict';
  var body = document.body;
  var stateUrl = body.getAttribute('data-state');
  var expires = Number(body.getAttribute('data-expires'));
  // Server time minus this device's time, from every answer of the state (asked for at once below):
  // the countdown follows the server, not a wrong device clock.
  var skew = 0;
  var status = body.getAttribute('data-status');
  var polling = false, timer = 0, delay = 3000, redirecting = false, confirming = false;
  function $(id) { return document.getElementById(id); }
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function settled() { return status === 'PAID' || status === 'REFUNDED'; }

  // The time left by the server's clock (skew), drawn; returns it in ms.
  function draw() {
    var left = $('left');
    var ms = expires - (Date.now() + skew);
    if (left) {
      var s = Math.max(0, Math.ceil(ms / 1000));
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      left.textContent = (h ? h + ':' + pad(m) : String(m)) + ':' + pad(s % 60);
    }
    return ms;
  }

  function tick() {
    if (draw() <= 0 && status === 'PENDING_PAY') poll();
  }

  function apply(d) {
    status = d.status;
    confirming = !!d.confirming;
    body.setAttribute('data-status', status);
    var blocks = document.querySelectorAll('[data-when]');
    for (var i = 0; i < blocks.length; i++) {
      blocks[i].hidden = blocks[i].getAttribute('data-when').split(' ').indexOf(status) < 0;
    }
    // The rest is asked for only while the order can be paid; once expired, only what arrived is said.
    var arrived = d.paidAmount !== '0';
    var p = $('partial');
    if (p) {
      p.hidden = !(arrived && status === 'PENDING_PAY');
      $('paid-amount').textContent = d.paidAmount;
      $('due-amount').textContent = d.dueAmount;
    }
    var e = $('expired-partial');
    if (e) {
      e.hidden = !arrived;
      $('expired-paid').textContent = d.paidAmount;
    }
    // A payment seen on chain but short of its confirmations: the payer is told to wait, not to pay
    // again; on an expired order too, instead of the expiry (a payment made in time still pays it).
    var c = $('confirming'), seen = (status === 'PENDING_PAY' || status === 'EXPIRED') && d.confirming;
    if (c) {
      c.hidden = !seen;
      if (seen) {
        $('seen-amount').textContent = d.confirming.amount;
        $('seen-depth').textContent = d.confirming.confirmations + ' of ' + (d.confirming.required || '?') + ' confirmations';
      }
    }
    var w = $('waiting');
    if (w && seen) w.hidden = true;
    var wt = $('waiting-title');
    if (wt) wt.textContent = arrived ? 'Waiting for the rest of your payment' : 'Waiting for your payment';
    retitle(d, arrived);
    var x = $('expired');
    if (x && seen) x.hidden = true;
    var send = $('send-amount');
    if (send) send.textContent = d.dueAmount;
    if (status === 'PAID') goBack();
  }

  // As the server titles the page (pay-page.ts titleOf), the merchant's name kept from the title it wrote.
  var amount = body.getAttribute('data-amount'), asset = body.getAttribute('data-asset');
  var named = document.title.indexOf(' to \u2068');
  var toMerchant = named >= 0 ? document.title.slice(named) : '';
  function retitle(d, arrived) {
    var what = status === 'PENDING_PAY'
      ? (arrived ? 'Pay the remaining ' + d.dueAmount + ' ' + asset : 'Pay ' + amount + ' ' + asset)
      : (status === 'PAID' ? 'Paid' : status === 'EXPIRED' ? 'Expired' : 'Refunded') + ': ' + amount + ' ' + asset;
    document.title = what + toMerchant;
  }

  function next() {
    clearTimeout(timer);
    // Expired, every 15 s; but in the first two minutes after the expiry a payment made just
    // before it (or just after: it still pays, late) is likely on its way: as often as before.
    var quiet = status === 'EXPIRED' && !confirming && Date.now() + skew > expires + 120000;
    if (!settled()) timer = setTimeout(poll, quiet ? 15000 : delay);
  }

  function poll() {
    if (polling) return;
    polling = true;
    fetch(stateUrl, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.json(); })
      .then(function (env) {
        polling = false;
        if (env && env.code === 1 && env.data) {
          if (typeof env.systemTime === 'number') skew = env.systemTime - Date.now();
          delay = 3000;
          apply(env.data);
          // Redrawn with the server's clock at once, not at the next second's tick (a device whose
          // clock is wrong showed its own countdown until then). Drawn only: asking again is the
          // tick's and next()'s, so an answer never starts another request by itself.
          draw();
        }
        next();
      }, function () {
        polling = false;
        delay = Math.min(delay * 2, 30000);
        next();
      });
  }

  // Only ever to the order's own redirect URL, which the server put in this link, and only http(s).
  function goBack() {
    var a = $('return');
    if (!a || redirecting) return;
    var url;
    try { url = new URL(a.href); } catch (e) { return; }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
    redirecting = true;
    var secs = $('secs'), left = Number(secs ? secs.textContent : 5) || 5;
    var t = setInterval(function () {
      left -= 1;
      if (secs) secs.textContent = String(Math.max(left, 0));
      if (left <= 0) { clearInterval(t); location.assign(url.href); }
    }, 1000);
  }

  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i++) {
    (function (button) {
      var target = $(button.getAttribute('data-copy'));
      var label = button.textContent;
      button.hidden = false;
      button.addEventListener('click', function () {
        var text = target.textContent;
        var done = function () {
          button.textContent = 'Copied';
          var said = $('said');
          if (said) said.textContent = 'Address copied';
          setTimeout(function () { button.textContent = label; }, 2000);
        };
        var select = function () {
          var range = document.createRange();
          range.selectNodeContents(target);
          var sel = getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
        };
        if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, select);
        else select();
      });
    })(buttons[i]);
  }

  var until = $('until');
  if (until) {
    try {
      var far = expires - (Date.now() + skew) > 20 * 3600 * 1000;
      until.textContent = new Date(expires).toLocaleString(undefined, far ? { dateStyle: 'medium', timeStyle: 'short' } : { timeStyle: 'short' });
    } catch (e) { /* keep the server's UTC text */ }
  }
  document.addEventListener('visibilitychange', function () { if (!document.hidden && !settled()) poll(); });
  // The page itself is the same for every request of one state: the live countdown replaces its "pay by".
  var live = $('live-left'), by = $('pay-by'), updates = $('updates'), updatesSeen = $('updates-seen');
  if (live) live.hidden = false;
  // Said only where it is true: a page without its script does not update by itself.
  if (updates) updates.hidden = false;
  if (updatesSeen) updatesSeen.hidden = false;
  if (by) by.hidden = true;
  tick();
  setInterval(tick, 1000);
  if (status === 'PAID') goBack();
  if (settled()) next();
  else poll();
})();
`);

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export const CSS_HASH = hashOf(PAGE_CSS);
export const SCRIPT_HASH = hashOf(PAGE_SCRIPT);
