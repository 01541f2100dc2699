import { PAYOUT_CLOCK_SKEW_MS, type VerificationReport } from '../../core/types.js';

const confirmations = (n: number) => `${n} confirmation${n === 1 ? '' : 's'}`;

/** What the chain says next to what the withdrawal expects, as rows of a record (confirm's question, withdraw verify). */
export function chainRows(r: VerificationReport): [string, string][] {
  const e = r.expected;
  const o = r.chain;
  let says: string;
  if (!o.known) says = `no transaction ${r.txHash}`;
  else if (!o.mined) says = `transaction ${r.txHash} is known but not mined`;
  else {
    const moved = o.transfers.length === 0
      ? 'no token moved'
      : o.transfers.map((t) => `${t.amount !== null ? `${t.amount} ${e.tokenSymbol}` : `${t.rawAmount} base units of token ${t.token}`} to ${t.to}`).join(', ');
    const at = typeof o.blockTime === 'number' ? ` (${new Date(o.blockTime).toISOString()})` : '';
    says = `${o.succeeded === false ? 'REVERTED' : 'succeeded'} in block ${o.blockNumber}${at}, ${confirmations(o.confirmations)}; ${moved}`;
  }
  return [
    ['chain says', says],
    ['withdrawal expects', `${e.amount} ${e.tokenSymbol} to ${e.to} (token ${e.token}) in block ${e.blockNumber}, ${confirmations(e.confirmations)}${typeof e.requestedAt === 'number' ? `, not mined before its request at ${new Date(e.requestedAt).toISOString()} (${PAYOUT_CLOCK_SKEW_MS / 60_000} minutes allowed for the clocks)` : ''}${e.payoutWallets?.length ? `, from ${e.payoutWallets.join(' or ')}` : ''}`],
    ['verdict', r.matches ? `matches: ${r.message}` : `DOES NOT MATCH: ${r.message}`],
  ];
}
