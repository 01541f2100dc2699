/**
 * What a merchant reads of a callback that could not be sent (attacker review of 2026-11-24,
 * F1). The sender records why: "refused: NAME resolves to 10.0.0.5, a private address", or
 * "cannot resolve NAME: ENOTFOUND". Read by the merchant through the signed callbacks reads,
 * that told it which names the service's resolver knows inside its network and their private
 * addresses: a merchant could map the service's network one notifyUrl at a time (a withdrawal
 * applied and rejected at once gives an event without any payment). The merchant now reads the
 * same words for both; the operator, on the ledger, still reads the detail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMerchant, asMerchant, EVM_TO, home, resolving, serve, stopAll, USDT_ETH, type Home, type Merchant, type Served } from './_support.js';

afterAll(stopAll);

const NOT_PUBLIC = 'not sent: the host of the notifyUrl has no public address the service sends to (it does not resolve, or resolves to a loopback, private or reserved address)';

let h: Home;
let m: Merchant;
let server: Served;
let remote: (args: string[]) => ReturnType<Home['cli']>;

beforeAll(async () => {
  h = home();
  Object.assign(h.env, resolving('intranet.corp'));
  m = await addMerchant(h, 'Shop');
  expect(await h.local(['--mch-id', m.mchId, 'balance', 'adjust', 'u1', '--amount', '+2', '--reason', 'seed', '--yes'])).toMatchObject({ code: 0 });
  server = await serve(h);
  remote = asMerchant(h, server, m);
  // One withdrawal to a name the resolver knows inside (127.0.0.1 here), one to a name it does not.
  for (const url of ['http://intranet.corp:8080/hook', 'http://no-such-host.corp/hook']) {
    const w = await remote(['--json', 'withdraw', 'apply', '--uid', 'u1', '--amount', '1', '--to', EVM_TO, '--chain-id', '1', '--token', USDT_ETH, '--notify-url', url]);
    expect(w, w.stderr).toMatchObject({ code: 0 });
    expect(await remote(['withdraw', 'reject', JSON.parse(w.stdout).id, '--yes'])).toMatchObject({ code: 0 });
  }
  // Until the sender has tried both.
  for (let i = 0; i < 100; i++) {
    const list = JSON.parse((await h.local(['--json', 'callbacks', 'list'])).stdout) as { lastError: string | null }[];
    if (list.length === 2 && list.every((c) => c.lastError)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

describe("a callback the service would not send, as the merchant reads it", () => {
  it('the operator reads why, on the ledger: the address a name resolved to, or that it did not resolve', async () => {
    const list = JSON.parse((await h.local(['--json', 'callbacks', 'list'])).stdout) as { url: string; lastError: string }[];
    const of = (host: string) => list.find((c) => c.url.includes(host))!.lastError;
    expect(of('intranet.corp')).toMatch(/^refused: intranet\.corp resolves to 127\.0\.0\.1, a loopback address/);
    expect(of('no-such-host.corp')).toBe('cannot resolve no-such-host.corp: ENOTFOUND');
  });

  it('the merchant reads the same words for both, in the list and in show: no address, no resolver error', async () => {
    const r = await remote(['--json', 'callbacks', 'list']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const list = JSON.parse(r.stdout) as { id: string; withdrawalId: string; lastError: string }[];
    expect(list.map((c) => c.lastError)).toEqual([NOT_PUBLIC, NOT_PUBLIC]);
    for (const c of list) {
      const show = await remote(['--json', 'callbacks', 'show', c.id]);
      expect(show, show.stderr).toMatchObject({ code: 0 });
      const shown = JSON.parse(show.stdout) as { lastError: string; history: { error: string | null }[] };
      expect(shown.lastError).toBe(NOT_PUBLIC);
      expect(shown.history.map((a) => a.error)).toEqual(shown.history.map(() => NOT_PUBLIC));
      expect(show.stdout).not.toMatch(/127\.0\.0\.1|ENOTFOUND|loopback address/);
    }
  });
});
