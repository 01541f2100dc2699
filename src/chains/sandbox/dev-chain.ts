/**
 * The development chain of `serve --dev`: a local anvil with the test USDT deployed, recorded in
 * the ledger's own registry so that every command on that ledger (dev pay, chains, withdraw
 * apply) knows it. Loads ethers: only the sandbox imports it.
 */
import { HDNodeWallet, JsonRpcProvider, Network } from 'ethers';
import type { ChainEntry, RegistryConfig, TokenEntry } from '../registry.js';
import { DEV_CHAIN_ID, startAnvil, type AnvilNode } from './anvil.js';
import { deployTestToken, testTokenArtifact, TEST_USDT } from './test-token.js';

/**
 * The public anvil test mnemonic ("test test ... junk"): everyone knows it, so anything its
 * addresses hold can be taken by anyone. Never printed (decisions §10); named as "the public
 * anvil test mnemonic".
 */
export const ANVIL_TEST_MNEMONIC = ['test', 'test', 'test', 'test', 'test', 'test', 'test', 'test', 'test', 'test', 'test', 'junk'].join(' ');

/**
 * anvil funds the accounts of this path of the test mnemonic. The development merchant receives
 * on m/44'/60'/0'/0/i of the same mnemonic, so the payers live on the other branch (1/i): a
 * payment never comes from an address the ledger handed out to an order, and an order address
 * starts empty, so its token balance is exactly what was paid to it.
 */
export const PAYER_DERIVATION_PATH = "m/44'/60'/0'/1";
export const PAYER_ACCOUNTS = 10;

export const DEV_CHAIN_NAME = 'Development (anvil)';

/**
 * What the dev chain is recorded as. One confirmation: anvil mines a block per transaction and
 * none otherwise, so a deeper requirement would never be met by a lone payment.
 */
export function devChainEntry(rpcUrl: string, startBlock: number): ChainEntry {
  return { chainId: DEV_CHAIN_ID, chainType: 'EVM', name: DEV_CHAIN_NAME, rpcUrl, confirmations: 1, pollInterval: 1_000, startBlock, development: true };
}

export function devTokenEntry(address: string): TokenEntry {
  return { chainId: DEV_CHAIN_ID, address, symbol: TEST_USDT.symbol, asset: 'USDT', decimals: TEST_USDT.decimals };
}

/** The funded account `index` (m/44'/60'/0'/1/index), connected to `provider`. */
export function payerWallet(index: number, provider?: JsonRpcProvider): HDNodeWallet {
  const w = HDNodeWallet.fromPhrase(ANVIL_TEST_MNEMONIC, undefined, `${PAYER_DERIVATION_PATH}/${index}`);
  return provider ? w.connect(provider) : w;
}

export function devProvider(rpcUrl: string, chainId: number = DEV_CHAIN_ID): JsonRpcProvider {
  const network = Network.from(chainId);
  // anvil mines at once: a short polling interval keeps tx.wait() from taking ethers' 4 s. No
  // cache: a nonce read just after our own transaction must see it.
  return new JsonRpcProvider(rpcUrl, network, { staticNetwork: network, pollingInterval: 100, cacheTimeout: -1 });
}

export interface DevChain {
  node: AnvilNode;
  rpcUrl: string;
  chainId: number;
  token: string;
  /** Set when the token was (re)deployed on this start: a new chain, or a state file lost. */
  deployed: boolean;
  /** The chain and token entries to record in the ledger. */
  entries: Required<Pick<RegistryConfig, 'chains' | 'tokens'>>;
  stop(): Promise<void>;
}

export interface DevChainOptions {
  /** anvil's state file: the chain is loaded from it and written back on a clean stop. */
  statePath?: string;
  /** The port of the previous run, tried first so the RPC address stays the same. */
  preferredPort?: number;
  /** The token and start block the ledger recorded last time, if any. */
  known?: { token: string; startBlock: number };
}

/** Starts anvil and makes sure the test USDT exists on it. Throws 'unavailable' when anvil cannot run. */
export async function startDevChain(opts: DevChainOptions): Promise<DevChain> {
  const base = { chainId: DEV_CHAIN_ID, accounts: PAYER_ACCOUNTS, derivationPath: `${PAYER_DERIVATION_PATH}/`, statePath: opts.statePath, stateInterval: 10 };
  let node: AnvilNode;
  try {
    node = await startAnvil({ ...base, port: opts.preferredPort ?? 0 });
  } catch (e) {
    // Most likely the port of the last run is taken now; any free one will do.
    if (opts.preferredPort === undefined) throw e;
    node = await startAnvil({ ...base, port: 0 });
  }
  const provider = devProvider(node.rpcUrl);
  try {
    let token = opts.known?.token;
    let startBlock = opts.known?.startBlock ?? 0;
    let deployed = false;
    // No code there: a new chain, or its state file was lost. The deployment is the payer
    // account's first transaction, so the token gets the same address again on a fresh chain.
    if (!token || (await provider.getCode(token)) === '0x') {
      token = await deployTestToken(payerWallet(0, provider), TEST_USDT, await testTokenArtifact());
      deployed = true;
      // Nothing of ours exists before the token: the watcher need not read earlier blocks.
      startBlock = await provider.getBlockNumber();
    }
    return {
      node,
      rpcUrl: node.rpcUrl,
      chainId: node.chainId,
      token,
      deployed,
      entries: { chains: [devChainEntry(node.rpcUrl, startBlock)], tokens: [devTokenEntry(token)] },
      stop: () => node.stop(),
    };
  } catch (e) {
    await node.stop();
    throw e;
  } finally {
    provider.destroy();
  }
}
