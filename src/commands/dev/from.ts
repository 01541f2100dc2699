import { usage } from '../../core/errors.js';

/** `--from N` of `dev pay` and `dev pay-out`: one of anvil's funded test accounts, 0 to 9 (default 1). */
export function fundedAccount(from: string | undefined): number {
  if (!/^\d$/.test(from ?? '1')) throw usage('--from must be a funded test account from 0 to 9');
  return Number(from ?? '1');
}
