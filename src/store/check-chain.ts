import { txKey, txKeySql } from './tx-keys.js';

type Row = Record<string, unknown>;

/**
 * The watcher's book against the ledger's (a part of `ledger check`): a payment seen on chain is
 * credited exactly when it is `counted`, to its order, for its amount; one seen, held, returned
 * or refused is not in the ledger. (A chain payment recorded without the watcher's row, as the
 * ledger's own tests do through recordPayment, is not the watcher's to judge.)
 */
export function chainPaymentMismatches(rows: (query: string) => IterableIterator<Row>): string[] {
  const out: string[] = [];
  const ledger = new Map<string, { order: string; amount: bigint; byHand: boolean }>();
  const key = (chain: unknown, hash: unknown, log: unknown) => `${String(chain)}:${txKey(String(hash))}:${String(log)}`;
  // A payment recorded by hand and then seen on chain carries the chain's log (payments.ts,
  // matchRecordedByHand); its amount is the one the operator recorded, which may differ.
  // The transaction's other logs to that order are covered by the same record: counted, with no
  // payment of their own.
  const coveredByHand = new Set<string>();
  for (const p of rows('select chain_id, tx_key, log_index, order_id, amount, source from payments where log_index is not null')) {
    ledger.set(key(p.chain_id, p.tx_key, p.log_index), { order: String(p.order_id), amount: BigInt(p.amount as number | bigint), byHand: p.source === 'manual' });
    if (p.source === 'manual') coveredByHand.add(`${String(p.chain_id)}:${String(p.tx_key)}:${String(p.order_id)}`);
  }
  for (const c of rows('select chain_id, tx_hash, log_index, order_id, amount, status from chain_payments order by chain_id, block_number, log_index')) {
    const k = key(c.chain_id, c.tx_hash, c.log_index);
    const where = `chain ${c.chain_id} tx ${c.tx_hash} log ${c.log_index}`;
    const credited = ledger.get(k);
    ledger.delete(k);
    if (c.status !== 'counted') {
      if (credited) out.push(`the payment in ${where} is ${c.status} on chain but credited to order ${credited.order}`);
      continue;
    }
    if (!credited) {
      if (!coveredByHand.has(`${String(c.chain_id)}:${txKey(String(c.tx_hash))}:${String(c.order_id)}`)) out.push(`the payment in ${where} is counted on chain but not credited to order ${c.order_id}`);
    }
    else if (credited.order !== c.order_id || (!credited.byHand && credited.amount !== BigInt(c.amount as number | bigint))) {
      out.push(`the payment in ${where} is counted for order ${c.order_id} (${c.amount}) but credited to order ${credited.order} (${credited.amount})`);
    }
  }
  // A transfer recorded as sent back that a payment by hand credits (both decided by operators).
  for (const r of rows(`select distinct c.tx_hash, c.order_id from chain_payments c join payments p on p.order_id = c.order_id and p.source = 'manual'
      and p.tx_key = ${txKeySql('c.tx_hash')} where c.status = 'returned'`)) {
    out.push(`the payment in tx ${r.tx_hash} to order ${r.order_id} is recorded as sent back, and credited by hand`);
  }
  return out;
}
