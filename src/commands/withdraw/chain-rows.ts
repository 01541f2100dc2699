import { formatAmount } from '../../core/money.js';
import type { ChainCheck } from '../../store/local-service.js';

/** What the chain says next to what the withdrawal expects, as rows of a record (confirm's question, withdraw verify). */
export function chainRows(c: ChainCheck): [string, string][] {
  const e = c.expected;
  const o = c.observed;
  const expects: [string, string] = [
    'withdrawal expects',
    `${formatAmount(e.rawAmount, e.tokenDecimals)} ${e.tokenSymbol} to ${e.to} (token ${e.token}) in block ${e.blockNumber}, ${e.confirmations} confirmations`,
  ];
  let says: string;
  if (!o.known) says = `no transaction ${e.txHash}`;
  else if (!o.mined) says = `transaction ${e.txHash} is known but not mined`;
  else {
    const moved = o.transfers.length === 0 ? 'no token moved' : o.transfers.map((t) => `${t.amount !== null ? `${t.amount} ${e.tokenSymbol}` : `${t.rawAmount} base units of token ${t.token}`} to ${t.to}`).join(', ');
    says = `${o.succeeded === false ? 'REVERTED' : 'succeeded'} in block ${o.blockNumber}, ${o.confirmations} confirmation(s); ${moved}`;
  }
  return [['chain says', says], expects, ['verdict', c.verdict.kind === 'match' ? `matches: ${c.message}` : `DOES NOT MATCH: ${c.message}`]];
}

