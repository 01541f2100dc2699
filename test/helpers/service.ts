import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { walletFromMnemonic } from '../../src/chains/derive.js';
import { AppError, type ErrorKind } from '../../src/core/errors.js';
import type { CreateOrderRequest } from '../../src/core/schemas.js';
import type { Order } from '../../src/core/types.js';
import { openLedger, type Ledger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';

export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
export const TEST_WALLET = walletFromMnemonic(TEST_MNEMONIC);
/**
 * A shop's own wallet, for tests of a real merchant with known addresses: TEST_WALLET is the
 * public test wallet of serve --dev, whose merchant holds test money and pays out on development
 * chains only (docs/decisions.md).
 */
export const SHOP_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
export const SHOP_WALLET = walletFromMnemonic(SHOP_MNEMONIC);
/** m/44'/60'/0'/0/0 and 0/1 of the test mnemonic: the well-known Hardhat accounts #0 and #1. */
export const TEST_EVM_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
export const TEST_EVM_1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** 2025-01-15 12:00:00 UTC: a fixed start so every test sees the same times. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
export const MINUTE = 60_000;
export const DAY = 86_400_000;

export const USDT = {
  ETH: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  BSC: '0x55d398326f99059fF775485246999027B3197955',
  TRON: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
} as const;
export const TRON_CHAIN = '728126428';

export interface Clock {
  now: number;
}

export interface Harness {
  file: string;
  ledger: Ledger;
  clock: Clock;
  service: LocalPaymentService;
  close(): void;
}

/** A real ledger file in a fresh temporary folder, a movable clock and the service over both. */
export function openHarness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-store-'));
  const file = join(dir, 'ledger.db');
  const ledger = openLedger(file);
  const clock: Clock = { now: T0 };
  const service = new LocalPaymentService(ledger, { now: () => clock.now, caller: { actor: 'tester' } });
  return {
    file, ledger, clock, service,
    close: () => {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers a fresh harness per test and, after each, the ledger invariants: whatever a test did,
 * `check()` must find nothing wrong. Returns a getter for the current test's harness.
 */
export function useHarness(): () => Harness {
  let h: Harness | undefined;
  beforeEach(() => {
    h = openHarness();
  });
  afterEach(async () => {
    try {
      expect(await h!.service.check()).toEqual([]);
    } finally {
      h!.close();
      h = undefined;
    }
  });
  return () => h!;
}

/** Runs an operation that must be refused; checks the kind and a fragment of the message. */
export async function refused(op: Promise<unknown> | (() => unknown), kind: ErrorKind, fragment: string | RegExp): Promise<AppError> {
  let error: unknown;
  try {
    await (typeof op === 'function' ? op() : op);
  } catch (e) {
    error = e;
  }
  expect(error, 'the operation should have been refused').toBeInstanceOf(AppError);
  const e = error as AppError;
  expect({ kind: e.kind, message: e.message }).toEqual({
    kind,
    message: typeof fragment === 'string' ? expect.stringContaining(fragment) : expect.stringMatching(fragment),
  });
  return e;
}

/** The merchant of the test mnemonic (EVM and TRON wallets): the public test wallet, serve --dev's, whose users hold test money (withdrawn on development chains only). */
export async function addTestMerchant(service: LocalPaymentService, name = 'Shop'): Promise<{ mchId: string; secret: string }> {
  const r = await service.addMerchant({ name, evmXpub: TEST_WALLET.evmXpub, tronXpub: TEST_WALLET.tronXpub });
  return { mchId: r.merchant.mchId, secret: r.secret };
}

/** A real merchant (SHOP_WALLET): one that pays its users out on real chains. */
export async function addShopMerchant(service: LocalPaymentService, name = 'Shop'): Promise<{ mchId: string; secret: string }> {
  const r = await service.addMerchant({ name, evmXpub: SHOP_WALLET.evmXpub, tronXpub: SHOP_WALLET.tronXpub });
  return { mchId: r.merchant.mchId, secret: r.secret };
}

/** A second merchant with its own freshly generated wallet. */
export async function addOtherMerchant(service: LocalPaymentService, name = 'Other'): Promise<{ mchId: string; secret: string }> {
  const r = await service.addMerchant({ name, generateWallet: true });
  return { mchId: r.merchant.mchId, secret: r.secret };
}

let oidSeq = 0;
export function order(service: LocalPaymentService, fields: Partial<CreateOrderRequest> = {}): Promise<Order> {
  return service.createOrder({ oid: `oid-${++oidSeq}`, uid: 'u1', amount: '10', ...fields });
}

/** Distinct, well-formed transaction hashes. */
export const evmTx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const tronTx = (n: number) => n.toString(16).padStart(64, 'a');

/** Orders a payment and records it in full by hand: the user is credited `amount`. */
let txSeq = 0x100000;
export async function paidOrder(service: LocalPaymentService, fields: Partial<CreateOrderRequest> = {}, tx = evmTx(++txSeq)) {
  const o = await order(service, fields);
  await service.markPaid({ id: o.id, txHash: tx });
  return o;
}

/** Raw counts, to show that a refused operation changed nothing. */
export function counts(ledger: Ledger): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of ['orders', 'order_addresses', 'payments', 'refunds', 'withdrawals', 'transfers', 'audit_log', 'nonces', 'merchants', 'callbacks']) {
    out[t] = Number((ledger.sqlite.prepare(`select count(*) as n from ${t}`).get() as { n: bigint }).n);
  }
  return out;
}

/** Every account's posted and held amount, to compare before and after a refusal. */
export function accountRows(ledger: Ledger): unknown[] {
  return ledger.sqlite.prepare('select id, kind, uid, posted, pending_debits from accounts order by id').all();
}

/**
 * The UTC day a wall-clock moment falls in. `summary` counts "today" from 00:00 UTC and the week
 * from Monday 00:00 UTC of the real clock: a test that made its figures before midnight and reads
 * them after sees them under yesterday. Such a test asserts the day's figures only when its
 * whole run fell in one day (and so in one week).
 */
export const utcDay = (t: number): number => Math.floor(t / DAY);
