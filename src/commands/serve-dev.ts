import { randomBytes } from 'node:crypto';
import { shellQuote } from './shell-quote.js';
import { basename, dirname, join } from 'node:path';
import type { ChainEntry, RegistryConfig, TokenEntry } from '../chains/registry.js';
import { ANVIL_ENV, DEV_CHAIN_ID } from '../chains/sandbox/anvil.js';
import type { DevChain } from '../chains/sandbox/dev-chain.js';
import type { Context } from '../context.js';
import { AppError } from '../core/errors.js';
import { sign } from '../signing/index.js';
import type { LocalPaymentService } from '../store/local-service.js';
import { readLedgerRegistry } from '../store/registry-entries.js';
import { createRpcClient, hexQuantity } from '../chains/watch/rpc.js';

/** What `serve --dev` set up: told to the developer once the server listens, undone when it stops. */
export interface DevMode {
  /** watched: serve's watcher will see the development chain (not under --no-watch). */
  announce(url: string, watched: boolean): void;
  close(): Promise<void>;
}

export const DEV_MERCHANT_NAME = 'Development merchant (public anvil test wallet)';

/** anvil's state file beside the ledger: ledger.db -> ledger.db.anvil-state.json. */
export function anvilStatePath(ledgerPath: string): string | undefined {
  if (ledgerPath === ':memory:') return undefined;
  return join(dirname(ledgerPath), `${basename(ledgerPath)}.anvil-state.json`);
}

interface DevChainState {
  rpcUrl: string;
  token: string;
  statePath?: string;
}

/**
 * `serve --dev`: everything a developer needs to try the service on this machine, in one place.
 * On an empty ledger it creates the development merchant on the public anvil test mnemonic (so
 * anyone can tell it is a public test wallet; the words are never printed, decisions §10). It
 * starts a local anvil with a test USDT and records both in the ledger's own registry, so the
 * watcher serve starts next pays orders from it and every command on this ledger (dev pay,
 * chains, withdraw apply) knows it. Where anvil cannot run it says so and serves without a chain.
 * serve calls this once its port is bound, so a failed start creates nothing.
 */
export async function startDev(ctx: Context, service: LocalPaymentService, err: (s: string) => void): Promise<DevMode> {
  let merchant: { mchId: string; secret: string } | undefined;
  if (service.countMerchants() === 0) {
    const { walletFromMnemonic } = await import('../chains/derive.js');
    const { ANVIL_TEST_MNEMONIC } = await import('../chains/sandbox/dev-chain.js');
    const { evmXpub, tronXpub } = walletFromMnemonic(ANVIL_TEST_MNEMONIC);
    const r = await service.addMerchant({ name: DEV_MERCHANT_NAME, evmXpub, tronXpub });
    merchant = { mchId: r.merchant.mchId, secret: r.secret };
  }
  // On a ledger that had merchants: the development merchant (the public test wallet's), named in
  // the hint when there are others, or the hint failed with "--mch-id is required" (a new-user trial).
  let devMchId: string | undefined;
  if (!merchant && service.countMerchants() > 1) {
    const { onPublicTestWallet } = await import('../store/payments.js');
    devMchId = (await service.listMerchants()).find((m) => onPublicTestWallet(service.ledger.db, m.mchId, 'EVM'))?.mchId;
  }
  const hintMchId = merchant ? undefined : (devMchId ?? (await soleMchId(service)));

  const previous = previousDevChain(readLedgerRegistry(service.ledger.db));
  const statePath = anvilStatePath(service.ledger.path);
  let chain: DevChain | undefined;
  let chainState: DevChainState | undefined;
  let unavailable: string | undefined;
  try {
    const { startDevChain } = await import('../chains/sandbox/dev-chain.js');
    chain = await startDevChain({
      statePath,
      preferredPort: previous?.chain.rpcUrl ? Number(new URL(previous.chain.rpcUrl).port) || undefined : undefined,
      known: previous?.token ? { token: previous.token.address, startBlock: previous.chain.startBlock ?? 0 } : undefined,
    });
    await service.recordRegistryEntries(chain.entries);
    chainState = { rpcUrl: chain.rpcUrl, token: chain.token, statePath };
  } catch (e) {
    if (chain) await chain.stop();
    chain = undefined;
    unavailable = e instanceof AppError ? e.message : `anvil failed: ${(e as Error).message}`;
    // A chain recorded by an earlier run is no longer served: keep it (its orders and payments
    // refer to it) but without an RPC address, so nothing polls a node that is not there.
    if (previous?.chain.rpcUrl) {
      const { rpcUrl: _gone, ...rest } = previous.chain;
      await service.recordRegistryEntries({ chains: [rest], tokens: previous.token ? [previous.token] : [] });
    }
  }

  // Loaded now: announce writes its lines at once, and a warning printed later would land out of order.
  const yellow = ctx.color ? (await import('chalk')).default.yellow : (s: string) => s;
  return {
    announce(url, watched) {
      const db = shellQuote(service.ledger.path);
      const cli = shellQuote(ctx.command());
      err('');
      err('Development sandbox: test money only, never real funds.');
      if (merchant) {
        err('The ledger was empty, so a development merchant was created:');
        err(`  mchId   ${merchant.mchId}`);
        err(`  secret  ${merchant.secret}`);
        err('  wallet  the public anvil test mnemonic: PUBLIC AND UNSAFE, anyone can take what its addresses receive');
        err(yellow('          Never send real funds to its addresses.'));
      } else {
        err('development mode: the ledger already has a merchant, so none was created');
      }
      if (chainState) {
        err(`  chain   ${DEV_CHAIN_ID} (development, anvil) at ${chainState.rpcUrl}`);
        err(`  token   test USDT ${chainState.token} (6 decimals; anyone can mint it)`);
        if (chainState.statePath) err(`  state   ${chainState.statePath} (the chain survives restarts)`);
      } else {
        err(yellow(`  chain   none: ${unavailable}`));
        err(`          serving without a development chain (${ANVIL_ENV} names another anvil binary); orders can still be paid by hand with order mark-paid`);
      }
      err('');
      if (merchant) {
        err('Create an order (signed now, valid for 5 minutes):');
        err(`  curl -s -X POST ${url}/api/v1/order -H 'Content-Type: application/json' -d '${signedOrderBody(ctx, merchant)}'`);
      } else {
        err('Create an order:');
        // An oid of its own (A-1 may be taken by now); printed again, the same command is an idempotent retry.
        err(`  ${cli} --db ${db}${devMchId ? ` --mch-id ${devMchId}` : ''} order create --oid demo-${ctx.now()} --uid user-1 --amount 12.5`);
      }
      if (chainState) {
        // Not "on its own" under --no-watch (a new-user trial read both lines, one after the other).
        err(watched
          ? 'Then pay it with test USDT from a funded account; the order turns PAID on its own:'
          : `Then pay it with test USDT from a funded account; this serve does not watch the chain (--no-watch), so the order turns PAID once ${cli} --db ${db} watch runs beside it (or by order mark-paid):`);
        err(`  ${cli} --db ${db} dev pay <order id> [--amount A]`);
      }
      err('');
      if (merchant) {
        err('Sign your own bodies:');
        // The secret at a hidden prompt: typed after CRYPTOPAY_SECRET= it would land in the shell's history (an outside review).
        err(`  read -rs CRYPTOPAY_SECRET && export CRYPTOPAY_SECRET && ${cli} sign --fill --mch-id ${merchant.mchId} oid=A-1 uid=u1 amount=10 --json`);
        err('');
      } else {
        err(signHint(cli, hintMchId));
      }
    },
    async close() {
      await chain?.stop();
    },
  };
}

/**
 * serve's line on how to sign requests, on a ledger whose merchants it did not just create: the
 * merchant named when there is one to name, and what to do about a secret that was printed once,
 * when the merchant was added, and is lost.
 */
export function signHint(cli: string, mchId: string | undefined): string {
  const m = mchId ?? 'M...';
  return `sign requests with a merchant's secret: ${cli} sign --fill --mch-id ${m} key=value ... (the secret was printed once, when the merchant was added; if it is lost, ${cli} merchant rotate-secret ${m} makes a new one and the old one stops working)`;
}

/** The ledger's merchant when it has exactly one (named in the signing hint instead of M...: a new-user trial). */
export async function soleMchId(service: LocalPaymentService): Promise<string | undefined> {
  return service.countMerchants() === 1 ? (await service.listMerchants())[0]?.mchId : undefined;
}

/**
 * Refuses `serve --dev` where another one already runs on this ledger: the ledger's development
 * chain answers at its recorded address as the chain it is (chain id 31337, the test USDT's code
 * at its address). Asked before serve binds its port or writes anything. A second --dev used to
 * start an anvil of its own on the same state file and record its address as the chain's: when
 * it ended, dev pay and the first serve's watcher found nothing there (a new-user trial). A plain
 * `serve` beside the first is still the way to run two: it uses the chain the first runs.
 */
export async function refuseSecondDev(service: LocalPaymentService, command: string): Promise<void> {
  const previous = previousDevChain(readLedgerRegistry(service.ledger.db));
  const rpcUrl = previous?.chain.rpcUrl;
  if (!rpcUrl || !previous.token) return;
  const rpc = createRpcClient({ url: rpcUrl, timeoutMs: 2_000 });
  let running: boolean;
  try {
    running = (await rpc.call('eth_chainId', [])) === hexQuantity(DEV_CHAIN_ID) && (await rpc.call('eth_getCode', [previous.token.address, 'latest'])) !== '0x';
  } catch {
    // Nothing answers there (or not as a node): no other serve --dev holds the chain.
    running = false;
  }
  if (!running) return;
  throw new AppError(
    'conflict',
    `serve --dev already runs on this ledger: its development chain answers at ${rpcUrl}. Stop that serve first, or start this one without --dev (${command} serve --port PORT serves the same ledger beside it and watches the same chain). Nothing was changed.`,
  );
}

function previousDevChain(layer: RegistryConfig | undefined): { chain: ChainEntry; token?: TokenEntry } | undefined {
  const chain = layer?.chains?.find((c) => String(c.chainId) === String(DEV_CHAIN_ID));
  if (!chain) return undefined;
  const token = layer?.tokens?.find((t) => String(t.chainId) === String(DEV_CHAIN_ID));
  return token ? { chain, token } : { chain };
}

function signedOrderBody(ctx: Context, m: { mchId: string; secret: string }): string {
  const body = {
    mchId: m.mchId,
    oid: `demo-${ctx.now()}`,
    uid: 'user-1',
    amount: '12.50',
    timestamp: ctx.now(),
    nonce: randomBytes(12).toString('hex'),
  };
  return JSON.stringify({ ...body, sign: sign(body, m.secret) });
}

