import { beforeAll, describe, expect, it } from 'vitest';
import {
  DAY, EVM_TO, MINUTE, T0, TRON_CHAIN, TRON_TO, USDT_ETH, USDT_TRON, expectOk, expectRefused, nextOid, refusedAndHarmless, useServer,
  type Merchant, type TestServer,
} from './helpers.js';

/** Decisions §2, §3, §5, §6 over HTTP: every refusal answers its status and msg and changes nothing. */

const BSC_USDT = '0x55d398326f99059fF775485246999027B3197955';

let s: TestServer;
let m: Merchant;
let other: Merchant;

useServer(['Shop', 'Other'], { resetClock: true, noErrors: true }, (server, [shop, second]) => {
  s = server;
  m = shop;
  other = second;
});

const refused = (path: string, fields: Record<string, unknown>, status: number, msg: string | RegExp) =>
  refusedAndHarmless(s, m, path, s.signed(m, fields), status, msg);

const PLAIN = /must be a plain decimal such as "10.5"/;
const BAD_AMOUNTS: [unknown, number, string | RegExp][] = [
  ['-1', 400, PLAIN],
  ['+1', 400, PLAIN],
  ['1e3', 400, PLAIN],
  [' 1', 400, PLAIN],
  ['1 ', 400, PLAIN],
  ['1,000', 400, PLAIN],
  ['1_000', 400, PLAIN],
  ['1.', 400, PLAIN],
  ['.5', 400, PLAIN],
  ['1.2.3', 400, PLAIN],
  ['0x10', 400, PLAIN],
  ['NaN', 400, PLAIN],
  ['Infinity', 400, PLAIN],
  ['１２', 400, PLAIN],
  ['٣', 400, PLAIN],
  ['0', 400, 'amount must be positive'],
  ['0.000', 400, 'amount must be positive'],
  ['000', 400, 'amount must be positive'],
  ['0.0000001', 400, 'amount has more than 6 decimal places'],
  ['1.1234567', 400, 'amount has more than 6 decimal places'],
  ['1000000000000.000001', 400, 'amount must not exceed 1000000000000'],
  ['99999999999999', 400, 'amount must not exceed 1000000000000'],
  // A JSON number is said to be one, with the string to send where its text is a plain decimal (a trial).
  [10, 400, 'amount must be a decimal string such as "10.5", not a JSON number: send "10" (in quotes)'],
  [1.5, 400, 'amount must be a decimal string such as "10.5", not a JSON number: send "1.5" (in quotes)'],
  [1e21, 400, 'amount must be a decimal string such as "10.5", not a JSON number'],
  // A float's noise is not echoed as the string to send (a review): the amount meant is not known.
  [0.1 + 0.2, 400, 'amount must be a decimal string such as "10.5", not a JSON number (0.30000000000000004 has more than the 15 significant digits a JSON number is sure to keep: send the amount meant, as a string)'],
  [1234567.1234567891, 400, 'amount must be a decimal string such as "10.5", not a JSON number (1234567.1234567892 has more than the 15 significant digits a JSON number is sure to keep: send the amount meant, as a string)'],
  [123456789.123456, 400, 'amount must be a decimal string such as "10.5", not a JSON number: send "123456789.123456" (in quotes)'],
  [true, 400, 'amount must be a decimal string such as "10.5", not a JSON boolean'],
];

describe('amounts (decisions §2) through HTTP', () => {
  it.each(BAD_AMOUNTS)('create order refuses amount %j', async (amount, status, msg) => {
    await refused('/api/v1/order', { oid: nextOid(), uid: 'u1', amount }, status, msg);
  });

  it.each(BAD_AMOUNTS)('refund refuses amount %j', async (amount, status, msg) => {
    const o = await s.paidOrder(m, '10');
    await refused('/api/v1/refund', { id: o.id, amount }, status, msg);
  });

  it.each(BAD_AMOUNTS)('withdraw apply refuses amount %j', async (amount, status, msg) => {
    await s.credit(m, 'amt', '1000');
    await refused('/api/v1/withdraw/apply', { uid: 'amt', amount, to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH }, status, msg);
  });

  it('refuses an absent or empty amount as required', async () => {
    await refused('/api/v1/order', { oid: nextOid(), uid: 'u1' }, 400, 'amount is required');
    await refused('/api/v1/order', { oid: nextOid(), uid: 'u1', amount: '' }, 400, 'amount is required');
  });

  it('keeps the asset precision on a token with more decimals (BSC USDT has 18, USDT the asset 6)', async () => {
    await s.credit(m, 'bsc', '10');
    await refused('/api/v1/withdraw/apply', { uid: 'bsc', amount: '0.0000001', to: EVM_TO, chainId: 56, chainType: 'EVM', token: BSC_USDT }, 400, 'amount has more than 6 decimal places');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'bsc', amount: '0.000001', to: EVM_TO, chainId: 56, chainType: 'EVM', token: BSC_USDT })));
    expect(w.amount).toBe('0.000001');
  });
});

describe('create order (decisions §3) through HTTP', () => {
  const base = () => ({ oid: nextOid(), uid: 'u1', amount: '10' });

  it.each(['oid', 'uid', 'amount'])('requires %s', async (field) => {
    const fields: Record<string, unknown> = base();
    delete fields[field];
    await refused('/api/v1/order', fields, 400, `${field} is required`);
  });

  it.each<[string, Record<string, unknown>, string | RegExp]>([
    ['notifyURL (a typo of notifyUrl)', { notifyURL: 'https://x.example/cb' }, 'unknown field: notifyURL'],
    ['two unknown fields', { callback: 'x', currency: 'USDT' }, 'unknown fields: callback, currency'],
    ['__proto__', { ['__proto__']: 'x' }, 'unknown field: __proto__'],
    ['an oid of 65 characters', { oid: 'o'.repeat(65) }, 'oid must be at most 64 characters'],
    ['a uid of 65 characters', { uid: 'u'.repeat(65) }, 'uid must be at most 64 characters'],
    ['a memo of 257 characters', { memo: 'm'.repeat(257) }, 'memo must be at most 256 characters'],
    ['a notifyUrl that is not a URL', { notifyUrl: 'not a url' }, 'notifyUrl must be an http or https URL'],
    ['an ftp notifyUrl', { notifyUrl: 'ftp://x.example/cb' }, 'notifyUrl must be an http or https URL'],
    ['a javascript: redirectUrl', { redirectUrl: 'javascript:alert(1)' }, 'redirectUrl must be an http or https URL'],
    ['a logo URL of 2049 characters', { logo: `https://x.example/${'l'.repeat(2049 - 18)}` }, 'logo must be at most 2048 characters'],
    ['a numeric oid', { oid: 12345 }, 'oid must be a string'],
    ['a boolean uid', { uid: false }, 'uid must be a string'],
    ['expiredAt in the past', { expiredAt: T0 - 1 }, 'expiredAt must lie in the future'],
    ['expiredAt now', { expiredAt: T0 }, 'expiredAt must lie in the future'],
    ['expiredAt 7 days and 1 ms ahead', { expiredAt: T0 + 7 * DAY + 1 }, 'expiredAt must be at most 7 days ahead'],
    // Seconds, the common mistake (an integration trial): said, with what they would be.
    ['expiredAt in seconds', { expiredAt: Math.floor((T0 + DAY) / 1000) },
      `expiredAt must lie in the future: it is in milliseconds, and ${Math.floor((T0 + DAY) / 1000)} is 1970-01-21T02:30:28.800Z; as seconds it would be 2025-01-16T12:00:00.000Z (send ${T0 + DAY})`],
    ['a notifyUrl with an ESC', { notifyUrl: 'https://x.example/a\u001b[2Jb' }, 'notifyUrl must not contain control characters'],
    ['a redirectUrl with a tab the URL parser would drop', { redirectUrl: 'https://x.example/a\tb' }, 'redirectUrl must not contain control characters'],
    ['a logo with a C1 control', { logo: 'https://x.example/\u009b31m.png' }, 'logo must not contain control characters'],
    ['expiredAt as an ISO date', { expiredAt: '2025-01-16T00:00:00Z' }, 'expiredAt must be a milliseconds timestamp (digits)'],
    ['a negative expiredAt', { expiredAt: -5 }, 'expiredAt must be a milliseconds timestamp (digits)'],
  ])('refuses %s', async (_name, extra, msg) => {
    await refused('/api/v1/order', { ...base(), ...extra }, 400, msg);
  });

  it('accepts the field bounds: 64-character oid and uid, 2048-character URL, expiredAt 7 days ahead or 1 ms ahead', async () => {
    const url = `https://x.example/${'l'.repeat(2048 - 18)}`;
    expect(url.length).toBe(2048);
    const a = expectOk(await s.post('/api/v1/order', s.signed(m, { oid: `${nextOid()}-`.padEnd(64, 'o'), uid: 'u'.repeat(64), amount: '1', logo: url, expiredAt: T0 + 7 * DAY })));
    expect(a.expiredAt).toBe(T0 + 7 * DAY);
    const b = expectOk(await s.post('/api/v1/order', s.signed(m, { ...base(), expiredAt: T0 + 1 })));
    expect(b.expiredAt).toBe(T0 + 1);
  });

  it('answers a repeated create with the same oid and fields with the same order (idempotent retry)', async () => {
    const fields = { ...base(), memo: 'retry me', notifyUrl: 'https://x.example/cb', amount: '5.50' };
    const first = expectOk(await s.post('/api/v1/order', s.signed(m, fields)));
    s.clock.now = T0 + MINUTE;
    const before = snapshot();
    const second = expectOk(await s.post('/api/v1/order', s.signed(m, { ...fields, amount: '5.5' })));
    expect(second).toEqual(first);
    expect(snapshot().orders).toEqual(before.orders);
    expect(snapshot().order_addresses).toEqual(before.order_addresses);
  });

  it('refuses the same oid with different fields (409) and changes nothing', async () => {
    const fields = base();
    const first = expectOk(await s.post('/api/v1/order', s.signed(m, fields)));
    await refused('/api/v1/order', { ...fields, amount: '11' }, 409, `oid ${fields.oid} is already used by order ${first.id} with a different amount (the order's 10, this request's 11)`);
    await refused('/api/v1/order', { ...fields, uid: 'u2', memo: 'x' }, 409, `oid ${fields.oid} is already used by order ${first.id} with a different uid (the order's ${fields.uid}, this request's u2), memo (this request has one; the order has none)`);
  });

  it('keeps oid unique per merchant: another merchant may use the same oid', async () => {
    const fields = base();
    const a = expectOk(await s.post('/api/v1/order', s.signed(m, fields)));
    const b = expectOk(await s.post('/api/v1/order', s.signed(other, fields)));
    expect(b.id).not.toBe(a.id);
  });

  function snapshot() {
    return {
      orders: s.ledger.sqlite.prepare('select * from orders order by rowid').all(),
      order_addresses: s.ledger.sqlite.prepare('select * from order_addresses order by rowid').all(),
    };
  }
});

describe('refunds (decisions §5) through HTTP', () => {
  it('refuses a refund of an order not PAID with 409 and a msg stating the status is not Paid', async () => {
    const pending = await s.order(m, { amount: '10' });
    const r = await refused('/api/v1/refund', { id: pending.id, amount: '1' }, 409, 'order status is not Paid (it is PENDING_PAY)');
    expect(r.json.msg).toMatch(/not Paid/);

    const expiring = await s.order(m, { amount: '10', expiredAt: T0 + MINUTE });
    s.clock.now = T0 + MINUTE + 1;
    await refused('/api/v1/refund', { id: expiring.id, amount: '1' }, 409, 'order status is not Paid (it is EXPIRED)');
    s.clock.now = T0;

    const full = await s.paidOrder(m, '3');
    expectOk(await s.post('/api/v1/refund', s.signed(m, { id: full.id, amount: '3' })));
    await refused('/api/v1/refund', { id: full.id, amount: '1' }, 409, 'order status is not Paid (it is REFUNDED)');
    expect(expectOk(await s.get(`/api/v1/order/${pending.id}/status`))).toBe('PENDING_PAY');
  });

  it('refuses a refund above the payment (400) and above the remainder (409)', async () => {
    const o = await s.paidOrder(m, '10', 'ref-u');
    await refused('/api/v1/refund', { id: o.id, amount: '10.000001' }, 400, 'refund amount 10.000001 is above the original payment 10');
    expectOk(await s.post('/api/v1/refund', s.signed(m, { id: o.id, amount: '7' })));
    await refused('/api/v1/refund', { id: o.id, amount: '3.5' }, 409, 'refund amount 3.5 is above what remains refundable (3 of 10 paid)');
    expect(expectOk(await s.get(`/api/v1/order/${o.id}/status`))).toBe('PAID');
    expect((await s.service.balance('ref-u', { mchId: m.mchId })).available).toBe('3');
  });

  it('refuses a refund the user balance no longer covers (409)', async () => {
    const o = await s.paidOrder(m, '10', 'spent');
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, { uid: 'spent', amount: '8', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH })));
    expect(w.status).toBe('PENDING');
    await refused('/api/v1/refund', { id: o.id, amount: '5' }, 409, /^insufficient balance: user spent has 2 USDT available \(and 8 USDT held by pending withdrawals\), 5 needed/);
  });

  it.each<[string, () => Promise<Record<string, unknown>>, number, string | RegExp]>([
    ['neither id nor oid', async () => ({ amount: '1' }), 400, 'id or oid is required'],
    ['id and oid of different orders', async () => {
      const a = await s.paidOrder(m, '1');
      const b = await s.paidOrder(m, '1');
      return { id: a.id, oid: b.oid, amount: '1' };
    }, 400, /^id \S+ and oid \S+ name different orders$/],
    ['an unknown id', async () => ({ id: 'ord_nope', amount: '1' }), 404, 'Order not found'],
    ['an unknown oid', async () => ({ oid: 'nope', amount: '1' }), 404, 'Order not found'],
    ['a remark of 257 characters', async () => ({ id: (await s.paidOrder(m, '1')).id, amount: '1', remark: 'r'.repeat(257) }), 400, 'remark must be at most 256 characters'],
    ['an unknown field', async () => ({ id: (await s.paidOrder(m, '1')).id, amount: '1', reason: 'x' }), 400, 'unknown field: reason'],
    ['an id of 65 characters', async () => ({ id: 'i'.repeat(65), amount: '1' }), 400, 'id must be at most 64 characters'],
  ])('refuses %s', async (_name, make, status, msg) => {
    await refused('/api/v1/refund', await make(), status, msg);
  });
});

/** The address with the case of its first letter turned: the same hex, an EIP-55 checksum that fails. */
const badChecksum = (a: string): string => a.replace(/[a-fA-F]/, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()));

describe('withdrawals (decisions §6, §6a) through HTTP', () => {
  const apply = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ uid: 'wd', amount: '10', to: EVM_TO, chainId: 1, chainType: 'EVM', token: USDT_ETH, ...extra });

  beforeAll(async () => {
    await s.credit(m, 'wd', '1000');
  });

  it.each<[string, Record<string, unknown>, number, string | RegExp]>([
    ['chainType BTC', { chainType: 'BTC' }, 400, 'chainType must be EVM or TRON'],
    ['chainType evm (lower case)', { chainType: 'evm' }, 400, 'chainType must be EVM or TRON'],
    ['chainType TRON on Ethereum', { chainType: 'TRON' }, 400, 'chainType TRON does not match chain 1 (Ethereum is EVM)'],
    ['an unknown chainId', { chainId: 999 }, 400, /^chainId 999 is not a chain this service knows \(known: 1, 56, 137, 728126428\)$/],
    ['chainId "056"', { chainId: '056' }, 400, 'chainId must be a positive decimal integer such as 56, got "056"'],
    ['chainId 1.5', { chainId: 1.5 }, 400, 'chainId must be a positive decimal integer such as 56, got 1.5'],
    ['chainId as a boolean', { chainId: true }, 400, 'chainId must be a number or a string of digits'],
    ['an unknown token', { token: '0x0000000000000000000000000000000000000001' }, 400, /^token "0x0000000000000000000000000000000000000001" is not a token this service knows on chain 1/],
    ['the TRON token on Ethereum', { token: USDT_TRON }, 400, /is not a token this service knows on chain 1/],
    // An attacker review: the token's lookup ignored case, so a broken checksum passed where the same spelling in `to` was refused.
    ['a token in mixed case with a bad checksum', { token: badChecksum(USDT_ETH) }, 400, 'token is not a valid EVM address: mixed-case checksum (EIP-55) does not match'],
    ['a mixed-case address with a bad checksum', { to: EVM_TO.replace('C51812dc', 'c51812dc') }, 400, /^to is not a valid EVM address/],
    ['an address too short', { to: '0x1234' }, 400, /^to is not a valid EVM address/],
    ['a TRON address on an EVM chain', { to: TRON_TO }, 400, /^to is not a valid EVM address/],
    ['an EVM address on TRON', { chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON, to: EVM_TO }, 400, /^to is not a valid TRON address/],
    ['a TRON address with a broken checksum', { chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON, to: `${TRON_TO.slice(0, -1)}${TRON_TO.endsWith('a') ? 'b' : 'a'}` }, 400, /^to is not a valid TRON address/],
    ['no uid', { uid: undefined }, 400, 'uid is required'],
    ['no to', { to: undefined }, 400, 'to is required'],
    ['no chainId', { chainId: undefined }, 400, 'chainId is required'],
    ['no chainType', { chainType: undefined }, 400, 'chainType is required'],
    ['no token', { token: undefined }, 400, 'token is required'],
    ['a notifyUrl that is not http', { notifyUrl: 'file:///etc/passwd' }, 400, 'notifyUrl must be an http or https URL'],
    ['a notifyUrl on a mail port', { notifyUrl: 'http://mail.example:587/cb' }, 400, 'notifyUrl uses port 587, kept for services that are not HTTP (mail, SSH, IRC and others): browsers refuse it, and nothing is sent there: give the address of an HTTP server'],
    ['an unknown field', { memo: 'x' }, 400, 'unknown field: memo'],
    ['more than the balance', { amount: '1000.000001' }, 409, 'insufficient balance: user wd has 1000 USDT available, 1000.000001 needed'],
    ['a user with no balance', { uid: 'nobody' }, 409, /^insufficient balance: user nobody has 0/],
  ])('apply refuses %s', async (_name, extra, status, msg) => {
    const fields = apply(extra);
    for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
    await refused('/api/v1/withdraw/apply', fields, status, msg);
  });

  it('apply accepts an all-lower-case EVM address (no checksum to check) and answers it checksummed', async () => {
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, apply({ to: EVM_TO.toLowerCase(), amount: '1' }))));
    expect(w.to).toBe(EVM_TO);
  });

  it('confirm and reject refuse what decisions §6 refuses, and change nothing', async () => {
    const w = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, apply())));
    const tron = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, apply({ chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON, to: TRON_TO }))));
    const hash = `0x${'d'.repeat(64)}`;
    const cases: [string, Record<string, unknown>, number, string | RegExp][] = [
      ['/api/v1/withdraw/confirm', { logId: 'wd_nope', txHash: hash, blockNumber: 1 }, 404, 'withdrawal not found'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: 'd'.repeat(64), blockNumber: 1 }, 400, 'txHash must be a transaction hash: 0x and 64 hex digits'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'d'.repeat(63)}`, blockNumber: 1 }, 400, 'txHash must be a transaction hash: 0x and 64 hex digits'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'g'.repeat(64)}`, blockNumber: 1 }, 400, 'txHash must be a transaction hash: 0x and 64 hex digits'],
      // A TRON hash may carry 0x (decisions §6); 63 digits is still not a hash.
      ['/api/v1/withdraw/confirm', { logId: tron.id, txHash: `0x${'d'.repeat(63)}`, blockNumber: 1 }, 400, 'txHash must be a transaction hash: 64 hex digits'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: 'x'.repeat(81), blockNumber: 1 }, 400, 'txHash must be at most 80 characters'],
      // Found by an outside review: the all-zero hash, a placeholder no transaction has, confirmed
      // a withdrawal on a chain without an rpcUrl.
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'0'.repeat(64)}`, blockNumber: 5 }, 400, 'txHash is all zeros: no transaction has that hash'],
      ['/api/v1/withdraw/confirm', { logId: tron.id, txHash: '0'.repeat(64), blockNumber: 5 }, 400, 'txHash is all zeros: no transaction has that hash'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash, blockNumber: 0 }, 400, 'blockNumber must be a positive integer'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash, blockNumber: -1 }, 400, 'blockNumber must be a positive integer'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash, blockNumber: 1.5 }, 400, 'blockNumber must be a positive integer'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash, blockNumber: '0x10' }, 400, 'blockNumber must be a positive integer'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash, blockNumber: 2 ** 53 }, 400, 'blockNumber must be a positive integer'],
      ['/api/v1/withdraw/confirm', { logId: w.id, txHash: hash }, 400, 'blockNumber is required'],
      ['/api/v1/withdraw/confirm', { txHash: hash, blockNumber: 1 }, 400, 'logId is required'],
      ['/api/v1/withdraw/confirm', { id: w.id, txHash: hash, blockNumber: 1 }, 400, 'logId is required; unknown field: id'],
      ['/api/v1/withdraw/reject', { id: 'wd_nope' }, 404, 'withdrawal not found'],
      ['/api/v1/withdraw/reject', {}, 400, 'id is required'],
      ['/api/v1/withdraw/reject', { id: w.id, remark: 'r'.repeat(257) }, 400, 'remark must be at most 256 characters'],
      ['/api/v1/withdraw/reject', { id: w.id, txHash: hash }, 400, 'unknown field: txHash'],
    ];
    for (const [path, fields, status, msg] of cases) await refused(path, fields, status, msg);
    expect((await s.service.getWithdrawal(w.id)).status).toBe('PENDING');
    expect((await s.service.getWithdrawal(tron.id)).status).toBe('PENDING');

    // Only PENDING can be confirmed or rejected; a hash confirms at most one withdrawal.
    expectOk(await s.post('/api/v1/withdraw/confirm', s.signed(m, { logId: w.id, txHash: hash, blockNumber: 100 })));
    await refused('/api/v1/withdraw/confirm', { logId: w.id, txHash: `0x${'e'.repeat(64)}`, blockNumber: 100 }, 409, 'withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be confirmed');
    await refused('/api/v1/withdraw/reject', { id: w.id }, 409, 'withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be rejected');
    const w2 = expectOk(await s.post('/api/v1/withdraw/apply', s.signed(m, apply())));
    await refused('/api/v1/withdraw/confirm', { logId: w2.id, txHash: hash.toUpperCase().replace('0X', '0x'), blockNumber: 100 }, 409, `transaction ${hash} is already recorded in this ledger: it confirms withdrawal ${w.id}, and a transaction confirms at most one withdrawal (pay each withdrawal with a transaction of its own)`);
    expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: w2.id })));
    await refused('/api/v1/withdraw/reject', { id: w2.id }, 409, 'withdrawal is REJECTED, not PENDING: only a pending withdrawal can be rejected');
    await refused('/api/v1/withdraw/confirm', { logId: w2.id, txHash: `0x${'f'.repeat(64)}`, blockNumber: 1 }, 409, 'withdrawal is REJECTED, not PENDING: only a pending withdrawal can be confirmed');
    expectOk(await s.post('/api/v1/withdraw/reject', s.signed(m, { id: tron.id })));
  });
});

describe('HTTP statuses of decisions §7', () => {
  it('answers each refusal kind with its status and the error envelope', async () => {
    const o = await s.order(m);
    const cases: [number, string, unknown][] = [
      [400, '/api/v1/order', s.signed(m, { oid: nextOid(), uid: 'u' })],
      [401, '/api/v1/order', { ...s.signed(m, { oid: nextOid(), uid: 'u', amount: '1' }), sign: '0'.repeat(64) }],
      [404, '/api/v1/refund', s.signed(m, { id: 'ord_missing', amount: '1' })],
      [409, '/api/v1/refund', s.signed(m, { id: o.id, amount: '1' })],
      [413, '/api/v1/order', 'x'.repeat(64 * 1024 + 1)],
    ];
    for (const [status, path, body] of cases) expectRefused(await s.post(path, body), status);
    // 429 is shown in limits.test.ts, which needs a merchant with a small limit.
  });
});
