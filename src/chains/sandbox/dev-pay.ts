/**
 * What `cryptopay dev pay` does on the development chain: send test USDT from one of anvil's
 * funded accounts, minting what that account lacks first (anyone may mint the test token).
 */
import { Contract, type TransactionReceipt } from 'ethers';
import { AppError } from '../../core/errors.js';
import { devProvider, payerWallet, PAYER_ACCOUNTS } from './dev-chain.js';

const TOKEN_ABI = [
  'function balanceOf(address) view returns (uint256)',
  'function mint(address to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
];

export interface TestTransfer {
  rpcUrl: string;
  chainId: number;
  token: string;
  to: string;
  /** Token base units. */
  units: bigint;
  /** Index of the funded account, 0 to PAYER_ACCOUNTS - 1. */
  from: number;
}

export interface SentTransfer {
  from: string;
  txHash: string;
  blockNumber: number;
  /** Base units minted to the payer first (0 when it held enough). */
  minted: bigint;
}

export async function sendTestTokens(t: TestTransfer): Promise<SentTransfer> {
  if (!Number.isInteger(t.from) || t.from < 0 || t.from >= PAYER_ACCOUNTS) throw new AppError('invalid', `--from must be a funded account from 0 to ${PAYER_ACCOUNTS - 1}`);
  if (t.units <= 0n) throw new AppError('invalid', 'amount must be positive');
  const provider = devProvider(t.rpcUrl, t.chainId);
  try {
    let answered: bigint;
    try {
      answered = BigInt((await provider.send('eth_chainId', [])) as string);
    } catch (e) {
      throw new AppError('unavailable', `the development chain at ${t.rpcUrl} does not answer (${shortReason(e)}): is cryptopay serve --dev running on this ledger?`, { cause: e });
    }
    if (answered !== BigInt(t.chainId)) {
      throw new AppError('unavailable', `the node at ${t.rpcUrl} is chain ${answered}, not the development chain ${t.chainId}: nothing sent`);
    }
    const payer = payerWallet(t.from, provider);
    const token = new Contract(t.token, TOKEN_ABI, payer);
    if ((await provider.getCode(t.token)) === '0x') throw new AppError('unavailable', `no token contract at ${t.token} on the development chain: restart cryptopay serve --dev to deploy it`);
    try {
      const held = (await token.getFunction('balanceOf')(payer.address)) as bigint;
      const minted = held < t.units ? t.units - held : 0n;
      if (minted > 0n) await mined(await token.getFunction('mint')(payer.address, minted));
      const receipt = await mined(await token.getFunction('transfer')(t.to, t.units));
      return { from: payer.address, txHash: receipt.hash, blockNumber: receipt.blockNumber, minted };
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError('unavailable', `the test transfer failed on the development chain: ${shortReason(e)}`, { cause: e });
    }
  } finally {
    provider.destroy();
  }
}

async function mined(tx: { wait(): Promise<TransactionReceipt | null> }): Promise<TransactionReceipt> {
  const receipt = await tx.wait();
  if (!receipt || receipt.status !== 1) throw new AppError('internal', 'the test transfer was not mined successfully');
  return receipt;
}

function shortReason(e: unknown): string {
  const m = (e as { shortMessage?: string }).shortMessage ?? (e as Error).message ?? String(e);
  return String(m).slice(0, 160);
}
