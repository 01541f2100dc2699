// The baselines of bench/run.mjs: the least a node:http server can do per request.
//   insert FILE [full|normal]: read the body, one SHA-256 of it, one SQLite insert on a WAL
//           file, answer a small JSON. full (the default): synchronous FULL, as the ledger, an
//           fsync per commit; normal: synchronous NORMAL, no fsync per commit (not durable: a
//           power cut loses the last commits), the baseline of issue #16.
//   derive FILE EVM_XPUB TRON_XPUB: what the spec asks of a create order at the least, done
//           the plainest way: read the body, one SHA-256, derive the next index's EVM and TRON
//           addresses of the two xpubs (serve's own derivation code, on this thread), one insert
//           with both, synchronous FULL. Not a target of issue #16: it shows how much of a
//           create is the work every correct server must do (bench/RESULTS.md).
//   fixed:  answer a fixed JSON.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const [mode, dbPath, ...rest] = process.argv.slice(2);
const sync = mode === 'derive' ? 'full' : (rest[0] ?? 'full');
if (sync !== 'full' && sync !== 'normal') throw new Error(`synchronous must be full or normal, not ${sync}`);
let insert;
let addressesOf;
if (mode === 'insert' || mode === 'derive') {
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync.toUpperCase()}`);
  if (mode === 'insert') {
    db.exec('create table if not exists t (id integer primary key, sign text not null, body text not null)');
    const ins = db.prepare('insert into t (sign, body) values (?, ?)');
    insert = (sign, body) => ins.run(sign, body);
  } else {
    db.exec('create table if not exists t (id integer primary key, sign text not null, body text not null, evm text not null, tron text not null)');
    const ins = db.prepare('insert into t (sign, body, evm, tron) values (?, ?, ?, ?)');
    insert = (sign, body) => {
      const [evm, tron] = addressesOf();
      return ins.run(sign, body, evm, tron);
    };
  }
}
if (mode === 'derive') {
  const [evmXpub, tronXpub] = rest;
  if (!evmXpub || !tronXpub) throw new Error('derive needs FILE EVM_XPUB TRON_XPUB');
  // serve's own derivation of a range (libsecp256k1 when its addon loads, else noble with the
  // table), 64 indices at a time as the CLI's deriver does, on this one thread.
  const { hashRange, nativeCurve, warmUpDerivation } = await import('../dist/chains/ckd.js');
  const { createDeriver } = await import('../dist/chains/deriver.js');
  const { formatAddress } = await import('../dist/chains/encode.js');
  if (!nativeCurve()) warmUpDerivation();
  const evm = createDeriver(evmXpub).change;
  const tron = createDeriver(tronXpub).change;
  const WINDOW = 64;
  let next = 0;
  let hashes;
  addressesOf = () => {
    const i = next++;
    if (i % WINDOW === 0) hashes = [hashRange(evm, i, WINDOW), hashRange(tron, i, WINDOW)];
    const at = 20 * (i % WINDOW);
    return [formatAddress('EVM', hashes[0].subarray(at, at + 20)), formatAddress('TRON', hashes[1].subarray(at, at + 20))];
  };
}
const fixed = JSON.stringify({ code: 1, msg: 'success', data: 'PENDING_PAY', systemTime: 0 });
const server = createServer((req, res) => {
  if (mode === 'fixed') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(fixed);
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const sign = createHash('sha256').update(body).digest('hex');
    const { lastInsertRowid } = insert(sign, body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 1, msg: 'success', data: { id: String(lastInsertRowid) }, systemTime: Date.now() }));
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stderr.write(`baseline serving http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
