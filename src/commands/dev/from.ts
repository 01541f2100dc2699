import { usage } from '../../core/errors.js';

/** What `dev pay` and `dev pay-out` share: the account they send from, and the rows of what they sent. */

/** `--from N` of `dev pay` and `dev pay-out`: one of anvil's funded test accounts, 0 to 9 (default 1). */
export function fundedAccount(from: string | undefined): number {
  if (!/^\d$/.test(from ?? '1')) throw usage('--from must be a funded test account from 0 to 9');
  return Number(from ?? '1');
}

/** The rows of a test-token transfer `dev pay` or `dev pay-out` sent (its subject row comes first). */
export function sentRows(r: { amount: string; asset: string; chainId: string; token: string; from: string; to: string; txHash: string; blockNumber: number | string }): [string, string | number][] {
  return [
    ['sent', `${r.amount} ${r.asset} (test token)`],
    ['chain', `${r.chainId} (development)`],
    ['token', r.token],
    ['from', r.from],
    ['to', r.to],
    ['tx hash', r.txHash],
    ['block', r.blockNumber],
  ];
}
