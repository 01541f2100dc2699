/**
 * Remote mode answers exactly like local mode (decisions §10): the same scenario runs once with
 * `--db A` against one ledger and once with `--remote URL` against `cryptopay serve` on another
 * ledger holding the same starting state. Every step must give the same exit code, the same
 * stdout (plain and --json) and the same stderr, once the values that are random by design
 * (ids, derived addresses, times) are replaced by names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../helpers/service.js';
import {
  addMerchant,
  EVM_TO,
  home,
  serve,
  stopAll,
  TRON_CHAIN,
  TRON_TO,
  txHash,
  USDT_ETH,
  USDT_TRON,
  type CliResult,
  type Home,
  type Merchant,
  type Served,
} from './_support.js';

afterAll(stopAll);

interface Side {
  label: 'local' | 'remote';
  h: Home;
  m: Merchant;
  /** The operation command, local (--db) or remote (--remote): nothing else differs. */
  run(args: string[]): Promise<CliResult>;
  /** Administration on this side's ledger file, always local. */
  seed(args: string[]): Promise<CliResult>;
  /** Actual random value -> its name in the scenario. */
  names: Map<string, string>;
  results: Map<string, CliResult>;
}

const UNKNOWN_ORDER = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
/** One expiry for both sides: an hour from when the suite starts. */
const EXPIRY = Date.now() + 3_600_000;
const UNKNOWN_WD = 'wd_AAAAAAAAAAAAAAAAAAAAAA';
const evmApply = (uid: string, amount: string) => ['withdraw', 'apply', '--uid', uid, '--amount', amount, '--to', EVM_TO, '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH];
const tronApply = (uid: string, amount: string) => ['withdraw', 'apply', '--uid', uid, '--amount', amount, '--to', TRON_TO, '--chain-id', TRON_CHAIN, '--chain-type', 'TRON', '--token', USDT_TRON];

/**
 * Every step of the scenario, in order, with what local mode must do (the remote side must then
 * match it). `out`/`err` are checked on the masked text.
 */
const EXPECTED: Record<string, { code: number; out?: RegExp; err?: RegExp }> = {
  // phase 1: nothing paid yet
  'order create': { code: 0, out: /^id {12}<O1>\noid {11}O1\nuid {11}u1\namount {8}10\.5 USDT\nstatus {8}PENDING_PAY\nexpires {7}<time>\nEVM address {3}<O1\.EVM>\nTRON address {2}<O1\.TRON>\npay url {7}<pages>\/pay\/<O1>\n$/ },
  'order create --json': { code: 0, out: /"id": "<O2>"[\s\S]*"amount": "20"[\s\S]*"status": "PENDING_PAY"[\s\S]*"expiredAt": <ms>/ },
  // A value the CLI can judge by its form is a usage error before anything is sent (issue #15 item 7).
  'order create, negative amount': { code: 2, err: /^error: --amount must be a plain decimal .*got "-1"\n$/ },
  'order create, negative amount --json': { code: 2, err: /^\{"error":\{"kind":"usage","message":"--amount must be a plain decimal/ },
  'order create, 7 decimals': { code: 2, err: /^error: --amount has more than 6 decimal places\n$/ },
  'order create, missing --uid': { code: 2, err: /^error: missing required option --uid\n$/ },
  'order create --json, every option': { code: 0, out: /"id": "<O4>",\n {2}"oid": "O4",\n {2}"uid": "u4",\n {2}"amount": "1\.25",\n {2}"status": "PENDING_PAY",\n {2}"expiredAt": <ms>,/ },
  'order create, expiry in the past': { code: 2, err: /^error: --expired-at must lie in the future \(1000 is <time>\)\n$/ },
  // Which chains exist is the service's to say: a refusal, in the CLI's words.
  'withdraw apply, unknown chain': { code: 1, err: /^error: --chain-id 999 is not a chain this service knows \(known: 1, 56, 137, 728126428\)\n$/ },
  'order status, unknown': { code: 1, err: /^error: Order not found: no order of merchant <mchId> has the id or oid ord_\S+ \(cryptopay order find ord_\S+ also searches uids, transaction hashes and deposit addresses\)\n$/ },
  'order status, unknown --json': { code: 1, err: /^\{"error":\{"kind":"not_found","message":"Order not found"\}\}\n$/ },
  'address, unknown': { code: 1, err: /^error: Not found\n$/ },
  'address, unknown --json': { code: 1, err: /^\{"error":\{"kind":"not_found","message":"Not found"\}\}\n$/ },
  'withdraw apply, no balance': { code: 1, err: /^error: insufficient balance: user u1 has 0 USDT available, 5 needed\n$/ },
  'withdraw confirm, unknown': { code: 1, err: /^error: withdrawal not found\n$/ },
  'withdraw reject, unknown --json': { code: 1, err: /"kind":"not_found","message":"withdrawal not found"/ },
  // phase 2: the orders exist
  'order status': { code: 0, out: /^PENDING_PAY\n$/ },
  'order status --json': { code: 0, out: /^\{\n {2}"id": "<O2>",\n {2}"status": "PENDING_PAY"\n\}\n$/ },
  address: { code: 0, out: /^EVM {3}<O1\.EVM>\nTRON {2}<O1\.TRON>\n$/ },
  'address --json': { code: 0, out: /^\{\n {2}"EVM": "<O2\.EVM>",\n {2}"TRON": "<O2\.TRON>"\n\}\n$/ },
  'refund, not paid': { code: 1, err: /^error: order status is not Paid \(it is PENDING_PAY\)\n$/ },
  'refund, not paid --json': { code: 1, err: /"kind":"conflict","message":"order status is not Paid \(it is PENDING_PAY\)"/ },
  'refund, unknown order': { code: 1, err: /^error: Order not found: no order has the id ord_A+ \(cryptopay order find ord_A+ also searches uids, transaction hashes and deposit addresses\)\n$/ },
  'refund, without --yes': { code: 2, err: /^error: Refund: this changes money, so it needs confirmation; pass --yes/ },
  'refund, id and oid disagree': { code: 1, err: /^error: id <O1> and oid O2 name different orders\n$/ },
  'order create, same oid other amount': { code: 1, err: /^error: oid O1 is already used by order <O1> with a different amount \(the order's 10\.5, this request's 11\)\n$/ },
  // phase 3: O1 paid 10.5 (user u1), u2 credited 70 by hand
  // The refund's own id and the order after it (#15 item 3): still PAID after a partial refund.
  refund: { code: 0, out: /^refund {8}<refund>\norder {9}<O1> \(oid O1\)\namount {8}2 USDT\norder status {2}PAID\npaid {10}10\.5 USDT\nrefunded {6}2 USDT \(8\.5 USDT left to refund\)\nremark {8}partial\ntime {10}<time>\non chain {6}nothing sent: a refund is an entry in the ledger; the merchant pays the customer back\n$/ },
  'refund --json by oid': { code: 0, out: /^\{\n {2}"refundId": "<refund>",\n {2}"mchId": "<mchId>",\n {2}"id": "<O1>",\n {2}"oid": "O1",\n {2}"amount": "1",\n {2}"status": "REFUNDED",\n {2}"remark": "",\n {2}"refundTime": <ms>,\n {2}"asset": "USDT",\n {2}"orderStatus": "PAID",\n {2}"paidAmount": "10\.5",\n {2}"refundedAmount": "3"\n\}\n$/ },
  'order status, partly refunded': { code: 0, out: /^PAID\n$/ },
  'refund, more than paid': { code: 1, err: /^error: refund amount 100 is above the original payment 10\.5\n$/ },
  'withdraw apply --json (u1)': { code: 0, out: /"id": "<W1>"[\s\S]*"uid": "u1"[\s\S]*"status": "PENDING"/ },
  'refund, insufficient balance': { code: 1, err: /^error: insufficient balance: user u1 has 0\.5 USDT available \(and 7 USDT held by pending withdrawals\), 5 needed: refund at most 0\.5 USDT now \(--amount 0\.5\); what else user u1 had was withdrawn or refunded, or is held by withdrawals \(cryptopay withdraw list --uid u1\)\n$/ },
  'withdraw reject': { code: 0, out: /^id {7}<W1>\nuid {6}u1\namount {3}7 USDT\nto {7}0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\nchain {4}EVM 1\ntoken {4}0xdAC17F958D2ee523a2206206994597C13D831ec7\nstatus {3}REJECTED\ntx hash {2}-\nblock {4}-\nremark {3}back to the user\ncreated {2}<time>\nupdated {2}<time>\n$/ },
  'refund the rest --json': { code: 0, out: /"amount": "7\.5"[\s\S]*"orderStatus": "REFUNDED",\n {2}"paidAmount": "10\.5",\n {2}"refundedAmount": "10\.5"/ },
  'order status, refunded': { code: 0, out: /^REFUNDED\n$/ },
  'order status, refunded --json': { code: 0, out: /"status": "REFUNDED"/ },
  // #15 item 2 on both sides: an oid where an id goes, list filters, a uid without activity.
  'order status by oid --json': { code: 0, out: /^\{\n {2}"id": "<O1>",\n {2}"status": "REFUNDED"\n\}\n$/ },
  'order list --oid O2': { code: 0, out: /^id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires\n<O2>\tO2\tu2\t20\tPENDING_PAY\t[^\n]*\n$/ },
  'order list --since, in the future': { code: 0, out: /^id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires\n$/ },
  'balance, no activity': { code: 1, err: /^error: user nobody has no activity with merchant <mchId>: no order, payment, refund, withdrawal or adjustment\n$/ },
  'refund, already refunded': { code: 1, err: /^error: order status is not Paid \(it is REFUNDED\)\n$/ },
  'withdraw apply (u2, EVM)': { code: 0, out: /^id {7}<W2>\nuid {6}u2\namount {3}5 USDT\n[\s\S]*status {3}PENDING\n/ },
  'withdraw apply --json (u2, TRON)': { code: 0, out: /"id": "<W3>"[\s\S]*"to": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"[\s\S]*"chainType": "TRON"/ },
  'withdraw apply (u2, EVM, for the hash reuse)': { code: 0, out: /^id {7}<W4>\n/ },
  'withdraw apply, insufficient balance': { code: 1, err: /^error: insufficient balance: user u2 has 58 USDT available \(and 12 USDT held by pending withdrawals\), 1000 needed\n$/ },
  'withdraw apply, insufficient balance --json': { code: 1, err: /"kind":"conflict","message":"insufficient balance: user u2 has 58 USDT available \(and 12 USDT held by pending withdrawals\), 1000 needed"/ },
  'withdraw apply, bad address': { code: 2, err: /^error: --to is not a valid EVM address: mixed-case checksum \(EIP-55\) does not match\n$/ },
  'withdraw apply, 7 decimals': { code: 2, err: /^error: --amount has more than 6 decimal places\n$/ },
  'withdraw apply, zero': { code: 2, err: /^error: --amount must be positive\n$/ },
  'withdraw confirm': {
    code: 0,
    out: /^id {12}<W2>\n[\s\S]*status {8}CONFIRMED\ntx hash {7}0x0{63}2\nblock {9}123\n[\s\S]*verification {2}NOT verified on chain\nwhy {11}chain 1 \(Ethereum\) has no rpcUrl configured: not verified on chain\n/,
    err: /^warning: confirmed without checking the transaction on chain \(chain 1 \(Ethereum\) has no rpcUrl configured: not verified on chain\): make sure it pays this withdrawal\n$/,
  },
  'withdraw confirm, again': { code: 1, err: /^error: withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be confirmed\n$/ },
  'withdraw confirm, again --json': { code: 1, err: /^\{"error":\{"kind":"conflict","message":"withdrawal is CONFIRMED, not PENDING/ },
  'withdraw confirm, hash already used': { code: 1, err: /^error: transaction 0x0{63}2 is already recorded in this ledger: it confirms withdrawal <W2>, and a transaction confirms at most one withdrawal \(pay each withdrawal with a transaction of its own\)\n$/ },
  'withdraw confirm, bad hash': { code: 2, err: /^error: --tx-hash must be a transaction hash: 0x and 64 hex digits \(EVM\), or 64 hex digits \(TRON\)\n$/ },
  'withdraw reject, confirmed one': { code: 1, err: /^error: withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be rejected\n$/ },
  'withdraw reject --json': { code: 0, out: /"id": "<W3>"[\s\S]*"status": "REJECTED"[\s\S]*"remark": null/ },
  'withdraw confirm, rejected one --json': { code: 1, err: /"message":"withdrawal is REJECTED, not PENDING: only a pending withdrawal can be confirmed"/ },
  'withdraw confirm --json': { code: 0, out: /"id": "<W4>"[\s\S]*"status": "CONFIRMED",\n {2}"txHash": "0x0{63}3",\n {2}"blockNumber": 456/ },
  // phase 4: the operator's reads (issue #15 item 8), through the extension endpoints on the remote side
  'order list --uid u1': { code: 0, out: /^id\toid\tuid\tamount\tstatus\tpaid\trefunded\texpires\n<O1>\tO1\tu1\t10\.5\tREFUNDED\t10\.5\t10\.5\t<time>\n$/ },
  // O2 and O4 are created side by side, so which is newer is a race: --uid makes the answer one order on both sides.
  'order list --json --status PENDING_PAY --uid u2 --limit 1': { code: 0, out: /^\[\n {2}\{\n {4}"id": "<O2>"[\s\S]*"payments": \[\]\n {2}\}\n\]\n$/ },
  'order show': { code: 0, out: /^id {12}<O1>\n[\s\S]*status {8}REFUNDED\n[\s\S]*merchant {6}<mchId>\npaid {10}10\.5 USDT\nrefunded {6}10\.5 USDT\npaid at {7}<time>\n[\s\S]*payment {7}10\.5 tx 0x0{63}1\nrefund {8}2 USDT at <time> \(<refund>\): partial\nrefund {8}1 USDT at <time> \(<refund>\)\nrefund {8}7\.5 USDT at <time> \(<refund>\)\n$/ },
  'order show --json': { code: 0, out: /"id": "<O4>"[\s\S]*"memo": "gift card"[\s\S]*"payments": \[\],\n {2}"onChain": \[\]\n\}\n$/ },
  'order show, unknown': { code: 1, err: /^error: Order not found: no order of merchant <mchId> has the id or oid ord_\S+ \(cryptopay order find/ },
  'withdraw list': { code: 0, out: /^id\tuid\tamount\tto\tchain\tstatus\ttx hash\tcreated\n<W4>\tu2\t1 USDT\t0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\tEVM 1\tCONFIRMED\t0x0{63}3\t<time>\n<W3>\tu2\t6 USDT\tTLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7\tTRON 728126428\tREJECTED\t-\t<time>\n<W2>\t[\s\S]*<W1>\tu1\t7 USDT\t[\s\S]*REJECTED\t-\t<time>\n$/ },
  'withdraw list --json --status CONFIRMED': { code: 0, out: /"id": "<W4>"[\s\S]*"id": "<W2>"/ },
  'withdraw show': { code: 0, out: /^id {12}<W2>\n[\s\S]*status {8}CONFIRMED\n[\s\S]*verification {2}NOT verified on chain\nwhy {11}/ },
  'withdraw show, unknown --json': { code: 1, err: /^\{"error":\{"kind":"not_found","message":"withdrawal not found"\}\}\n$/ },
  'refund list --order O1': { code: 0, out: /^refund\torder\toid\tamount\tremark\ttime\n<refund>\t<O1>\tO1\t7\.5\t-\t<time>\n<refund>\t<O1>\tO1\t1\t-\t<time>\n<refund>\t<O1>\tO1\t2\tpartial\t<time>\n$/ },
  'refund list --json --limit 1': { code: 0, out: /^\[\n {2}\{\n {4}"refundId": "<refund>",\n {4}"mchId": "<mchId>",\n {4}"id": "<O1>",[\s\S]*"amount": "7\.5"/ },
  'balance u2': { code: 0, out: /^uid {8}u2\nmerchant {3}<mchId>\navailable {2}64 USDT\nheld {7}0 USDT\n$/ },
  'balance u1 --json': { code: 0, out: /"available": "0",\n {2}"held": "0"/ },
  'log --order O1': { code: 0, out: /^<time>\t<actor>\torder\.refunded\torder:<O1>\trefundId=<refund> amount=7\.5 [\s\S]*<time><seeder>order\.payment_recorded\torder:<O1>\ttxHash=0x0{63}1 /m },
  'log --json --withdrawal W1': { code: 0, out: /"action": "withdrawal\.rejected"[\s\S]*"action": "withdrawal\.applied"/ },
  'order held --json': { code: 0, out: /^\[\]\n$/ },
  // Finding, paging with the total, and the summary: the same on a profile (issue #15 items 2, 8, 10).
  'order find O1': { code: 0, out: /^matched by\tid\toid\tuid\tamount\tstatus\tpaid\trefunded\tcreated\noid\t<O1>\tO1\tu1\t10\.5 USDT\tREFUNDED\t10\.5\t10\.5\t<time>\n$/ },
  'order find --json, the payment hash in capitals without 0x': { code: 0, out: /^\{\n {2}"orders": \[\n {4}\{\n {6}"id": "<O1>"[\s\S]*"matchedBy": \[\n {8}"txHash"\n {6}\][\s\S]*"withdrawals": \[\]\n\}\n$/ },
  'order find, a payout hash': { code: 0, out: /^matched by\tid\toid\tuid\tamount\tstatus\tpaid\trefunded\tcreated\ntx hash \(withdrawal\)\t<W2>\t-\tu2\t5 USDT\tCONFIRMED\t-\t-\t<time>\n$/ },
  'order find, nothing': { code: 1, err: /^error: nothing of merchant <mchId> matches nobody-at-all: no order has it as id, oid, uid, refund id, transaction hash, deposit address or payer's address, and no withdrawal as id or transaction hash\n$/ },
  'withdraw list --limit 2': { code: 0, out: /^id\tuid\tamount\tto\tchain\tstatus\ttx hash\tcreated\n<W4>\t[^\n]*\n<W3>\t[^\n]*\n$/, err: /^showing 2 of 4; next page: --cursor <W3>\n$/ },
  'withdraw list --limit 2, next page': { code: 0, out: /^id\tuid\tamount\tto\tchain\tstatus\ttx hash\tcreated\n<W2>\t[^\n]*\n<W1>\t[^\n]*\n$/, err: /^showing 3-4 of 4\n$/ },
  'order list, unknown cursor': { code: 1, err: /^error: cursor ord_AAAAAAAAAAAAAAAAAAAAAA is not an order of this ledger: pass the id the previous page named\n$/ },
  summary: {
    code: 0,
    // Today's figures (1 payment of 10.5, 3 refunds, 2 withdrawals) unless the run crossed midnight UTC: both sides alike.
    out: /^ledger {15}merchant <mchId>, at <time>\npending withdrawals {2}none\ntoday {16}since <time>\n {2}payments {11}(1, 10\.5 USDT|none)\n {2}refunds {12}(3, 10\.5 USDT|[^\n]+)\n {2}withdrawals {8}(2, 6 USDT|[^\n]+)\n[\s\S]*users hold {11}available 64 USDT; held for withdrawals 0 USDT\nheld payments {8}none\nrefused payments {5}none\nchains {15}none watched on this ledger\nretrying callbacks {3}none\nfailed callbacks {5}none\n$/,
  },
  'summary --json': { code: 0, out: /^\{\n {2}"at": <ms>,\n {2}"mchId": "<mchId>",[\s\S]*"balances": \{\n {4}"available": \{\n {6}"USDT": "64"\n {4}\},\n {4}"held": \{\n {6}"USDT": "0"/ },
};

/** Replaces every random value by its name, and times by <time>/<ms>. */
function mask(text: string, names: Map<string, string>): string {
  // Longest first, so an id never half-replaces a longer value that contains it.
  for (const [actual, name] of [...names].sort((a, b) => b[0].length - a[0].length)) text = text.split(actual).join(`<${name}>`);
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>')
    .replace(/"(expiredAt|createdAt|updatedAt|refundTime|paidAt|at)": \d+/g, '"$1": <ms>')
    // Refund ids are in no answer of the interface; the lists and the log show them.
    .replace(/rf_[0-9a-v]{9}[A-Za-z0-9_-]{22}/g, '<refund>')
    // Where payment pages are: serve's address on the remote side, serve's default on the local one.
    .replace(/http:\/\/127\.0\.0\.1:\d+\/pay\//g, '<pages>/pay/');
}

async function scenario(s: Side): Promise<void> {
  const step = async (name: string, args: string[]) => {
    expect(s.results.has(name), `step ${name} runs once`).toBe(false);
    const r = await s.run(args);
    s.results.set(name, r);
    return r;
  };
  const parallel = (steps: [string, string[]][]) => Promise.all(steps.map(([n, a]) => step(n, a)));
  const seed = async (args: string[]) => {
    const r = await s.seed(args);
    expect(r, `${s.label} seed: ${args.join(' ')}`).toMatchObject({ code: 0 });
    return r;
  };
  const name = (actual: string, as: string) => {
    expect(actual, as).toBeTruthy();
    s.names.set(actual, as);
  };
  const jsonOf = (step: string) => {
    const r = s.results.get(step)!;
    expect(r, `${s.label}: ${step}`).toMatchObject({ code: 0 });
    return JSON.parse(r.stdout);
  };

  // Phase 1: two orders, and refusals that need no state.
  await parallel([
    ['order create', ['order', 'create', '--oid', 'O1', '--uid', 'u1', '--amount', '10.50']],
    ['order create --json', ['--json', 'order', 'create', '--oid', 'O2', '--uid', 'u2', '--amount', '20']],
    ['order create, negative amount', ['order', 'create', '--oid', 'O3', '--uid', 'u1', '--amount', '-1']],
    ['order create, negative amount --json', ['--json', 'order', 'create', '--oid', 'O3', '--uid', 'u1', '--amount', '-1']],
    ['order create, 7 decimals', ['order', 'create', '--oid', 'O3', '--uid', 'u1', '--amount', '1.1234567']],
    ['order create, missing --uid', ['order', 'create', '--oid', 'O3', '--amount', '1']],
    ['order create --json, every option', ['--json', 'order', 'create', '--oid', 'O4', '--uid', 'u4', '--amount', '1.250', '--memo', 'gift card', '--expired-at', String(EXPIRY), '--notify-url', 'https://shop.example/notify', '--redirect-url', 'https://shop.example/done', '--logo', 'https://shop.example/logo.png']],
    ['order create, expiry in the past', ['order', 'create', '--oid', 'O5', '--uid', 'u1', '--amount', '1', '--expired-at', '1000']],
    ['withdraw apply, unknown chain', ['withdraw', 'apply', '--uid', 'u1', '--amount', '1', '--to', EVM_TO, '--chain-id', '999', '--chain-type', 'EVM', '--token', USDT_ETH]],
    ['order status, unknown', ['order', 'status', UNKNOWN_ORDER]],
    ['order status, unknown --json', ['--json', 'order', 'status', UNKNOWN_ORDER]],
    ['address, unknown', ['address', UNKNOWN_ORDER]],
    ['address, unknown --json', ['--json', 'address', UNKNOWN_ORDER]],
    ['withdraw apply, no balance', evmApply('u1', '5')],
    ['withdraw confirm, unknown', ['withdraw', 'confirm', UNKNOWN_WD, '--tx-hash', txHash(9), '--block-number', '1', '--yes']],
    ['withdraw reject, unknown --json', ['--json', 'withdraw', 'reject', UNKNOWN_WD, '--yes']],
  ]);
  const created = s.results.get('order create')!;
  expect(created, `${s.label}: order create`).toMatchObject({ code: 0 });
  const field = (label: string) => new RegExp(`^${label} +(\\S+)$`, 'm').exec(created.stdout)?.[1] ?? '';
  const o1 = field('id');
  name(o1, 'O1');
  name(field('EVM address'), 'O1.EVM');
  name(field('TRON address'), 'O1.TRON');
  const o4 = jsonOf('order create --json, every option');
  name(o4.id, 'O4');
  name(o4.addresses.EVM, 'O4.EVM');
  name(o4.addresses.TRON, 'O4.TRON');
  expect(o4.expiredAt, `${s.label}: --expired-at is kept`).toBe(EXPIRY);
  const o2 = jsonOf('order create --json');
  name(o2.id, 'O2');
  name(o2.addresses.EVM, 'O2.EVM');
  name(o2.addresses.TRON, 'O2.TRON');

  // Phase 2: reads of existing orders, refusals of an unpaid order.
  await parallel([
    ['order status', ['order', 'status', o1]],
    ['order status --json', ['--json', 'order', 'status', o2.id]],
    ['address', ['address', o1]],
    ['address --json', ['--json', 'address', o2.id]],
    ['refund, not paid', ['refund', '--id', o1, '--amount', '1', '--yes']],
    ['refund, not paid --json', ['--json', 'refund', '--oid', 'O2', '--amount', '1', '--yes']],
    ['refund, unknown order', ['refund', '--id', UNKNOWN_ORDER, '--amount', '1', '--yes']],
    ['refund, without --yes', ['refund', '--id', o1, '--amount', '1']],
    ['refund, id and oid disagree', ['refund', '--id', o1, '--oid', 'O2', '--amount', '1', '--yes']],
    ['order create, same oid other amount', ['order', 'create', '--oid', 'O1', '--uid', 'u1', '--amount', '11']],
  ]);

  // The same starting state on both ledgers, by the local administration commands.
  await seed(['--json', 'order', 'mark-paid', o1, '--tx-hash', txHash(1), '--yes']);
  await seed(['--json', 'balance', 'adjust', 'u2', '--amount', '+70', '--reason', 'seed', '--yes']);

  // Phase 3: money moves; each step depends on the one before.
  await step('refund', ['refund', '--id', o1, '--amount', '2', '--remark', 'partial', '--yes']);
  await step('refund --json by oid', ['--json', 'refund', '--oid', 'O1', '--amount', '1', '--yes']);
  await step('order status, partly refunded', ['order', 'status', o1]);
  await step('refund, more than paid', ['refund', '--id', o1, '--amount', '100', '--yes']);
  await step('withdraw apply --json (u1)', ['--json', ...evmApply('u1', '7')]);
  name(jsonOf('withdraw apply --json (u1)').id, 'W1');
  await step('refund, insufficient balance', ['refund', '--id', o1, '--amount', '5', '--yes']);
  await step('withdraw reject', ['withdraw', 'reject', [...s.names].find(([, n]) => n === 'W1')![0], '--remark', 'back to the user', '--yes']);
  await step('refund the rest --json', ['--json', 'refund', '--id', o1, '--rest', '--yes']);
  await parallel([
    ['order status, refunded', ['order', 'status', o1]],
    ['order status, refunded --json', ['--json', 'order', 'status', o1]],
    ['order status by oid --json', ['--json', 'order', 'status', 'O1']],
    ['order list --oid O2', ['order', 'list', '--oid', 'O2']],
    ['order list --since, in the future', ['order', 'list', '--since', '2099-01-01']],
    ['balance, no activity', ['balance', 'nobody']],
    ['refund, already refunded', ['refund', '--id', o1, '--amount', '1', '--yes']],
  ]);

  await step('withdraw apply (u2, EVM)', evmApply('u2', '5'));
  const w2 = /^id +(\S+)$/m.exec(s.results.get('withdraw apply (u2, EVM)')!.stdout)?.[1] ?? '';
  name(w2, 'W2');
  await step('withdraw apply --json (u2, TRON)', ['--json', ...tronApply('u2', '6')]);
  const w3 = jsonOf('withdraw apply --json (u2, TRON)').id as string;
  name(w3, 'W3');
  await step('withdraw apply (u2, EVM, for the hash reuse)', evmApply('u2', '1'));
  const w4 = /^id +(\S+)$/m.exec(s.results.get('withdraw apply (u2, EVM, for the hash reuse)')!.stdout)?.[1] ?? '';
  name(w4, 'W4');
  await parallel([
    ['withdraw apply, insufficient balance', evmApply('u2', '1000')],
    ['withdraw apply, insufficient balance --json', ['--json', ...evmApply('u2', '1000')]],
    ['withdraw apply, bad address', ['withdraw', 'apply', '--uid', 'u2', '--amount', '1', '--to', '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '--chain-id', '1', '--chain-type', 'EVM', '--token', USDT_ETH]],
    ['withdraw apply, 7 decimals', evmApply('u2', '0.1234567')],
    ['withdraw apply, zero', evmApply('u2', '0')],
  ]);
  await step('withdraw confirm', ['withdraw', 'confirm', w2, '--tx-hash', txHash(2), '--block-number', '123', '--yes']);
  await parallel([
    ['withdraw confirm, again', ['withdraw', 'confirm', w2, '--tx-hash', txHash(5), '--block-number', '124', '--yes']],
    ['withdraw confirm, again --json', ['--json', 'withdraw', 'confirm', w2, '--tx-hash', txHash(6), '--block-number', '124', '--yes']],
    ['withdraw confirm, hash already used', ['withdraw', 'confirm', w4, '--tx-hash', txHash(2), '--block-number', '125', '--yes']],
    ['withdraw confirm, bad hash', ['withdraw', 'confirm', w4, '--tx-hash', '0x1234', '--block-number', '125', '--yes']],
    ['withdraw reject, confirmed one', ['withdraw', 'reject', w2, '--yes']],
  ]);
  await step('withdraw reject --json', ['--json', 'withdraw', 'reject', w3, '--yes']);
  await step('withdraw confirm, rejected one --json', ['--json', 'withdraw', 'confirm', w3, '--tx-hash', 'ab'.repeat(32), '--block-number', '7', '--yes']);
  await step('withdraw confirm --json', ['--json', 'withdraw', 'confirm', w4, '--tx-hash', txHash(3), '--block-number', '456', '--yes']);

  // Phase 4: what an operator reads, locally from the ledger, remotely through the extensions.
  const w1 = [...s.names].find(([, n]) => n === 'W1')![0];
  await parallel([
    ['order list --uid u1', ['order', 'list', '--uid', 'u1']],
    ['order list --json --status PENDING_PAY --uid u2 --limit 1', ['--json', 'order', 'list', '--status', 'PENDING_PAY', '--uid', 'u2', '--limit', '1']],
    ['order show', ['order', 'show', o1]],
    ['order show --json', ['--json', 'order', 'show', o4.id]],
    ['order show, unknown', ['order', 'show', UNKNOWN_ORDER]],
    ['withdraw list', ['withdraw', 'list']],
    ['withdraw list --json --status CONFIRMED', ['--json', 'withdraw', 'list', '--status', 'CONFIRMED']],
    ['withdraw show', ['withdraw', 'show', w2]],
    ['withdraw show, unknown --json', ['--json', 'withdraw', 'show', UNKNOWN_WD]],
    ['refund list --order O1', ['refund', 'list', '--order', o1]],
    ['refund list --json --limit 1', ['--json', 'refund', 'list', '--limit', '1']],
    ['balance u2', ['balance', 'u2']],
    ['balance u1 --json', ['--json', 'balance', 'u1']],
    ['log --order O1', ['log', '--order', o1]],
    ['log --json --withdrawal W1', ['--json', 'log', '--withdrawal', w1]],
    ['order held --json', ['--json', 'order', 'held']],
    ['order find O1', ['order', 'find', 'O1']],
    ['order find --json, the payment hash in capitals without 0x', ['--json', 'order', 'find', txHash(1).slice(2).toUpperCase()]],
    ['order find, a payout hash', ['order', 'find', txHash(2)]],
    ['order find, nothing', ['order', 'find', 'nobody-at-all']],
    ['withdraw list --limit 2', ['withdraw', 'list', '--limit', '2']],
    ['withdraw list --limit 2, next page', ['withdraw', 'list', '--limit', '2', '--cursor', w3]],
    ['order list, unknown cursor', ['order', 'list', '--cursor', UNKNOWN_ORDER]],
    ['summary', ['summary']],
    ['summary --json', ['--json', 'summary']],
  ]);
}

/** Balances, orders and withdrawals of a ledger file after the scenario, read locally. */
async function endState(s: Side): Promise<string> {
  const [u1, u2, orders, withdrawals, check] = await Promise.all([
    s.seed(['--json', 'balance', 'u1']),
    s.seed(['--json', 'balance', 'u2']),
    s.seed(['--json', 'order', 'list']),
    s.seed(['--json', 'withdraw', 'list']),
    s.seed(['ledger', 'check']),
  ]);
  for (const r of [u1, u2, orders, withdrawals, check]) expect(r, s.label).toMatchObject({ code: 0 });
  const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
  const state = {
    u1: JSON.parse(u1.stdout),
    u2: JSON.parse(u2.stdout),
    orders: JSON.parse(orders.stdout).map((o: Record<string, unknown>) => pick(o, ['id', 'oid', 'uid', 'amount', 'status', 'paidAmount', 'refundedAmount'])),
    withdrawals: JSON.parse(withdrawals.stdout).map((w: Record<string, unknown>) => pick(w, ['id', 'uid', 'amount', 'status', 'txHash', 'blockNumber', 'remark'])),
  };
  // Named, then sorted by name: O1 and O2 were created at the same moment, in either order.
  const named = JSON.parse(mask(JSON.stringify(state), s.names)) as typeof state;
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  named.orders.sort(byId);
  named.withdrawals.sort(byId);
  return JSON.stringify(named, null, 2);
}

describe('remote mode gives the same output and exit codes as local mode', () => {
  let local: Side;
  let remote: Side;
  /** The scenario ran across midnight UTC: each side may have read its "today" on another day. */
  let crossedMidnight = false;
  let server: Served;

  beforeAll(async () => {
    const [hl, hr] = [home(), home()];
    const [ml, mr] = await Promise.all([addMerchant(hl), addMerchant(hr)]);
    server = await serve(hr);
    const side = (label: Side['label'], h: Home, m: Merchant, target: string[], actor: string, seeder: string): Side => {
      const env = { CRYPTOPAY_MCH_ID: m.mchId, CRYPTOPAY_SECRET: m.secret };
      return {
        label,
        h,
        m,
        run: (args) => h.cli([...target, ...args], { env }),
        // The same operator on both ledgers, so the audit log reads alike.
        seed: (args) => h.local(['--operator', 'seed', ...args]),
        names: new Map([[m.mchId, 'mchId'], [actor, 'actor'], [`\t${seeder}\t`, 'seeder']]),
        results: new Map(),
      };
    };
    // The actor of a change: the operator locally, api:<mchId> on the server (an operator may not
    // call themselves that: test/cli/usage.test.ts); both read <actor> in the audit log.
    // The seeding operator's entries: its name locally, "operator" to a merchant on the server
    // (docs/decisions.md, "A merchant's log is numbered on its own").
    local = side('local', hl, ml, ['--db', hl.db, '--operator', 'support-1'], 'support-1', 'seed');
    remote = side('remote', hr, mr, ['--remote', server.url], `api:${mr.mchId}`, 'operator');
    // Both sides at once: they share nothing.
    const day = utcDay(Date.now());
    await Promise.all([scenario(local), scenario(remote)]);
    crossedMidnight = utcDay(Date.now()) !== day;
    // The remote side really went over HTTP: the server logged the signed requests.
    expect(server.stdout()).toMatch(/POST \/api\/v1\/refund 200 /);
    expect(server.stdout()).toMatch(/GET \/api\/v1\/order\/\S+\/status 200 /);
  }, 180_000);

  it('ran every step of the scenario on both sides, and nothing else', () => {
    expect([...local.results.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect([...remote.results.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))('%s', (step) => {
    const l = local.results.get(step)!;
    const r = remote.results.get(step)!;
    const want = EXPECTED[step]!;
    const [lOut, lErr] = [mask(l.stdout, local.names), mask(l.stderr, local.names)];
    const [rOut, rErr] = [mask(r.stdout, remote.names), mask(r.stderr, remote.names)];
    // Local mode does what the step expects...
    expect({ code: l.code, stderr: lErr }).toMatchObject({ code: want.code });
    if (want.out) expect(lOut).toMatch(want.out);
    else expect(lOut).toBe('');
    if (want.err) expect(lErr).toMatch(want.err);
    else expect(lErr).toBe('');
    // ...and remote mode does exactly the same; but for the summary's "today" of a run across
    // midnight UTC, which each side read at its own moment (a full run at 23:58 UTC failed so): the pattern then.
    if (crossedMidnight && step.startsWith('summary')) {
      expect({ code: r.code, stderr: rErr }).toEqual({ code: l.code, stderr: lErr });
      if (want.out) expect(rOut).toMatch(want.out);
      return;
    }
    expect({ code: r.code, stdout: rOut, stderr: rErr }).toEqual({ code: l.code, stdout: lOut, stderr: lErr });
  });

  // Decisions §10: a secret is never printed, logged or put in an error message. The remote side
  // is a whole session of every operation, in success and refusal, plain and --json.
  it('never shows the merchant secret: not in any output of the remote session, nor in the server logs', () => {
    const secret = remote.m.secret;
    const texts: [string, string][] = [...remote.results].flatMap(([step, r]): [string, string][] => [[`${step}: stdout`, r.stdout], [`${step}: stderr`, r.stderr]]);
    texts.push(['server access log', server.stdout()], ['server stderr', server.stderr()]);
    expect(server.stdout()).toMatch(/POST \/api\/v1\/withdraw\/confirm 409 /); // refusals are logged too
    for (const [label, text] of texts) {
      expect(text.includes(secret), label).toBe(false);
      // Nor any 12 characters of it.
      for (let i = 0; i + 12 <= secret.length; i++) expect(text.includes(secret.slice(i, i + 12)), `${label} (part)`).toBe(false);
    }
  });

  it('leaves both ledgers in the same state', async () => {
    const [l, r] = await Promise.all([endState(local), endState(remote)]);
    expect(r).toBe(l);
    expect(l).toContain('"status": "REFUNDED"');
  });
});
