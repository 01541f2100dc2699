// A large ledger made quickly, for the benchmarks that need one (bench/watch.mjs; bench/ab-create.mjs
// with AB_ORDERS): one merchant made by the product, and its orders inserted with SQL.
import { randomBytes } from 'node:crypto';
import { evmAddressOf, tronAddressOf } from '../dist/chains/encode.js';
import { openLedger } from '../dist/store/db.js';
import { LocalPaymentService } from '../dist/store/local-service.js';

/**
 * The ledger a merchant with `orders` orders has: one merchant (made by the product, with a
 * generated wallet, so EVM and TRON xpubs, and rate limit 0), and per order the row `order create`
 * writes and its two addresses, EVM (EIP-55) and TRON (base58check), at consecutive derivation
 * indices, with the merchant's counters past them. The rows are inserted with SQL in one
 * transaction instead of through the API (which would take an hour for 1,000,000); the addresses
 * are valid addresses of random 20-byte keys rather than derived from the xpubs (what the watcher
 * reads is the same). Order ids have the product's form (creation time in base 32, then 128
 * random bits). Returns the merchant (its mchId and secret) and the EVM addresses and ids of the
 * first `keep` orders.
 */
export async function fillLedger(file, orders, keep = 0, log = () => {}) {
  const ledger = openLedger(file);
  const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'bench' } });
  const made = await service.addMerchant({ name: 'Bench', generateWallet: true, rateLimit: 0 });
  const m = made.merchant;
  const db = ledger.sqlite;
  // This connection only: the index pages of 1M random addresses stay in memory while they are
  // built (the ledger's 4 MiB cache would read and write most of them again for every row).
  db.pragma('cache_size = -1000000');
  const now = Date.now();
  const insOrder = db.prepare("insert into orders (id, merchant_id, oid, uid, asset, amount, status, expired_at, created_at) values (?, ?, ?, ?, 'USDT', 1000000, 'PENDING_PAY', ?, ?)");
  const insAddr = db.prepare('insert into order_addresses (order_id, chain_type, address, derivation_index) values (?, ?, ?, ?)');
  const addresses = [];
  const ids = [];
  // A bulk load: the tables' own secondary indexes (not the keys and UNIQUE constraints) are
  // dropped and then created again from their own SQL in sqlite_master, so they are built by
  // sorting instead of by a million random inserts. The ledger ends up with the same schema.
  const indexes = db.prepare("select name, sql from sqlite_master where type = 'index' and tbl_name in ('orders', 'order_addresses') and sql is not null").all();
  db.transaction(() => {
    for (const i of indexes) db.exec(`drop index "${i.name}"`);
    const bytes = randomBytes(40 * orders);
    const rand = randomBytes(16 * orders);
    for (let i = 0; i < orders; i++) {
      // Created one a millisecond up to now, expiring in 6 days: every one of them can be paid on time.
      const created = now - orders + i;
      const id = `ord_${created.toString(32).padStart(9, '0')}${rand.subarray(16 * i, 16 * i + 16).toString('base64url')}`;
      const evm = evmAddressOf(bytes.subarray(40 * i, 40 * i + 20));
      insOrder.run(id, m.mchId, `b-${i}`, `u-${i}`, created + 6 * 86_400_000, created);
      insAddr.run(id, 'EVM', evm, i);
      insAddr.run(id, 'TRON', tronAddressOf(bytes.subarray(40 * i + 20, 40 * i + 40)), i);
      if (i < keep) {
        addresses.push(evm);
        ids.push(id);
      }
    }
    log(`ledger: ${orders} orders generated and inserted, indexing`);
    for (const i of indexes) db.exec(i.sql);
    db.prepare('update merchants set evm_next_index = ?, tron_next_index = ? where id = ?').run(orders, orders, m.mchId);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  ledger.close();
  return { merchant: { ...m, secret: made.secret }, addresses, ids };
}
