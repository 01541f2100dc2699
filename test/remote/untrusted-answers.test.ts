/**
 * A remote's answer is input like any other (issue #10 item 5). A server that is wrong, or not
 * the one the user thinks, must not get the CLI to print a payment address, a transaction hash
 * or an amount that is not well-formed (a mistyped address takes real money), nor get a terminal
 * to obey escape sequences, rewrite a line with \r or reverse text with U+202E. Addresses,
 * hashes, amounts, ids and times are checked, and a bad one refuses the whole answer (exit 3,
 * printing none of it); any other text from the server is printed with such characters
 * replaced by U+FFFD.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { envelope, EVM_TO, home, stopAll, tiny, TRON_TO, USDT_ETH, USDT_TRON, TRON_CHAIN, type CliResult } from './_support.js';

afterAll(stopAll);

const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };
const ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
const HASH = `0x${'ab'.repeat(32)}`;
/** EVM_TO with the case of its last letter flipped: the EIP-55 checksum no longer matches. */
const BAD_CHECKSUM = `${EVM_TO.slice(0, -1)}D`;
/** TRON_TO with one character changed: the base58check checksum no longer matches. */
const BAD_TRON = `${TRON_TO.slice(0, -1)}${TRON_TO.endsWith('8') ? '9' : '8'}`;
const NASTY = '\u001b[2J\u001b[31mred\rFAKE\u202eevil\u0007\u2028x\u200b';
const SHOWN = '\ufffd[2J\ufffd[31mred\ufffdFAKE\ufffdevil\ufffd\ufffdx\ufffd';
/** What must never reach the output raw (the newline ending each printed line aside). */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/;

const order = (o: Record<string, unknown> = {}) => ({
  id: ORDER, oid: 'A-1', uid: 'u1', amount: '10.5', status: 'PENDING_PAY', expiredAt: 1_900_000_000_000,
  addresses: { EVM: EVM_TO, TRON: TRON_TO }, ...o,
});
const withdrawal = (w: Record<string, unknown> = {}) => ({
  id: 'wd_AAAAAAAAAAAAAAAAAAAAAA', uid: 'u1', amount: '5', to: EVM_TO, chainId: '1', chainType: 'EVM', token: USDT_ETH,
  status: 'CONFIRMED', txHash: HASH, blockNumber: 100, remark: null, createdAt: 1_800_000_000_000, updatedAt: 1_800_000_000_001, ...w,
});
const refund = (r: Record<string, unknown> = {}) => ({ id: ORDER, oid: 'A-1', amount: '1', status: 'REFUNDED', remark: 'damaged', refundTime: 1_800_000_000_000, ...r });

/** A server answering every request with success and this data (or this whole envelope). */
async function answering(data: unknown) {
  return tiny((_req, res) => envelope(res, data));
}

const createOrder = ['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '10.5'];
const confirm = ['withdraw', 'confirm', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--tx-hash', HASH, '--block-number', '100', '--yes'];
const doRefund = ['refund', '--id', ORDER, '--amount', '1', '--yes'];

async function run(data: unknown, args: string[]): Promise<[CliResult, CliResult, string]> {
  const server = await answering(data);
  const h = home();
  const remote = ['--remote', server.url];
  const [plain, json] = await Promise.all([h.cli([...remote, ...args], { env: SIGNER }), h.cli([...remote, '--json', ...args], { env: SIGNER })]);
  return [plain, json, server.url];
}

describe('a well-formed answer is printed as before (so the refusals below are about the data)', () => {
  it.each([
    ['order create', order(), createOrder],
    ['order create, TRON only', order({ addresses: { TRON: TRON_TO } }), createOrder],
    ['order create with its payment page', order({ payUrl: `https://pay.example.com/shop/pay/${ORDER}` }), createOrder],
    ['address', { EVM: EVM_TO, TRON: TRON_TO }, ['address', ORDER]],
    ['withdraw confirm', withdrawal(), confirm],
    ['withdraw confirm, TRON', withdrawal({ to: TRON_TO, chainType: 'TRON', chainId: TRON_CHAIN, token: USDT_TRON, txHash: 'ab'.repeat(32) }), confirm],
    ['withdraw, pending', withdrawal({ status: 'PENDING', txHash: null, blockNumber: null }), confirm],
  ])('%s', async (_label, data, args) => {
    const [plain, json] = await run(data, args);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual(data);
  });

  it('refund, then its own id and the order after it read back (#15 item 3)', async () => {
    const shown = {
      ...order({ status: 'PAID' }), mchId: 'M100001', asset: 'USDT', memo: null, notifyUrl: null, redirectUrl: null, logo: null,
      paidAmount: '10.5', refundedAmount: '1', paidAt: 1_800_000_000_000, late: false, createdAt: 1_700_000_000_000, payments: [], onChain: [],
    };
    const listed = [{ ...refund(), refundId: 'rf_AAAAAAAAAAAAAAAAAAAAAA', mchId: 'M100001' }];
    const server = await tiny((req, res) => envelope(res, req.url === '/api/v1/order/show' ? shown : req.url === '/api/v1/refund/list' ? listed : refund()));
    const h = home();
    const [plain, json] = await Promise.all([h.cli(['--remote', server.url, ...doRefund], { env: SIGNER }), h.cli(['--remote', server.url, '--json', ...doRefund], { env: SIGNER })]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toMatch(/^refund +rf_A{22}$/m);
    expect(plain.stdout).toMatch(/^order status +PAID$/m);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ ...refund(), refundId: 'rf_AAAAAAAAAAAAAAAAAAAAAA', mchId: 'M100001', asset: 'USDT', orderStatus: 'PAID', paidAmount: '10.5', refundedAmount: '1' });
  });
  // A review (session 24): a refund list that could not be read let a --yes refund through unchecked.
  it('a --yes refund whose look for a repeat cannot read the refunds is not sent: exit 3, saying so', async () => {
    const shown = {
      ...order({ status: 'PAID' }), mchId: 'M100001', asset: 'USDT', memo: null, notifyUrl: null, redirectUrl: null, logo: null,
      paidAmount: '10.5', refundedAmount: '1', paidAt: 1_800_000_000_000, late: false, createdAt: 1_700_000_000_000, payments: [], onChain: [],
    };
    const server = await tiny((req, res) => (req.url === '/api/v1/order/show' ? envelope(res, shown) : envelope(res, null, 500, 0, 'internal error')));
    const r = await home().cli(['--remote', server.url, ...doRefund], { env: SIGNER });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error: could not read the order's refunds \(.*\) to look for a repeated refund, so nothing was done; run it again, or with --repeat to refund without looking\n$/);
    expect(server.hits).toEqual(['POST /api/v1/order/show', 'POST /api/v1/refund/list']);
  });
  it("order show from a server of an earlier release (its payments seen on chain carry no blockTime, no from): read as null, not refused", async () => {
    const seen = { chainId: '1', txHash: HASH, logIndex: 0, blockNumber: 5, token: USDT_ETH, amount: '10.5', rawAmount: '10500000', status: 'counted', confirmations: 12, required: 12 };
    const shown = {
      ...order({ status: 'PAID' }), mchId: 'M100001', asset: 'USDT', memo: null, notifyUrl: null, redirectUrl: null, logo: null,
      paidAmount: '10.5', refundedAmount: '0', paidAt: 1_800_000_000_000, late: false, createdAt: 1_700_000_000_000, payments: [], onChain: [seen],
    };
    const [plain, json] = await run(shown, ['order', 'show', ORDER]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout).onChain).toEqual([{ ...seen, blockTime: null, from: null }]);
  });
});

describe('an answer with a malformed address, hash, amount, id or time is refused whole: exit 3, none of it printed', () => {
  it.each([
    ['order: EVM address with a wrong EIP-55 checksum', order({ addresses: { EVM: BAD_CHECKSUM } }), createOrder, 'addresses.EVM', BAD_CHECKSUM],
    ['order: EVM address in lower case (the service writes EIP-55)', order({ addresses: { EVM: EVM_TO.toLowerCase() } }), createOrder, 'addresses.EVM', EVM_TO.toLowerCase()],
    ['order: EVM address too short', order({ addresses: { EVM: EVM_TO.slice(0, -2) } }), createOrder, 'addresses.EVM', EVM_TO.slice(0, -2)],
    ['order: TRON address with a wrong checksum', order({ addresses: { TRON: BAD_TRON } }), createOrder, 'addresses.TRON', BAD_TRON],
    ['order: a TRON address where EVM belongs', order({ addresses: { EVM: TRON_TO } }), createOrder, 'addresses.EVM', TRON_TO],
    ['order: amount with an exponent', order({ amount: '1e3' }), createOrder, 'amount', '1e3'],
    ['order: negative amount', order({ amount: '-10.5' }), createOrder, 'amount', '-10.5'],
    ['order: amount not canonical', order({ amount: '010.50' }), createOrder, 'amount', '010.50'],
    ['order: zero amount', order({ amount: '0' }), createOrder, 'amount', '"0"'],
    ['order: amount as a number', order({ amount: 10.5 }), createOrder, 'amount', '10.5'],
    ['order: amount with an escape', order({ amount: '10.5\u001b[8m' }), createOrder, 'amount', '\u001b'],
    ['order: an id with an escape', order({ id: `${ORDER}\u001b[2J` }), createOrder, 'id', '\u001b'],
    ['order: expiredAt not a whole number', order({ expiredAt: 1.5 }), createOrder, 'expiredAt', '1.5'],
    ['order: payUrl a script, not a page', order({ payUrl: `javascript:alert(1)//pay/${ORDER}` }), createOrder, 'payUrl', 'javascript:'],
    ['order: payUrl of another order', order({ payUrl: 'https://pay.example.com/pay/ord_BBBBBBBBBBBBBBBBBBBBBB' }), createOrder, 'payUrl', 'ord_BBBB'],
    ['order: payUrl with an escape', order({ payUrl: `https://pay.example.com/\u001b[2J/pay/${ORDER}` }), createOrder, 'payUrl', '\u001b'],
    ['address: TRON address with a wrong checksum', { TRON: BAD_TRON }, ['address', ORDER], 'TRON', BAD_TRON],
    ['withdrawal: tx hash too short', withdrawal({ txHash: '0xabc' }), confirm, 'txHash', '0xabc'],
    ['withdrawal: EVM tx hash without 0x', withdrawal({ txHash: 'ab'.repeat(32) }), confirm, 'txHash', 'ab'.repeat(32)],
    ['withdrawal: to with a wrong checksum', withdrawal({ to: BAD_CHECKSUM }), confirm, 'to', BAD_CHECKSUM],
    ['withdrawal: an EVM to on TRON', withdrawal({ chainType: 'TRON', chainId: TRON_CHAIN, token: USDT_TRON, txHash: 'ab'.repeat(32) }), confirm, 'to', EVM_TO],
    ['withdrawal: token not an address', withdrawal({ token: 'USDT' }), confirm, 'token', '"USDT"'],
    ['withdrawal: chainId not a number', withdrawal({ chainId: 'one' }), confirm, 'chainId', 'one'],
    ['withdrawal: block 0', withdrawal({ blockNumber: 0 }), confirm, 'blockNumber', '"blockNumber": 0'],
    ['withdrawal: amount with 19 decimals', withdrawal({ amount: `0.${'1'.repeat(19)}` }), confirm, 'amount', '1'.repeat(19)],
    ['refund: amount with a space', refund({ amount: '1 000' }), doRefund, 'amount', '1 000'],
  ])('%s', async (_label, data, args, field, bad) => {
    const [plain, json, url] = await run(data, args);
    const message = new RegExp(`^the remote ${url} answered success with data this client does not understand \\((?:[^)]*; )?${field.replace('.', '\\.')}: [^)]+\\); nothing of it is printed$`);
    expect(plain.code).toBe(3);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/^error: /);
    expect(plain.stderr.slice('error: '.length, -1)).toMatch(message);
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error).toEqual({ kind: 'unavailable', message: expect.stringMatching(message) });
    for (const r of [plain, json]) expect(r.stderr).not.toContain(bad);
  });
});

describe('other text from the server is printed with control and format characters replaced', () => {
  const check = (r: CliResult, code: number) => {
    expect(r.code).toBe(code);
    expect(r.stdout + r.stderr).not.toMatch(RAW);
  };

  it('in a success: oid, uid, remark (plain and --json)', async () => {
    const [plain, json] = await run(withdrawal({ uid: `u1${NASTY}`, remark: `ok${NASTY}` }), confirm);
    check(plain, 0);
    check(json, 0);
    expect(plain.stdout).toContain(`ok${SHOWN}`);
    expect(plain.stdout).toContain(`u1${SHOWN}`);
    expect(JSON.parse(json.stdout)).toMatchObject({ uid: `u1${SHOWN}`, remark: `ok${SHOWN}` });

    const [created, createdJson] = await run(order({ oid: `A-1${NASTY}`, uid: `\u202eu1` }), createOrder);
    check(created, 0);
    check(createdJson, 0);
    expect(JSON.parse(createdJson.stdout)).toMatchObject({ oid: `A-1${SHOWN}`, uid: '\ufffdu1', addresses: { EVM: EVM_TO, TRON: TRON_TO } });
  });

  it('in a refusal: the msg of the envelope (plain and --json)', async () => {
    const server = await tiny((_req, res) => envelope(res, null, 409, 0, `order status is not Paid${NASTY}`));
    const h = home();
    const [plain, json] = await Promise.all([
      h.cli(['--remote', server.url, ...doRefund], { env: SIGNER }),
      h.cli(['--remote', server.url, '--json', ...doRefund], { env: SIGNER }),
    ]);
    check(plain, 1);
    check(json, 1);
    expect(plain.stderr).toBe(`error: order status is not Paid${SHOWN}\n`);
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'conflict', message: `order status is not Paid${SHOWN}` } });
  });

  it('in a reply that is not the envelope: its content type', async () => {
    const server = await tiny((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html\u00a0\u0085x' });
      res.end('<html>');
    });
    const r = await home().cli(['--remote', server.url, 'order', 'status', ORDER]);
    check(r, 3);
    expect(r.stderr).toContain('(HTTP 200, text/html\u00a0\ufffdx)');
  });
});

describe('an answer larger than any this service gives', () => {
  // An attacker review: a hostile remote answering 400 MB took the CLI to ~1.7 GB of memory
  // (the whole answer read into one string), within the timeout.
  it.each([
    ['streamed without a length', false],
    ['with a Content-Length', true],
  ])('is refused once past 16 MiB, unread beyond: exit 3, nothing printed (%s)', async (_name, withLength) => {
    const total = 256 * 1024 * 1024;
    let written = 0;
    let closed: () => void = () => {};
    const gone = new Promise<void>((r) => (closed = r));
    const server = await tiny((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': String(total) } : {}) });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.write('{"code":1,"msg":"ok","data":{"id":"');
      const more = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', closed);
      more();
    });
    const r = await home().cli(['--remote', server.url, 'order', 'status', ORDER]);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain(`the remote ${server.url} answered more than 16 MiB, which no answer of this service is: refused, the rest unread (is --remote the service's base URL?)`);
    await gone;
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('a remote from before withdraw confirm read the block by itself', () => {
  // Its POST /withdraw/verify refuses a hash without its block (400); the CLI then needs the
  // block: a usage error without a terminal, naming why, and nothing is sent to confirm.
  it('withdraw confirm without --block-number: exit 2 saying the remote needs it; nothing confirmed', async () => {
    const server = await tiny((req, res) => {
      if (req.url === '/api/v1/withdraw/verify') envelope(res, null, 400, 0, 'txHash and blockNumber go together: both, or neither for the recorded transaction');
      else envelope(res, withdrawal());
    });
    const h = home();
    const r = await h.cli(['--remote', server.url, 'withdraw', 'confirm', 'wd_AAAAAAAAAAAAAAAAAAAAAA', '--tx-hash', HASH, '--yes'], { env: SIGNER });
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: missing required option --block-number: this remote does not read the block of a transaction by itself (an older server)\n' });
    expect(server.hits).toEqual(['POST /api/v1/withdraw/verify']);
  });
});
