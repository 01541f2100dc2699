/**
 * Remote mode, whole (issue #15 item 8, decisions §12): lists, show, balance, log and held
 * payments are served as signed extension endpoints, each for the merchant whose secret signed
 * the request and no other. Two merchants on one `cryptopay serve`: merchant A, through the real
 * binary on --remote, sees its own data, and every id of merchant B answers exactly like an id
 * that does not exist. Replays and stray fields are refused like on every signed operation; a
 * remote's list that is malformed refuses the whole answer, and its text is made printable.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAD_SIGNATURE } from '../../src/server/app.js';
import { sign } from '../../src/signing/index.js';
import { utcDay } from '../helpers/service.js';
import { addMerchant, asMerchant, envelope, EVM_TO, home, serve, stopAll, tiny, txHash, USDT_ETH, type Home, type Merchant, type Served } from './_support.js';

afterAll(stopAll);

const UNKNOWN_ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
const UNKNOWN_WD = 'wd_AAAAAAAAAAAAAAAAAAAAAA';
const apply = (uid: string, amount: string) => ['withdraw', 'apply', '--uid', uid, '--amount', amount, '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH];

let h: Home;
let a: Merchant;
let b: Merchant;
let server: Served;
/** Merchant A's CLI on the remote. */
let asA: (args: string[]) => ReturnType<Home['cli']>;
const ids = { a1: '', b1: '', wa: '', wb: '', rb: '' };

/** The UTC day the figures were made in (summary's "today" is the real clock's). */
let madeOn: number;

beforeAll(async () => {
  madeOn = utcDay(Date.now());
  h = home();
  a = await addMerchant(h, 'Shop A');
  b = await addMerchant(h, 'Shop B');
  const seed = async (m: Merchant, args: string[]) => {
    const r = await h.json(['--db', h.db, '--mch-id', m.mchId, '--operator', 'seed', ...args]);
    return r;
  };
  // The same uid (u1) at both merchants: balances are per merchant.
  ids.a1 = (await seed(a, ['order', 'create', '--oid', 'A-1', '--uid', 'u1', '--amount', '10'])).id;
  ids.b1 = (await seed(b, ['order', 'create', '--oid', 'B-1', '--uid', 'u1', '--amount', '30'])).id;
  await seed(a, ['order', 'mark-paid', ids.a1, '--tx-hash', txHash(0xa1), '--yes']);
  await seed(b, ['order', 'mark-paid', ids.b1, '--tx-hash', txHash(0xb1), '--yes']);
  ids.rb = (await seed(b, ['refund', '--id', ids.b1, '--amount', '4', '--remark', 'secret of B', '--yes'])).refundId;
  ids.wb = (await seed(b, apply('u1', '6'))).id;
  server = await serve(h);
  asA = asMerchant(h, server, a);
  const r = await asA(['--json', 'refund', '--id', ids.a1, '--amount', '1', '--yes']);
  expect(r, 'refund as A').toMatchObject({ code: 0 });
  const w = await asA(['--json', ...apply('u1', '2')]);
  expect(w, 'withdraw apply as A').toMatchObject({ code: 0 });
  ids.wa = JSON.parse(w.stdout).id;
}, 60_000);

describe("a merchant's signed reads on the remote", () => {
  it('order list, withdraw list, refund list: only its own rows', async () => {
    const [orders, withdrawals, refunds] = await Promise.all([
      asA(['--json', 'order', 'list']),
      asA(['--json', 'withdraw', 'list', '--status', 'pending']),
      asA(['--json', 'refund', 'list']),
    ]);
    expect(JSON.parse(orders.stdout).map((o: { oid: string; mchId: string }) => [o.oid, o.mchId])).toEqual([['A-1', a.mchId]]);
    expect(JSON.parse(withdrawals.stdout).map((w: { id: string }) => w.id)).toEqual([ids.wa]);
    expect(JSON.parse(refunds.stdout).map((r: { oid: string; amount: string; mchId: string }) => [r.oid, r.amount, r.mchId])).toEqual([['A-1', '1', a.mchId]]);
    for (const r of [orders, withdrawals, refunds]) expect(r.stdout).not.toContain(ids.b1);
  });

  it('order show, withdraw show: its own in full; an id of merchant B answers exactly like an unknown id', async () => {
    const [own, other, unknown, ownWd, otherWd, unknownWd] = await Promise.all([
      asA(['order', 'show', ids.a1]),
      asA(['order', 'show', ids.b1]),
      asA(['order', 'show', UNKNOWN_ORDER]),
      asA(['--json', 'withdraw', 'show', ids.wa]),
      asA(['withdraw', 'show', ids.wb]),
      asA(['withdraw', 'show', UNKNOWN_WD]),
    ]);
    expect(own).toMatchObject({ code: 0, stderr: '' });
    expect(own.stdout).toMatch(new RegExp(`^id +${ids.a1}$`, 'm'));
    expect(own.stdout).toMatch(/^refunded +1 USDT$/m);
    expect(own.stdout).toMatch(new RegExp(`^payment +10 tx ${txHash(0xa1)}$`, 'm'));
    expect(other).toEqual({ code: 1, stdout: '', stderr: `error: Order not found: no order of merchant ${a.mchId} has the id or oid ${ids.b1} (cryptopay order find ${ids.b1} also searches uids, transaction hashes and deposit addresses)\n` });
    // The same answer but for the id it names.
    expect({ ...other, stderr: other.stderr.split(ids.b1).join('ID') }).toEqual({ ...unknown, stderr: unknown.stderr.split(UNKNOWN_ORDER).join('ID') });
    expect(JSON.parse(ownWd.stdout)).toMatchObject({ id: ids.wa, mchId: a.mchId, status: 'PENDING', verification: null, verificationNote: null });
    expect(otherWd).toEqual({ code: 1, stdout: '', stderr: 'error: withdrawal not found\n' });
    expect(otherWd).toEqual(unknownWd);
  });

  it("balance: the uid of its own users, never another merchant's user of the same name", async () => {
    const r = await asA(['--json', 'balance', 'u1']);
    // A's u1: paid 10, refunded 1, 2 held for the withdrawal. B's u1 holds 20 available and 6 held.
    expect(JSON.parse(r.stdout)).toEqual({ mchId: a.mchId, uid: 'u1', asset: 'USDT', available: '7', held: '2' });
  });

  it("log: only its own entries; B's order or withdrawal is not found, like an unknown one (#15 item 2: never a silent (none))", async () => {
    const [all, byOther, byUnknown, byOtherWd, own] = await Promise.all([
      asA(['--json', 'log']),
      asA(['--json', 'log', '--order', ids.b1]),
      asA(['--json', 'log', '--order', UNKNOWN_ORDER]),
      asA(['--json', 'log', '--withdrawal', ids.wb]),
      asA(['log', '--order', ids.a1]),
    ]);
    const entries = JSON.parse(all.stdout) as { mchId: string; action: string; actor: string }[];
    expect(entries.length).toBeGreaterThanOrEqual(4);
    expect(new Set(entries.map((e) => e.mchId))).toEqual(new Set([a.mchId]));
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['merchant.created', 'order.payment_recorded', 'order.refunded', 'withdrawal.applied']));
    expect(all.stdout).not.toContain('secret of B');
    expect(byOther).toEqual({ code: 1, stdout: '', stderr: '{"error":{"kind":"not_found","message":"Order not found"}}\n' });
    expect(byUnknown).toEqual(byOther);
    // Refused since session 20, as an order is: it had answered an empty log.
    expect(byOtherWd).toEqual({ code: 1, stdout: '', stderr: '{"error":{"kind":"not_found","message":"withdrawal not found"}}\n' });
    // Plain: tab-separated rows, the refund by the API and the payment by the seeding operator,
    // whose name a merchant reads as "operator".
    expect(own.stdout).toMatch(new RegExp(`\\tapi:${a.mchId}\\torder\\.refunded\\torder:${ids.a1}\\t`));
    expect(own.stdout).toMatch(new RegExp(`\\toperator\\torder\\.payment_recorded\\torder:${ids.a1}\\t`));
    expect(own.stdout).not.toMatch(/\tseed\t/);
  });

  it("order find: its own order by oid, uid, payment hash and deposit address; B's order, hash and payout answer like nothing at all", async () => {
    const own = (await h.json(['--db', h.db, '--mch-id', a.mchId, 'order', 'show', ids.a1])) as { addresses: { EVM: string } };
    const [byOid, byUid, byHash, byAddress, bOid, bHash, bPayout, bRefund, bWithdrawal, ownWithdrawal] = await Promise.all([
      asA(['--json', 'order', 'find', 'A-1']),
      asA(['--json', 'order', 'find', 'u1']),
      asA(['--json', 'order', 'find', txHash(0xa1).slice(2).toUpperCase()]),
      asA(['--json', 'order', 'find', own.addresses.EVM.toLowerCase()]),
      asA(['order', 'find', 'B-1']),
      asA(['order', 'find', txHash(0xb1)]),
      asA(['order', 'find', ids.b1]),
      asA(['order', 'find', ids.rb]),
      asA(['order', 'find', ids.wb]),
      asA(['--json', 'order', 'find', ids.wa]),
    ]);
    expect(JSON.parse(ownWithdrawal.stdout)).toEqual({ orders: [], withdrawals: [expect.objectContaining({ id: ids.wa, mchId: a.mchId, matchedBy: ['id'] })] });
    for (const [r, by] of [[byOid, 'oid'], [byUid, 'uid'], [byHash, 'txHash'], [byAddress, 'address']] as const) {
      expect(r, by).toMatchObject({ code: 0, stderr: '' });
      const found = JSON.parse(r.stdout) as { orders: { id: string; mchId: string; matchedBy: string[] }[]; withdrawals: unknown[] };
      // u1 is a user of both merchants: A finds its own order only.
      expect(found.orders.map((o) => [o.id, o.mchId, o.matchedBy])).toEqual([[ids.a1, a.mchId, [by]]]);
      expect(found.withdrawals).toEqual([]);
    }
    expect(ids.rb).toMatch(/^rf_/);
    for (const [r, q] of [[bOid, 'B-1'], [bHash, txHash(0xb1)], [bPayout, ids.b1], [bRefund, ids.rb], [bWithdrawal, ids.wb]] as const) {
      // A hash gets the hint every unknown hash gets (on a remote, recorded by the service's operator): B's is one A cannot tell from a hash never seen.
      const hint = q.startsWith('0x') ? "; a transaction sent moments ago may not be read yet (cryptopay summary says how far each chain is read), and one that pays no order's address, or on a chain this ledger does not watch, is not seen at all: look it up in the chain's explorer, then the service's operator records it on its ledger (order mark-paid)" : '';
      expect(r).toEqual({ code: 1, stdout: '', stderr: `error: nothing of merchant ${a.mchId} matches ${q}: no order has it as id, oid, uid, refund id, transaction hash, deposit address or payer's address, and no withdrawal as id or transaction hash${hint}\n` });
    }
  });

  it("summary: A's own figures only (B's refund, balance and pending withdrawal are not in them)", async () => {
    const r = await asA(['--json', 'summary']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({
      mchId: a.mchId,
      pendingWithdrawals: { count: 1, total: { USDT: '2' }, confirming: 0 },
      ...(utcDay(Date.now()) === madeOn && { today: { payments: { count: 1, total: { USDT: '10' } }, refunds: { count: 1, total: { USDT: '1' } } } }),
      balances: { available: { USDT: '7' }, held: { USDT: '2' } },
      failedCallbacks: 0,
    });
  });

  it('order held: an empty list is an answer, not an error', async () => {
    expect(await asA(['--json', 'order', 'held'])).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it("merchant B's id in --mch-id with A's secret is refused as a bad signature (exit 1), and reads nothing", async () => {
    const r = await h.cli(['--remote', server.url, '--mch-id', b.mchId, '--json', 'order', 'list'], { env: { CRYPTOPAY_SECRET: a.secret } });
    expect(r).toEqual({ code: 1, stdout: '', stderr: '{"error":{"kind":"unauthorized","message":"signature does not match"}}\n' });
  });
});

describe('the extension endpoints over raw HTTP', () => {
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as { code: number; msg: string; data: any } };
  };
  const signed = (m: Merchant, fields: Record<string, unknown>) => {
    const body: Record<string, unknown> = { mchId: m.mchId, ...fields, timestamp: Date.now(), nonce: randomBytes(8).toString('hex') };
    return { ...body, sign: sign(body, m.secret) };
  };

  it('a read spends its nonce: the same signed body again is refused (401)', async () => {
    const body = signed(a, { op: 'order/list', limit: 5 });
    const first = await post('/api/v1/order/list', body);
    expect(first.status).toBe(200);
    expect(first.json.data.map((o: { oid: string }) => o.oid)).toEqual(['A-1']);
    const again = await post('/api/v1/order/list', body);
    expect(again).toMatchObject({ status: 401, json: { code: 0, msg: 'nonce has already been used', data: null } });
  });

  it('a field the endpoint does not take is refused by name (400), so no field can point at another merchant', async () => {
    const r = await post('/api/v1/order/list', signed(a, { op: 'order/list', merchantId: b.mchId }));
    expect(r).toMatchObject({ status: 400, json: { code: 0, msg: 'unknown field: merchantId' } });
    const bad = await post('/api/v1/withdraw/list', signed(a, { op: 'withdraw/list', status: 'LOST' }));
    expect(bad).toMatchObject({ status: 400, json: { msg: 'status must be PENDING, CONFIRMED or REJECTED' } });
  });

  it('unsigned, or signed by B for its own id: A never sees B, B sees its own', async () => {
    const unsigned = await post('/api/v1/order/show', { mchId: a.mchId, op: 'order/show', id: ids.a1, timestamp: Date.now(), nonce: 'n1', sign: '0'.repeat(64) });
    expect(unsigned).toMatchObject({ status: 401, json: { msg: BAD_SIGNATURE } });
    const byB = await post('/api/v1/order/show', signed(b, { op: 'order/show', id: ids.b1 }));
    expect(byB).toMatchObject({ status: 200, json: { data: { id: ids.b1, mchId: b.mchId, refundedAmount: '4', onChain: [] } } });
    const byA = await post('/api/v1/order/show', signed(a, { op: 'order/show', oid: 'B-1' }));
    expect(byA).toMatchObject({ status: 404, json: { msg: 'Order not found' } });
  });

  it('POST /api/v1/merchant answers who the signature acts as, and nothing more', async () => {
    const r = await post('/api/v1/merchant', signed(a, { op: 'merchant' }));
    expect(r).toMatchObject({ status: 200, json: { code: 1, data: { mchId: a.mchId, name: 'Shop A', asset: 'USDT' } } });
    expect(Object.keys(r.json.data).sort()).toEqual(['asset', 'mchId', 'name']);
  });
});

describe("a remote's list is input", () => {
  const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };
  const withdrawal = (w: Record<string, unknown> = {}) => ({
    id: 'wd_AAAAAAAAAAAAAAAAAAAAAA', uid: 'u1', amount: '5', asset: 'USDT', to: EVM_TO, chainId: '1', chainType: 'EVM', token: USDT_ETH,
    status: 'PENDING', txHash: null, blockNumber: null, remark: null, createdAt: 1_800_000_000_000, updatedAt: 1_800_000_000_001, ...w,
  });

  it('one malformed row refuses the whole list (exit 3, nothing printed); control characters in text are replaced', async () => {
    // The CLI asks for a page ("page": true): the rows, the total, where the page stands.
    const page = (items: unknown[]) => ({ items, total: items.length, before: 0, next: null });
    const bad = await tiny((_req, res) => envelope(res, page([withdrawal(), withdrawal({ to: `${EVM_TO.slice(0, -1)}D` })])));
    const nasty = await tiny((_req, res) => envelope(res, page([withdrawal({ uid: 'u\u001b[2J1\u202e' })])));
    const [refused, shown] = await Promise.all([
      home().cli(['--remote', bad.url, 'withdraw', 'list'], { env: SIGNER }),
      home().cli(['--remote', nasty.url, 'withdraw', 'list'], { env: SIGNER }),
    ]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/answered success with data this client does not understand \(items\.1\.to: not an EVM address\); nothing of it is printed\n$/);
    expect(bad.hits).toEqual(['POST /api/v1/withdraw/list']);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    // Below the header row.
    expect(shown.stdout.split('\n')[1]!.split('\t')[1]).toBe('u\ufffd[2J1\ufffd');
  });
});

describe('callbacks list and show on the remote', () => {
  it("read like the ledger's own (the sending process aside), and B's callback answers like an unknown one", async () => {
    const c = home();
    const [ma, mb] = [await addMerchant(c, 'Shop A'), await addMerchant(c, 'Shop B')];
    const receiver = await tiny((_req, res) => envelope(res, null));
    const srv = await serve(c, c.db, ['--allow-private-callbacks']);
    const as = (m: Merchant, args: string[]) => c.cli(['--remote', srv.url, ...args], { env: { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: m.secret } });
    const local = (m: Merchant, args: string[]) => c.cli(['--db', c.db, '--mch-id', m.mchId, ...args]);
    const orderOf = async (m: Merchant, oid: string) => {
      const r = await as(m, ['--json', 'order', 'create', '--oid', oid, '--uid', 'u1', '--amount', '3', '--notify-url', `${receiver.url}/${oid}`]);
      expect(r, oid).toMatchObject({ code: 0 });
      const id = JSON.parse(r.stdout).id as string;
      expect(await local(m, ['--json', 'order', 'mark-paid', id, '--tx-hash', txHash(oid === 'CA-1' ? 0xca : 0xcb), '--yes'])).toMatchObject({ code: 0 });
      return id;
    };
    const [oa] = [await orderOf(ma, 'CA-1'), await orderOf(mb, 'CB-1')];
    // serve's sender delivers both order.paid events to the receiver.
    const deadline = Date.now() + 20_000;
    let all: { id: string; mchId: string; status: string }[] = [];
    while (Date.now() < deadline) {
      all = JSON.parse((await c.cli(['--db', c.db, '--json', 'callbacks', 'list'])).stdout);
      if (all.length === 2 && all.every((x) => x.status === 'delivered')) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(all.map((x) => x.status)).toEqual(['delivered', 'delivered']);
    const ca = all.find((x) => x.mchId === ma.mchId)!.id;
    const cb = all.find((x) => x.mchId === mb.mchId)!.id;

    const [listR, listL, listJsonR, listJsonL, showR, showL, other, unknown] = await Promise.all([
      as(ma, ['callbacks', 'list']),
      local(ma, ['callbacks', 'list']),
      as(ma, ['--json', 'callbacks', 'list', '--order', oa]),
      local(ma, ['--json', 'callbacks', 'list', '--order', oa]),
      as(ma, ['--json', 'callbacks', 'show', ca]),
      local(ma, ['--json', 'callbacks', 'show', ca]),
      as(ma, ['callbacks', 'show', cb]),
      as(ma, ['callbacks', 'show', 'evt_AAAAAAAAAAAAAAAAAAAAAA']),
    ]);
    expect(listR).toMatchObject({ code: 0, stderr: '' });
    expect(listR.stdout).toMatch(new RegExp(`^id\\tevent\\tsubject\\tstatus\\tattempts\\tlast answer\\tnext attempt\\tcreated\\n${ca}\\torder\\.paid\\torder:${oa}\\tdelivered\\t1\\t200\\t`));
    expect(listR).toEqual(listL);
    expect(listJsonR).toEqual(listJsonL);
    const shownLocally = JSON.parse(showL.stdout);
    expect(shownLocally.history).toHaveLength(1);
    expect(shownLocally.history[0].by).toMatch(/:\d+:/); // host:pid:random, locally
    expect(JSON.parse(showR.stdout)).toEqual({ ...shownLocally, history: [{ ...shownLocally.history[0], by: 'service' }] });
    expect(JSON.parse(showR.stdout).payload).toMatchObject({ event: 'order.paid', id: oa, oid: 'CA-1' });
    expect(other).toEqual({ code: 1, stdout: '', stderr: `error: callback ${cb} not found\n` });
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: callback evt_AAAAAAAAAAAAAAAAAAAAAA not found\n' });
  }, 60_000);
});

// Last: it refunds at both merchants, which the tests above do not expect.
describe('following the log on the remote', () => {
  it('log --follow on the remote: the newest entries of A, then each new one of A as it is committed, none of B; SIGTERM ends it with 0', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN, cliEnv } = await import('../helpers/cli.js');
    const child = spawn(process.execPath, [BIN, '--remote', server.url, '--json', 'log', '--follow', '--limit', '2'], {
      env: cliEnv({ ...h.env, CRYPTOPAY_MCH_ID: a.mchId, CRYPTOPAY_SECRET: a.secret }),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: number; mchId: string; action: string; subject: string });
    const until = async (what: string, done: () => boolean) => {
      for (let i = 0; i < 300 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(done(), `${what}; stdout: ${out}; stderr: ${err}`).toBe(true);
    };
    await until('the two newest entries of A', () => lines().length === 2);
    expect(lines().map((e) => e.action)).toEqual(['order.refunded', 'withdrawal.applied']);
    // B changes something, then A does: only A's entry follows.
    const other = await h.json(['--db', h.db, '--mch-id', b.mchId, 'refund', '--id', ids.b1, '--amount', '1', '--remark', 'followed by B', '--yes']);
    expect(other.refundId).toBeTruthy();
    const mine = await asA(['--json', 'refund', '--id', ids.a1, '--amount', '1', '--remark', 'followed by A', '--repeat', '--yes']);
    expect(mine).toMatchObject({ code: 0 });
    await until("A's new refund", () => lines().some((e) => e.action === 'order.refunded' && e.subject === `order:${ids.a1}` && out.includes('followed by A')));
    const seen = lines();
    expect(new Set(seen.map((e) => e.mchId))).toEqual(new Set([a.mchId]));
    expect(out).not.toContain('followed by B');
    expect(out).not.toContain(other.refundId);
    // In commit order, each once.
    expect(seen.map((e) => e.id)).toEqual([...new Set(seen.map((e) => e.id))].sort((x, y) => x - y));
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(0);
    expect(err).toBe('');
  });
});
