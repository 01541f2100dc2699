import { describe, expect, it } from 'vitest';
import { expectOk, expectRefused, nextOid, snapshot, useServer, EVM_TO, USDT_ETH, type Merchant, type TestServer } from './helpers.js';

/**
 * Found by an outside review: an oid or a uid could hold a bidirectional override (U+202E), a
 * zero-width space or a line separator. The payment page showed such an oid as the payer's
 * "Order number", reversed or with a hidden difference; operators and support staff compare
 * uids by eye. Ids are refused with them at creation; merchant text (name, memo, oid) on the
 * page is isolated, so an override in one value cannot reorder the page's own words around it.
 */
describe('invisible and direction-changing characters', () => {
  let s: TestServer;
  let m: Merchant;
  useServer(['Shop'], {}, (srv, [mm]) => {
    s = srv;
    m = mm!;
  });

  const refusal = (field: string) =>
    `${field} must not contain invisible or direction-changing characters (such as U+202E or U+200B): people read it, on payment pages and in the CLI`;

  it.each([
    ['/api/v1/order', { oid: 'INV-\u202e1002', uid: 'u1', amount: '1' }, 'oid'],
    ['/api/v1/order', { oid: 'INV-\u2066x\u2069', uid: 'u1', amount: '1' }, 'oid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'alice\u200b', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'u1\u2028', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: '\ufeffu1', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'u\u200f1', amount: '1' }, 'uid'],
    ['/api/v1/withdraw/apply', { uid: 'w\u202d1', amount: '1', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }, 'uid'],
    // Found by a code review: every other invisible format character too (deprecated format
    // controls, an annotation anchor, the grapheme joiner, the Hangul filler, a tag character).
    ['/api/v1/order', { oid: nextOid(), uid: 'u\u206a1', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'u\ufff91', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'u\u034f1', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: nextOid(), uid: 'u\u31641', amount: '1' }, 'uid'],
    ['/api/v1/order', { oid: 'INV-1\u{E0041}x', uid: 'u1', amount: '1' }, 'oid'],
  ])('%s refuses %j, naming the field; nothing changes', async (path, fields, field) => {
    const before = snapshot(s.ledger);
    expectRefused(await s.post(path, s.signed(m, fields)), 400, refusal(field));
    expect(snapshot(s.ledger)).toEqual(before);
  });

  it('takes the joiners scripts and emoji need (U+200C, U+200D) and right-to-left text itself', async () => {
    expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'dev\u{1F469}\u200d\u{1F4BB}', amount: '1' })));
    expectOk(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: '\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645', amount: '1' })));
    expectOk(await s.post('/api/v1/order', s.signed(m, { oid: 'طلب-1', uid: 'u1', amount: '1' })));
  });

  it('the page isolates each merchant value, so an override in a name or a memo stops at its end', async () => {
    const evil = await s.addMerchant({ name: 'Shop\u202eevil' });
    const o = expectOk(await s.post('/api/v1/order', s.signed(evil, { oid: nextOid(), uid: 'u1', amount: '1', memo: 'note \u202e 100 USDT' })));
    const text = (await s.fetch(`/pay/${o.id}`)).text;
    const times = (v: string) => text.split(v).length - 1;
    // Every appearance of the name, the memo and the oid is isolated: in <bdi> in the page's
    // sentences, by U+2068 ... U+2069 in the title, which cannot hold markup.
    expect(times('Shop\u202eevil')).toBeGreaterThan(2);
    expect(times('<bdi>Shop\u202eevil</bdi>') + times('\u2068Shop\u202eevil\u2069')).toBe(times('Shop\u202eevil'));
    expect(text).toContain('<title>Pay 1 USDT to \u2068Shop\u202eevil\u2069</title>');
    expect(times('<bdi>note \u202e 100 USDT</bdi>')).toBe(1);
    expect(times(o.oid)).toBeGreaterThan(1);
    expect(times(`<bdi>${o.oid}</bdi>`)).toBe(times(o.oid));
  });
});
