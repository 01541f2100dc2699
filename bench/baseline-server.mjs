// The baselines of bench/run.mjs: the least a node:http server can do per request.
//   insert FILE [full|normal]: read the body, one SHA-256 of it, one SQLite insert on a WAL
//           file, answer a small JSON. full (the default): synchronous FULL, as the ledger, an
//           fsync per commit; normal: synchronous NORMAL, no fsync per commit (not durable: a
//           power cut loses the last commits), the baseline of issue #16.
//   fixed:  answer a fixed JSON.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const [mode, dbPath, sync = 'full'] = process.argv.slice(2);
if (sync !== 'full' && sync !== 'normal') throw new Error(`synchronous must be full or normal, not ${sync}`);
let insert;
if (mode === 'insert') {
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync.toUpperCase()}`);
  db.exec('create table if not exists t (id integer primary key, sign text not null, body text not null)');
  insert = db.prepare('insert into t (sign, body) values (?, ?)');
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
    const { lastInsertRowid } = insert.run(sign, body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 1, msg: 'success', data: { id: String(lastInsertRowid) }, systemTime: Date.now() }));
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stderr.write(`baseline serving http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
