import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from '../context.js';
import { AppError, usage } from '../core/errors.js';
import { duplicateKey, duplicateRefusal } from '../core/json-keys.js';
import { TIMESTAMP_WINDOW_MS } from '../core/nonce.js';
import { printable } from '../remote/text.js';
import { verify } from '../signing/index.js';
import { jsonLine } from './output.js';
import { readSecret } from './sign/input.js';

const MAX_BODY = 64 * 1024;
/** Events remembered as handled, for dropping a retry of one already passed on. */
const MAX_HANDLED = 10_000;

/**
 * `cryptopay listen` (like `stripe listen`): a receiver on 127.0.0.1 for a developer's machine.
 * Each callback's signature is checked with the merchant's secret (CRYPTOPAY_SECRET,
 * --secret-file or the profile in force, else the local ledger's secret of the body's mchId) and
 * printed as one line;
 * with --forward-to, a verified callback is passed on, unchanged, to the developer's app and
 * answered with the app's status. A bad signature is answered 401 and never forwarded; so are
 * an attempt whose timestamp is more than 5 minutes off or whose nonce was seen (a replay), and
 * a signed body that is not a callback (400). A retry of an event already handled is answered
 * 200 and not passed on again, as docs/api.md tells a receiver to do.
 */
export async function run(ctx: Context, opts: { port?: string; forwardTo?: string }): Promise<void> {
  const portText = opts.port ?? '4242';
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw usage('--port must be a number from 0 to 65535');
  if (opts.forwardTo !== undefined) {
    try {
      const u = new URL(opts.forwardTo);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw usage('--forward-to must be an http or https URL');
    }
  }
  const fixed = await readSecret(ctx);
  const fixedSecret = fixed?.secret;
  if (fixed?.from) ctx.io.stderr.write(`note: callbacks are checked with the secret of ${fixed.from}\n`);
  const ledger = fixedSecret ? undefined : await ctx.local('listen (without CRYPTOPAY_SECRET or --secret-file, secrets come from the ledger)');
  const secretOf = (mchId: unknown) => fixedSecret ?? (typeof mchId === 'string' ? ledger?.merchantSecret(mchId) : undefined);
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);
  /** Nonces of the attempts taken, until their timestamp leaves the window. */
  const nonces = new Map<string, number>();
  /** eventIds handled: received, or taken by the app (--forward-to). */
  const handled = new Set<string>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const answer = (status: number, text: string) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: status < 300, msg: text }));
    if (req.method !== 'POST') return answer(405, 'callbacks are POSTed');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) {
        // The rest of the body is never read: the connection closes after the answer, as serve's
        // does, or the next request on it waited behind the unread bytes (an attacker review).
        res.setHeader('Connection', 'close');
        return answer(413, 'body too large');
      }
      chunks.push(c as Buffer);
    }
    const raw = Buffer.concat(chunks);
    let body: Record<string, unknown>;
    const text = raw.toString('utf8');
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
      body = parsed as Record<string, unknown>;
    } catch {
      line({ valid: false, reason: 'not a JSON object' }, {});
      return answer(400, 'not a JSON object');
    }
    // A callback the service signed never gives a field twice: whoever sent this one did not.
    const twice = duplicateKey(text, body);
    if (twice !== undefined) {
      line({ valid: false, reason: duplicateRefusal(twice) }, {});
      return answer(400, duplicateRefusal(twice));
    }
    const secret = secretOf(body.mchId);
    let valid = false;
    try {
      valid = !!secret && verify(body, secret);
    } catch {
      valid = false;
    }
    if (!valid) {
      line({ valid: false, reason: secret ? 'signature does not match' : `no secret for merchant ${String(body.mchId)}` }, body);
      return answer(401, 'signature does not match');
    }
    // What docs/api.md tells a receiver to check besides the signature, done here as a receiver
    // should: a request body signed with the same secret is not a callback; an attempt is fresh
    // and used once; an event already handled is acknowledged and not passed on again.
    if (typeof body.event !== 'string' || typeof body.eventId !== 'string') {
      line({ valid: false, reason: 'signed, but not a callback: it has no event and eventId' }, body);
      return answer(400, 'not a callback: no event and eventId');
    }
    const now = ctx.now();
    const at = typeof body.timestamp === 'number' ? body.timestamp : Number.NaN;
    if (!(Math.abs(now - at) <= TIMESTAMP_WINDOW_MS)) {
      line({ valid: false, reason: `timestamp ${String(body.timestamp)} is more than 5 minutes off this machine's clock: a replay, or a clock that is off` }, body);
      return answer(401, 'timestamp out of window');
    }
    for (const [n, until] of nonces) if (until < now) nonces.delete(n);
    const nonceKey = `${String(body.mchId)} ${String(body.nonce)}`;
    if (nonces.has(nonceKey)) {
      line({ valid: false, reason: 'this nonce was seen already: a replay of an attempt' }, body);
      return answer(401, 'nonce already used');
    }
    nonces.set(nonceKey, at + TIMESTAMP_WINDOW_MS);
    if (handled.has(body.eventId)) {
      line({ valid: true, duplicate: true }, body);
      return answer(200, 'already handled');
    }
    const done = () => {
      handled.add(body.eventId as string);
      if (handled.size > MAX_HANDLED) handled.delete(handled.values().next().value!);
    };
    if (!opts.forwardTo) {
      done();
      line({ valid: true }, body);
      return answer(200, 'received');
    }
    let status: number;
    try {
      const r = await fetch(opts.forwardTo, {
        method: 'POST', body: raw, redirect: 'manual', headers: { 'Content-Type': 'application/json' }, signal: AbortSignal.timeout(10_000),
      });
      status = r.status;
      await r.arrayBuffer().catch(() => undefined);
    } catch (e) {
      line({ valid: true, forwarded: `failed: ${(e as Error).message}` }, body);
      return answer(502, 'forwarding failed');
    }
    // Handled once the app took it; a refusal by the app is passed on again with the next retry.
    if (status >= 200 && status < 300) done();
    line({ valid: true, forwarded: status }, body);
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: status >= 200 && status < 300, msg: `forwarded: ${status}` }));
  };

  /** One line per callback: for a person, or a JSON object per line for scripts. */
  const line = (verdict: { valid: boolean; reason?: string; forwarded?: number | string; duplicate?: boolean }, body: Record<string, unknown>) => {
    const at = new Date(ctx.now()).toISOString();
    if (ctx.globals.json) {
      ctx.io.stdout.write(jsonLine({ at, ...verdict, event: body.event ?? null, eventId: body.eventId ?? null, mchId: body.mchId ?? null, body }));
      return;
    }
    const subject = body.id ?? '-';
    const parts = [at, body.event ?? '-', body.eventId ?? '-', subject, body.status ?? '-', verdict.valid ? 'signature ok' : `REFUSED: ${verdict.reason}`];
    if (verdict.forwarded !== undefined) parts.push(`forwarded ${verdict.forwarded}`);
    if (verdict.duplicate) parts.push('already handled: not passed on again');
    ctx.io.stdout.write(`${printable(parts.map(String).join(' '))}\n`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  const stopping = ctx.stopSignal();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      // Exit 3, as serve: the port is the machine's state, not a mistake of the command line.
      reject(e.code === 'EADDRINUSE' ? new AppError('unavailable', `cannot listen on 127.0.0.1:${portText}: the port is in use; pick another with --port, or --port 0 for any free one`) : e),
    );
    server.listen(Number(portText), '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  err(`listening for callbacks on ${url}`);
  err(`give it as notifyUrl (serve --dev or --allow-private-callbacks), or try: cryptopay callbacks test --url ${url} --allow-private-callbacks`);
  if (opts.forwardTo) err(`verified callbacks are forwarded to ${printable(opts.forwardTo)}`);
  const signal = await stopping;
  err(`${signal}: stopping`);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
