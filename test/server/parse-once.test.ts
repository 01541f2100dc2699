/**
 * A signed create order is parsed once: the server's parse (the operation's schema with the
 * signing fields) hands its output to the service marked for that schema, and only for it.
 */
import { describe, expect, it } from 'vitest';
import { authFields, createOrderSchema, parseInput, parsedWith, refundSchema } from '../../src/core/schemas.js';
import { expectOk, expectRefused, nextOid, useServer, type Merchant, type TestServer } from './helpers.js';

describe('parse once', () => {
  it('takes a marked output as it is for its own schema, and parses anything else', () => {
    const full = createOrderSchema.extend(authFields);
    const body = { mchId: 'M100001', oid: 'o-1', uid: 'u-1', amount: '1.5', timestamp: 1, nonce: 'n1', sign: 'x' };
    const { timestamp: _t, nonce: _n, sign: _s, ...fields } = parseInput(full, body) as Record<string, unknown>;
    const marked = parsedWith(createOrderSchema, fields);
    expect(parseInput(createOrderSchema, marked)).toBe(marked);
    // Another schema parses it (and refuses what it does not take).
    expect(() => parseInput(refundSchema, marked)).toThrow(/unknown field/);
    // An unmarked object with the same fields is parsed: a copy is not the marked object.
    const copy = { ...marked };
    expect(parseInput(createOrderSchema, copy)).not.toBe(copy);
    expect(parseInput(createOrderSchema, copy)).toEqual(marked);
  });

  describe('over HTTP', () => {
    let s: TestServer;
    let m: Merchant;
    useServer(['Shop'], {}, (srv, [mm]) => {
      s = srv;
      m = mm!;
    });

    it('creates an order from the one parse, refuses what the schema refuses, and a replay as a replay', async () => {
      const body = s.signed(m, { oid: nextOid(), uid: 'u1', amount: '2.25', memo: 'm' });
      const created = expectOk(await s.post('/api/v1/order', body));
      expect(created).toMatchObject({ amount: '2.25', status: 'PENDING_PAY' });
      expectRefused(await s.post('/api/v1/order', body), 401, 'nonce has already been used');
      expectRefused(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '-1' })), 400);
      expectRefused(await s.post('/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u1', amount: '1', extra: 'x' })), 400, /unknown field/);
    });
  });
});

describe('digit strings are numbers exactly, or refused', () => {
  it('a block number or a timestamp up to 2^53 - 1 is kept as sent; one past it is refused, never rounded', async () => {
    const { withdrawConfirmSchema, orderListSchema } = await import('../../src/core/schemas.js');
    const confirm = (blockNumber: unknown) => withdrawConfirmSchema.safeParse({ logId: 'wd_1', txHash: 'x', blockNumber });
    expect(confirm('9007199254740991').data?.blockNumber).toBe(Number.MAX_SAFE_INTEGER);
    expect(confirm(Number.MAX_SAFE_INTEGER).data?.blockNumber).toBe(Number.MAX_SAFE_INTEGER);
    for (const past of ['9007199254740992', '9007199254740993', '9999999999999999']) expect(confirm(past).success, past).toBe(false);
    const since = (v: unknown) => orderListSchema.safeParse({ since: v });
    expect(since('0001').data?.since, 'leading zeros, as a timestamp may have').toBe(1);
    expect(since('9007199254740991').data?.since).toBe(Number.MAX_SAFE_INTEGER);
    for (const past of ['9007199254740992', '9007199254740993', '9999999999999999']) expect(since(past).success, past).toBe(false);
  });
});
