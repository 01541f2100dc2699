/**
 * A real anvil for chain tests: started on 127.0.0.1 on a free port, with an ethers provider and
 * the funded accounts of the public anvil test mnemonic as signers.
 *
 *   const chain = await startTestChain({ chainId: 31337 });
 *   afterAll(() => chain.stop());
 *   const [alice, bob] = chain.signers;
 *
 * The node is also killed when the test process ends without calling stop(), and anvil dies with
 * the process anyway (src/chains/sandbox/anvil.ts).
 */
import { HDNodeWallet, JsonRpcProvider, Network } from 'ethers';
import { startAnvil, type AnvilNode, type AnvilOptions } from '../../src/chains/sandbox/anvil.js';

/** anvil's default mnemonic: its accounts are public knowledge, never hold anything real there. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export interface TestChain {
  node: AnvilNode;
  rpcUrl: string;
  chainId: number;
  provider: JsonRpcProvider;
  /** The funded accounts, m/44'/60'/0'/0/i of ANVIL_MNEMONIC (or opts.derivationPath), connected to `provider`. */
  signers: HDNodeWallet[];
  /** Mines `n` blocks at once (anvil_mine). */
  mine(n?: number): Promise<void>;
  stop(): Promise<void>;
}

const running = new Set<AnvilNode>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // stop() is asynchronous and 'exit' handlers are not; the watchdog shell ends anvil as soon as
  // this process's end of its stdin pipe closes, which the exit itself does.
  process.once('exit', () => {
    for (const node of running) void node.stop();
  });
}

export async function startTestChain(opts: AnvilOptions = {}): Promise<TestChain> {
  installExitHook();
  const accounts = opts.accounts ?? 10;
  const node = await startAnvil({ ...opts, accounts });
  running.add(node);
  const network = Network.from(node.chainId);
  // A short polling interval: anvil mines at once, and ethers' default (4 s) would make every
  // tx.wait() slow.
  const provider = new JsonRpcProvider(node.rpcUrl, network, { staticNetwork: network, pollingInterval: 50, cacheTimeout: -1 });
  const root = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, (opts.derivationPath ?? "m/44'/60'/0'/0/").replace(/\/$/, ''));
  const signers = Array.from({ length: accounts }, (_, i) => root.deriveChild(i).connect(provider));
  return {
    node,
    rpcUrl: node.rpcUrl,
    chainId: node.chainId,
    provider,
    signers,
    async mine(n = 1) {
      await provider.send('anvil_mine', [`0x${n.toString(16)}`]);
    },
    async stop() {
      provider.destroy();
      await node.stop();
      running.delete(node);
    },
  };
}
