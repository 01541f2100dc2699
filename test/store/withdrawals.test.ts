import { describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../src/chains/address.js';
import { deriveAddress } from '../../src/chains/derive.js';
import { devChainEntry, devTokenEntry } from '../../src/chains/sandbox/dev-chain.js';
import type { WithdrawApplyRequest } from '../../src/core/schemas.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import {
  MINUTE, SHOP_WALLET, T0, TEST_WALLET, TRON_CHAIN, USDT, accountRows, addOtherMerchant, addShopMerchant, addTestMerchant, counts, evmTx, order, refused, tronTx, useHarness,
} from '../helpers/service.js';

const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** The same address with one letter's case flipped: its EIP-55 checksum fails. */
const TO_BAD_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';
const TO_TRON = tronAddressFromEvm(TO);
const DEV_TOKEN = '0xb5E33423B80B5004edB41278BC8639513C70316c';

const evmApply = (fields: Partial<WithdrawApplyRequest> = {}): WithdrawApplyRequest => ({
  uid: 'alice', amount: '4', to: TO, chainId: 1, chainType: 'EVM', token: USDT.ETH, ...fields,
});
const tronApply = (fields: Partial<WithdrawApplyRequest> = {}): WithdrawApplyRequest => ({
  uid: 'alice', amount: '4', to: TO_TRON, chainId: TRON_CHAIN, chainType: 'TRON', token: USDT.TRON, ...fields,
});

async function fund(service: LocalPaymentService, uid = 'alice', amount = '10', mchId?: string) {
  await service.adjustBalance({ uid, amount, reason: 'test funds', ...(mchId ? { mchId } : {}) });
}

const state = (service: LocalPaymentService) => ({ counts: counts(service.ledger), accounts: accountRows(service.ledger) });

describe('withdrawal apply', () => {
  const h = useHarness();

  it('answers exactly the withdrawal record and moves the amount from available to held', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    await fund(service);
    clock.now = T0 + MINUTE;
    const w = await service.applyWithdrawal(evmApply({ amount: '004.500' }));
    expect(w).toStrictEqual({
      id: expect.stringMatching(/^wd_[A-Za-z0-9_-]{16,}$/), uid: 'alice', amount: '4.5', to: TO, chainId: '1', chainType: 'EVM',
      token: USDT.ETH, status: 'PENDING', txHash: null, blockNumber: null, remark: null, createdAt: T0 + MINUTE, updatedAt: T0 + MINUTE,
    });
    expect(await service.balance('alice')).toMatchObject({ available: '5.5', held: '4.5' });
  });

  it.each([
    ['a lower-case EVM address, stored checksummed', evmApply({ to: TO.toLowerCase() }), { to: TO, chainId: '1' }],
    ['chainId as a string and a lower-case token', evmApply({ chainId: '56', token: USDT.BSC.toLowerCase() }), { chainId: '56', token: USDT.BSC }],
    ['6 decimals on an 18-decimal token', evmApply({ chainId: 56, token: USDT.BSC, amount: '0.000001' }), { amount: '0.000001' }],
    ['TRON USDT on chain 728126428', tronApply(), { to: TO_TRON, chainId: TRON_CHAIN, chainType: 'TRON', token: USDT.TRON }],
  ])('accepts %s', async (_, input, expected) => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    expect(await service.applyWithdrawal(input)).toMatchObject({ status: 'PENDING', ...expected });
  });

  it.each([
    ['amount with a sign', evmApply({ amount: '-1' }), 'invalid', 'amount must be a plain decimal'],
    ['amount with an exponent', evmApply({ amount: '1e3' }), 'invalid', 'amount must be a plain decimal'],
    ['amount with a separator', evmApply({ amount: '1,000' }), 'invalid', 'amount must be a plain decimal'],
    ['amount with spaces', evmApply({ amount: ' 1' }), 'invalid', 'amount must be a plain decimal'],
    ['amount as a number', evmApply({ amount: 1 as never }), 'invalid', 'amount must be a decimal string'],
    ['amount zero', evmApply({ amount: '0' }), 'invalid', 'amount must be positive'],
    ['amount with 7 decimals', evmApply({ amount: '1.0000001' }), 'invalid', 'amount has more than 6 decimal places'],
    ['amount with 7 decimals on an 18-decimal token', evmApply({ chainId: 56, token: USDT.BSC, amount: '0.0000001' }), 'invalid', 'more than 6 decimal places'],
    ['an unknown chainId', evmApply({ chainId: 999 }), 'invalid', 'chainId 999 is not a chain this service knows'],
    ['a chainId with a leading zero', evmApply({ chainId: '01' }), 'invalid', 'chainId must be a positive decimal integer'],
    ['an unknown chainType', evmApply({ chainType: 'SOL' as never }), 'invalid', 'chainType must be EVM or TRON'],
    ['a chainType that does not match the chain', evmApply({ chainType: 'TRON' }), 'invalid', 'chainType TRON does not match chain 1 (Ethereum is EVM)'],
    ['an unknown token', evmApply({ token: '0x0000000000000000000000000000000000000001' }), 'invalid', 'is not a token this service knows on chain 1'],
    ['another chain’s token', evmApply({ token: USDT.BSC }), 'invalid', 'is not a token this service knows on chain 1'],
    ['a bad EVM checksum', evmApply({ to: TO_BAD_CHECKSUM }), 'invalid', 'to is not a valid EVM address: mixed-case checksum (EIP-55) does not match'],
    ['a TRON address on an EVM chain', evmApply({ to: TO_TRON }), 'invalid', 'to is not a valid EVM address'],
    ['an EVM address on TRON', tronApply({ to: TO }), 'invalid', 'to is not a valid TRON address'],
    ['a mistyped TRON address', tronApply({ to: TO_TRON.slice(0, -1) + (TO_TRON.endsWith('a') ? 'b' : 'a') }), 'invalid', 'to is not a valid TRON address'],
    ['a missing uid', evmApply({ uid: undefined }), 'invalid', 'uid is required'],
    ['an unknown field', { ...evmApply(), address: TO } as never, 'invalid', 'unknown field: address'],
    ['more than the available balance', evmApply({ amount: '10.000001' }), 'conflict', 'insufficient balance: user alice has 10 USDT available, 10.000001 needed'],
    ['a user with no balance', evmApply({ uid: 'nobody' }), 'conflict', 'insufficient balance: user nobody has 0 USDT available'],
  ] as const)('refuses %s and changes nothing', async (_, input, kind, msg) => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const before = state(service);
    await refused(service.applyWithdrawal(input), kind, msg);
    expect(state(service)).toEqual(before);
    expect(await service.balance('alice')).toMatchObject({ available: '10', held: '0' });
  });

  // Found by an outside review: a payout to an address the ledger gave out for an order is
  // counted by the chain watcher as a payment to that order, its transaction taken as a
  // payment's, so the withdrawal could never be confirmed and rejecting it credited the user
  // twice (once by the payment, once by the released hold).
  it("refuses a payout to a payment address this service gave out, any merchant's, in any spelling", async () => {
    const { service } = h();
    const me = await addShopMerchant(service);
    const other = await addOtherMerchant(service);
    await fund(service, 'alice', '10', me.mchId);
    const mine = await order(service, { mchId: me.mchId });
    const theirs = await order(service, { mchId: other.mchId });
    const before = state(service);
    const msg = 'to is a payment address this service gave out for an order: a transfer there is counted as a payment into the ledger, not as a payout';
    for (const to of [mine.addresses.EVM!, mine.addresses.EVM!.toLowerCase(), theirs.addresses.EVM!]) {
      await refused(service.applyWithdrawal(evmApply({ to, mchId: me.mchId })), 'invalid', msg);
    }
    for (const to of [mine.addresses.TRON!, theirs.addresses.TRON!]) {
      await refused(service.applyWithdrawal(tronApply({ to, mchId: me.mchId })), 'invalid', msg);
    }
    expect(state(service)).toEqual(before);
    expect(await service.balance('alice', { mchId: me.mchId })).toMatchObject({ available: '10', held: '0' });
  });

  // Found by an outside review: the refusal above knows only addresses already given out. A
  // withdrawal to the address the merchant's xpub gives out next (predictable: the xpub is the
  // merchant's, or public for the development wallet) was accepted; the next order then got
  // that address, the payout was counted as its payment, and rejecting the withdrawal credited
  // the user twice. An order never gets an address a withdrawal pays to, any merchant's.
  it("an order is never given an address a withdrawal pays to (any status, any merchant's, any spelling): the next one is taken", async () => {
    const { service } = h();
    const me = await addShopMerchant(service);
    const other = await addOtherMerchant(service);
    await fund(service, 'alice', '30', other.mchId);
    const evmAt = (i: number) => deriveAddress('EVM', SHOP_WALLET.evmXpub, i);
    const tronAt = (i: number) => deriveAddress('TRON', SHOP_WALLET.tronXpub, i);
    // The next two EVM addresses of `me` and its next TRON one, as another merchant's payouts.
    await service.applyWithdrawal(evmApply({ to: evmAt(0), mchId: other.mchId }));
    const rejected = await service.applyWithdrawal(evmApply({ to: evmAt(1).toLowerCase(), mchId: other.mchId }));
    await service.rejectWithdrawal({ id: rejected.id, mchId: other.mchId });
    await service.applyWithdrawal(tronApply({ to: tronAt(0), mchId: other.mchId }));
    const first = await order(service, { mchId: me.mchId });
    expect(first.addresses).toEqual({ EVM: evmAt(2), TRON: tronAt(1) });
    const second = await order(service, { mchId: me.mchId });
    expect(second.addresses).toEqual({ EVM: evmAt(3), TRON: tronAt(2) });
    // And a withdrawal to them now is refused, as for any address given out.
    await refused(service.applyWithdrawal(evmApply({ to: second.addresses.EVM!, mchId: other.mchId })), 'invalid', 'to is a payment address this service gave out');
  });

  // Found by an outside review: a real merchant's user was paid out on serve --dev's chain, whose
  // token anyone mints, "verified" on chain by a transfer from a stranger, and debited for real.
  it("a development chain pays out only for the public test wallet's merchant: a real merchant's apply and confirm there are refused and change nothing", async () => {
    const { service, ledger } = h();
    const sandbox = await addTestMerchant(service);
    const real = await addOtherMerchant(service);
    await service.recordRegistryEntries({ chains: [devChainEntry('http://127.0.0.1:1', 0)], tokens: [devTokenEntry(DEV_TOKEN)] });
    await fund(service, 'alice', '10', real.mchId);
    await fund(service, 'alice', '10', sandbox.mchId);
    const onDev = { to: TO, chainId: 31337, chainType: 'EVM' as const, token: DEV_TOKEN };
    const before = state(service);
    await refused(
      service.applyWithdrawal(evmApply({ ...onDev, mchId: real.mchId })),
      'conflict',
      `chain 31337 is a development chain, whose test token anyone can mint: only the public test wallet's merchant (serve --dev) pays out there, not merchant ${real.mchId}`,
    );
    expect(state(service)).toEqual(before);
    // The development merchant's users hold test money: they may withdraw it there.
    const test = await service.applyWithdrawal(evmApply({ ...onDev, mchId: sandbox.mchId }));
    expect(test).toMatchObject({ status: 'PENDING', chainId: '31337' });
    // Its reject asks the development chain whether it was paid out: not running, it says where it runs.
    await refused(service.rejectWithdrawal({ id: test.id, mchId: sandbox.mchId }), 'unavailable',
      `chain 31337 (Development (anvil)) cannot be read to see whether withdrawal ${test.id} was paid out (it runs while cryptopay serve --dev runs on this ledger)`);

    // A real merchant's withdrawal on that chain from before (made here on chain 1, then moved).
    const old = await service.applyWithdrawal(evmApply({ mchId: real.mchId }));
    ledger.sqlite.prepare('update withdrawals set chain_id = ?, token = ? where id = ?').run('31337', DEV_TOKEN, old.id);
    const pending = state(service);
    const confirm = { logId: old.id, txHash: evmTx(77), blockNumber: 5, mchId: real.mchId };
    for (const attempt of [() => service.confirmWithdrawal(confirm), () => service.confirmWithdrawalUnverified(confirm, 'sent by hand')]) {
      await refused(
        attempt(),
        'conflict',
        `only the public test wallet's merchant (serve --dev) pays out there, not merchant ${real.mchId} (reject it: nothing was paid out)`,
      );
    }
    expect(state(service)).toEqual(pending);
    // A real merchant's: test money paid out nothing of it, so the chain is not asked.
    await expect(service.rejectWithdrawal({ id: old.id, mchId: real.mchId })).resolves.toMatchObject({ status: 'REJECTED' });
    expect(await service.balance('alice', { mchId: real.mchId })).toMatchObject({ available: '10', held: '0' });
  });

  // Found by an outside review (session 20): the development merchant's user, credited with test
  // USDT anyone mints on serve --dev's chain, was paid out real USDT on Ethereum: its balance is
  // one "USDT" asset, whichever chain credited it.
  it("the public test wallet's merchant pays out on development chains only: its apply and confirm on a real chain are refused and change nothing", async () => {
    const { service, ledger } = h();
    const sandbox = await addOtherMerchant(service, 'Sandbox');
    const real = await addOtherMerchant(service);
    // The sandbox merchant has the public test wallet on one chain type: its balances may hold test money.
    ledger.sqlite.prepare('update merchants set evm_xpub = ? where id = ?').run(TEST_WALLET.evmXpub, sandbox.mchId);
    await service.recordRegistryEntries({ chains: [devChainEntry('http://127.0.0.1:1', 0)], tokens: [devTokenEntry(DEV_TOKEN)] });
    await fund(service, 'alice', '10', sandbox.mchId);
    await fund(service, 'alice', '10', real.mchId);
    const before = state(service);
    for (const input of [evmApply({ mchId: sandbox.mchId }), tronApply({ mchId: sandbox.mchId })]) {
      await refused(
        service.applyWithdrawal(input),
        'conflict',
        `merchant ${sandbox.mchId} has the public test wallet (serve --dev): its users' balances are test money, paid out on development chains only, not on chain ${input.chainId}`,
      );
    }
    expect(state(service)).toEqual(before);
    // The public TRON xpub alone is enough too: a balance does not say which chain type filled it.
    const tronSandbox = await addOtherMerchant(service, 'TRON sandbox');
    ledger.sqlite.prepare('update merchants set tron_xpub = ? where id = ?').run(TEST_WALLET.tronXpub, tronSandbox.mchId);
    await fund(service, 'alice', '10', tronSandbox.mchId);
    const funded = state(service);
    await refused(service.applyWithdrawal(evmApply({ mchId: tronSandbox.mchId })), 'conflict', `merchant ${tronSandbox.mchId} has the public test wallet (serve --dev)`);
    expect(state(service)).toEqual(funded);
    await expect(service.applyWithdrawal(evmApply({ to: TO, chainId: 31337, token: DEV_TOKEN, mchId: sandbox.mchId }))).resolves.toMatchObject({ status: 'PENDING' });
    await expect(service.applyWithdrawal(evmApply({ mchId: real.mchId }))).resolves.toMatchObject({ status: 'PENDING', chainId: '1' });

    // One applied on the development chain before, moved to chain 1: confirm is refused, reject releases it.
    const old = await service.applyWithdrawal(evmApply({ to: TO, chainId: 31337, token: DEV_TOKEN, amount: '1', mchId: sandbox.mchId }));
    ledger.sqlite.prepare('update withdrawals set chain_id = ?, token = ? where id = ?').run('1', USDT.ETH, old.id);
    const pending = state(service);
    const confirm = { logId: old.id, txHash: evmTx(78), blockNumber: 5, mchId: sandbox.mchId };
    for (const attempt of [() => service.confirmWithdrawal(confirm), () => service.confirmWithdrawalUnverified(confirm, 'sent by hand')]) {
      await refused(attempt(), 'conflict', 'paid out on development chains only, not on chain 1 (reject it: nothing was paid out)');
    }
    expect(state(service)).toEqual(pending);
    await expect(service.rejectWithdrawal({ id: old.id, mchId: sandbox.mchId })).resolves.toMatchObject({ status: 'REJECTED' });
  });

  it('refuses the zero address, where a token is burnt or the transfer fails', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const before = state(service);
    const zero = '0x0000000000000000000000000000000000000000';
    await refused(service.applyWithdrawal(evmApply({ to: zero })), 'invalid', 'to is the zero address: nobody can spend what is sent there');
    await refused(service.applyWithdrawal(tronApply({ to: tronAddressFromEvm(zero) })), 'invalid', 'to is the zero address: nobody can spend what is sent there');
    expect(state(service)).toEqual(before);
  });

  // Found by an outside review: USDT sent to the USDT contract itself is as lost as at the zero
  // address, and was accepted.
  it('refuses the token\'s own contract as the payout address, in any case', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const before = state(service);
    for (const to of [USDT.ETH, USDT.ETH.toLowerCase()]) {
      await refused(service.applyWithdrawal(evmApply({ to })), 'invalid', `to is the contract of the token ${USDT.ETH} itself: what is sent there is lost`);
    }
    await refused(service.applyWithdrawal(tronApply({ to: USDT.TRON })), 'invalid', `to is the contract of the token ${USDT.TRON} itself: what is sent there is lost`);
    expect(state(service)).toEqual(before);
  });

  // Found by a code review: only the withdrawn token's own contract was refused; another token
  // of the same chain this service knows is as much a sink.
  it('refuses the contract of another token of the chain as the payout address', async () => {
    const { service: plain, ledger } = h();
    const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
    const service = new LocalPaymentService(ledger, { now: () => T0, caller: { actor: 'tester' }, registryConfig: { tokens: [{ chainId: 1, address: USDC, symbol: 'USDC', asset: 'USDT', decimals: 6 }] } });
    await addShopMerchant(plain);
    await fund(plain);
    const before = state(service);
    await refused(service.applyWithdrawal(evmApply({ to: USDC.toLowerCase() })), 'invalid', `to is the contract of the token USDC ${USDC} on this chain: what is sent there is lost`);
    expect(state(service)).toEqual(before);
  });

  it('refuses an amount already held by an earlier withdrawal', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    await service.applyWithdrawal(evmApply({ amount: '7' }));
    await refused(service.applyWithdrawal(evmApply({ amount: '4' })), 'conflict', 'insufficient balance: user alice has 3 USDT available (and 7 USDT held by pending withdrawals), 4 needed');
    expect(await service.balance('alice')).toMatchObject({ available: '3', held: '7' });
  });
});

describe('withdrawal confirm and reject', () => {
  const h = useHarness();

  it('confirm settles the hold out of the ledger and answers the record', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    await fund(service);
    const w = await service.applyWithdrawal(evmApply());
    clock.now = T0 + 10 * MINUTE;
    const done = await service.confirmWithdrawal({ logId: w.id, txHash: evmTx(1), blockNumber: '19000000' as never });
    expect(done).toStrictEqual({ ...w, status: 'CONFIRMED', txHash: evmTx(1), blockNumber: 19_000_000, updatedAt: T0 + 10 * MINUTE });
    expect(await service.balance('alice')).toMatchObject({ available: '6', held: '0' });
    expect(await service.getWithdrawal(w.id)).toMatchObject({ status: 'CONFIRMED', txHash: evmTx(1) });
  });

  it('reject returns the hold to available and keeps the remark', async () => {
    const { service, clock } = h();
    await addShopMerchant(service);
    await fund(service);
    const w = await service.applyWithdrawal(evmApply());
    clock.now = T0 + 10 * MINUTE;
    const done = await service.rejectWithdrawal({ id: w.id, remark: 'address on a sanctions list' });
    expect(done).toStrictEqual({ ...w, status: 'REJECTED', remark: 'address on a sanctions list', updatedAt: T0 + 10 * MINUTE });
    expect(await service.balance('alice')).toMatchObject({ available: '10', held: '0' });
  });

  it('confirms a TRON withdrawal with a 64-hex hash and no 0x', async () => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const w = await service.applyWithdrawal(tronApply());
    expect(await service.confirmWithdrawal({ logId: w.id, txHash: tronTx(1), blockNumber: 1 })).toMatchObject({ status: 'CONFIRMED', txHash: tronTx(1) });
  });

  it.each([
    ['CONFIRMED', 'confirm', 'withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be confirmed'],
    ['CONFIRMED', 'reject', 'withdrawal is CONFIRMED, not PENDING: only a pending withdrawal can be rejected'],
    ['REJECTED', 'confirm', 'withdrawal is REJECTED, not PENDING: only a pending withdrawal can be confirmed'],
    ['REJECTED', 'reject', 'withdrawal is REJECTED, not PENDING: only a pending withdrawal can be rejected'],
  ] as const)('refuses a %s withdrawal to %s and changes nothing', async (from, action, msg) => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const w = await service.applyWithdrawal(evmApply());
    if (from === 'CONFIRMED') await service.confirmWithdrawal({ logId: w.id, txHash: evmTx(1), blockNumber: 5 });
    else await service.rejectWithdrawal({ id: w.id });
    const record = await service.getWithdrawal(w.id);
    const before = state(service);
    const op = action === 'confirm'
      ? service.confirmWithdrawal({ logId: w.id, txHash: evmTx(2), blockNumber: 6 })
      : service.rejectWithdrawal({ id: w.id, remark: 'again' });
    await refused(op, 'conflict', msg);
    expect(state(service)).toEqual(before);
    expect(await service.getWithdrawal(w.id)).toEqual(record);
  });

  it.each([evmTx(1), `0x${evmTx(1).slice(2).toUpperCase()}`])('a transaction hash confirms at most one withdrawal (%s again)', async (again) => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const a = await service.applyWithdrawal(evmApply());
    const b = await service.applyWithdrawal(evmApply());
    await service.confirmWithdrawal({ logId: a.id, txHash: evmTx(1), blockNumber: 5 });
    const before = state(service);
    await refused(service.confirmWithdrawal({ logId: b.id, txHash: again, blockNumber: 5 }), 'conflict', `transaction ${evmTx(1)} is already recorded in this ledger`);
    expect(state(service)).toEqual(before);
    expect((await service.getWithdrawal(b.id)).status).toBe('PENDING');
  });

  it.each([
    ['a TRON hash for an EVM withdrawal', 'EVM', { txHash: tronTx(1) }, 'txHash must be a transaction hash: 0x and 64 hex digits'],
    ['a TRON hash with 0x twice (one 0x is accepted, decisions §6)', 'TRON', { txHash: `0x${evmTx(1)}` }, 'txHash must be a transaction hash: 64 hex digits'],
    ['a short hash', 'EVM', { txHash: '0xabc' }, 'txHash must be a transaction hash'],
    ['a hash of 65 hex digits', 'TRON', { txHash: `${tronTx(1)}a` }, 'txHash must be a transaction hash'],
    ['no hash', 'EVM', { txHash: undefined }, 'txHash is required'],
    ['block number 0', 'EVM', { blockNumber: 0 }, 'blockNumber must be a positive integer'],
    ['a negative block number', 'EVM', { blockNumber: -3 }, 'blockNumber must be a positive integer'],
    ['a fractional block number', 'EVM', { blockNumber: 1.5 }, 'blockNumber must be a positive integer'],
    ['a block number with a leading zero', 'EVM', { blockNumber: '012' }, 'blockNumber must be a positive integer'],
    ['a block number in words', 'EVM', { blockNumber: 'twelve' }, 'blockNumber must be a positive integer'],
    // Digit strings past 2^53 - 1 would be stored as another number (an outside review confirmed
    // "9007199254740993" and read back 9007199254740992).
    ['a block number string of 2^53 + 1', 'EVM', { blockNumber: '9007199254740993' }, 'blockNumber must be a positive integer'],
    ['a block number string of 2^53', 'EVM', { blockNumber: '9007199254740992' }, 'blockNumber must be a positive integer'],
    ['a block number string of sixteen nines', 'EVM', { blockNumber: '9999999999999999' }, 'blockNumber must be a positive integer'],
    ['no block number', 'EVM', { blockNumber: undefined }, 'blockNumber is required'],
    ['no logId', 'EVM', { logId: undefined }, 'logId is required'],
  ] as const)('refuses to confirm with %s and changes nothing', async (_, chain, change, msg) => {
    const { service } = h();
    await addShopMerchant(service);
    await fund(service);
    const w = await service.applyWithdrawal(chain === 'EVM' ? evmApply() : tronApply());
    const before = state(service);
    const hash = chain === 'EVM' ? evmTx(1) : tronTx(1);
    await refused(service.confirmWithdrawal({ logId: w.id, txHash: hash, blockNumber: 7, ...change } as never), 'invalid', msg);
    expect(state(service)).toEqual(before);
    expect(await service.getWithdrawal(w.id)).toEqual({ ...w, asset: 'USDT', mchId: expect.any(String), verification: null, verificationNote: null });
  });

  it('answers another merchant’s withdrawal exactly like an unknown one', async () => {
    const { service } = h();
    const a = await addShopMerchant(service);
    const b = await addOtherMerchant(service);
    await fund(service, 'alice', '10', b.mchId);
    const theirs = await service.applyWithdrawal(evmApply({ mchId: b.mchId }));
    const before = state(service);
    for (const op of [
      () => service.confirmWithdrawal({ mchId: a.mchId, logId: theirs.id, txHash: evmTx(1), blockNumber: 1 }),
      () => service.rejectWithdrawal({ mchId: a.mchId, id: theirs.id }),
      () => service.rejectWithdrawal({ mchId: a.mchId, id: 'wd_unknown' }),
      () => service.getWithdrawal(theirs.id, a.mchId),
    ]) {
      const e = await refused(op, 'not_found', 'withdrawal not found');
      expect(e.message).toBe('withdrawal not found');
    }
    expect(state(service)).toEqual(before);
    expect((await service.getWithdrawal(theirs.id, b.mchId)).status).toBe('PENDING');
  });

  it('keeps each merchant’s balances apart', async () => {
    const { service } = h();
    const a = await addShopMerchant(service);
    const b = await addOtherMerchant(service);
    await fund(service, 'alice', '10', b.mchId);
    await refused(service.applyWithdrawal(evmApply({ mchId: a.mchId })), 'conflict', 'insufficient balance');
    expect(await service.balance('alice', { mchId: a.mchId })).toMatchObject({ available: '0' });
  });
});
