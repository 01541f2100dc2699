/**
 * `serve --dev`: a sandbox to pay in. On an empty ledger it creates the development merchant on
 * the public anvil test mnemonic; it starts a local anvil with a test USDT and records both in
 * the ledger's registry; it prints how to create an order and pay it. Where anvil cannot run it
 * says so and serve starts without a chain. serve.ts calls startSandbox once and stop() when it
 * stops.
 */
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { DEV_CHAIN_ID, ANVIL_ENV } from '../../chains/sandbox/anvil.js';
import type { DevChain } from '../../chains/sandbox/dev-chain.js';
import { createRegistry, type ChainEntry, type RegistryConfig, type TokenEntry } from '../../chains/registry.js';
import { readChainsConfig, operatorName, type Context } from '../../context.js';
import { AppError } from '../../core/errors.js';
import { sign } from '../../signing/index.js';
import type { LocalPaymentService } from '../../store/local-service.js';
import { readLedgerRegistry, replaceChainTokens, saveChainEntry } from '../../store/registry-entries.js';
import { warn } from '../output.js';

export const DEV_MERCHANT_NAME = 'Development merchant (public anvil test wallet)';

export interface Sandbox {
  /** Prints the sandbox, the signed curl and the next commands, once serve listens at `url`. */
  announce(url: string): void;
  stop(): Promise<void>;
}

interface DevChainState {
  rpcUrl: string;
  token: string;
  statePath?: string;
}

/** anvil's state file beside the ledger: ledger.db -> ledger.db.anvil-state.json. */
export function anvilStatePath(ledgerPath: string): string | undefined {
  if (ledgerPath === ':memory:') return undefined;
  return join(dirname(ledgerPath), `${basename(ledgerPath)}.anvil-state.json`);
}

export async function startSandbox(ctx: Context, service: LocalPaymentService): Promise<Sandbox> {
  const err = (s: string) => ctx.io.stderr.write(`${s}\n`);
  let created: { mchId: string; secret: string } | undefined;
  if (service.countMerchants() === 0) {
    const { walletFromMnemonic } = await import('../../chains/derive.js');
    const { ANVIL_TEST_MNEMONIC } = await import('../../chains/sandbox/dev-chain.js');
    const { evmXpub, tronXpub } = walletFromMnemonic(ANVIL_TEST_MNEMONIC);
    const r = await service.addMerchant({ name: DEV_MERCHANT_NAME, evmXpub, tronXpub });
    created = { mchId: r.merchant.mchId, secret: r.secret };
  }

  const previous = previousDevChain(readLedgerRegistry(service.ledger.db));
  const statePath = anvilStatePath(service.ledger.path);
  let chain: DevChain | undefined;
  let chainState: DevChainState | undefined;
  let unavailable: string | undefined;
  try {
    const { startDevChain } = await import('../../chains/sandbox/dev-chain.js');
    chain = await startDevChain({
      statePath,
      preferredPort: previous?.chain.rpcUrl ? Number(new URL(previous.chain.rpcUrl).port) || undefined : undefined,
      known: previous?.token ? { token: previous.token.address, startBlock: previous.chain.startBlock ?? 0 } : undefined,
    });
    record(ctx, service, chain.entries);
    chainState = { rpcUrl: chain.rpcUrl, token: chain.token, statePath };
  } catch (e) {
    if (chain) await chain.stop();
    unavailable = e instanceof AppError ? e.message : `anvil failed: ${(e as Error).message}`;
    // A chain recorded by an earlier run is no longer served: keep it (its orders and payments
    // refer to it) but without an RPC address, so nothing polls a node that is not there.
    if (previous?.chain.rpcUrl) {
      const { rpcUrl: _gone, ...rest } = previous.chain;
      record(ctx, service, { chains: [rest], tokens: previous.token ? [previous.token] : [] });
    }
  }

  return {
    announce(url) {
      const db = shellQuote(service.ledger.path);
      err('');
      err('Development sandbox: test money only, never real funds.');
      if (created) {
        err('The ledger was empty, so a development merchant was created:');
        err(`  mchId   ${created.mchId}`);
        err(`  secret  ${created.secret}`);
      }
      err('  wallet  the public anvil test mnemonic: PUBLIC AND UNSAFE, anyone can take what its addresses receive');
      if (chainState) {
        err(`  chain   ${DEV_CHAIN_ID} (development, anvil) at ${chainState.rpcUrl}`);
        err(`  token   test USDT ${chainState.token} (6 decimals; anyone can mint it)`);
        if (chainState.statePath) err(`  state   ${chainState.statePath} (the chain survives restarts)`);
      } else {
        void warn(ctx, `  chain   none: ${unavailable}`);
        err(`          serving without a development chain (${ANVIL_ENV} names another anvil binary); orders can still be paid by hand with order mark-paid`);
      }
      err('');
      if (created) {
        err('Create an order (signed now, valid for 5 minutes):');
        err(`  curl -s -X POST ${url}/api/v1/order -H 'Content-Type: application/json' -d '${signedOrderBody(ctx, created)}'`);
      } else {
        err('Create an order:');
        err(`  cryptopay --db ${db} order create --oid A-1 --uid user-1 --amount 12.5`);
      }
      if (chainState) {
        err('Then pay it with test USDT from a funded account; the order turns PAID on its own:');
        err(`  cryptopay --db ${db} dev pay <order id> [--amount A]`);
      }
      err('');
    },
    async stop() {
      await chain?.stop();
    },
  };
}

function previousDevChain(layer: RegistryConfig | undefined): { chain: ChainEntry; token?: TokenEntry } | undefined {
  const chain = layer?.chains?.find((c) => String(c.chainId) === String(DEV_CHAIN_ID));
  if (!chain) return undefined;
  const token = layer?.tokens?.find((t) => String(t.chainId) === String(DEV_CHAIN_ID));
  return token ? { chain, token } : { chain };
}

/** Checks the entries as the registry will read them, then stores them in one transaction. */
function record(ctx: Context, service: LocalPaymentService, entries: { chains: ChainEntry[]; tokens: TokenEntry[] }): void {
  createRegistry(readChainsConfig(ctx.env), entries);
  const w = { now: ctx.now(), actor: operatorName(ctx.globals, ctx.env) };
  const q = service.ledger.db;
  service.ledger.sqlite
    .transaction(() => {
      for (const c of entries.chains) saveChainEntry(q, c, w);
      replaceChainTokens(q, String(DEV_CHAIN_ID), entries.tokens, w);
    })
    .immediate();
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

/** A path as one shell word. */
function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
