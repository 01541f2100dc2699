/**
 * `cryptopay serve` takes order addresses from its derivation thread: every order created over
 * HTTP still gets exactly the addresses of its wallet at its indices, each index once, also
 * while the CLI creates orders on the same ledger at the same time.
 */
import { HDNodeWallet } from 'ethers';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tronAddressFromEvm } from '../../src/chains/address.js';
import { walletFromMnemonic } from '../../src/chains/derive.js';
import { sign } from '../../src/signing/index.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';
import { TEST_MNEMONIC } from '../helpers/cli.js';
import { httpJson, killAll, nextNonce, runCli, spawnServe, tempDir } from './helpers.js';

const tmp = tempDir();
afterEach(() => killAll());
afterAll(() => tmp.cleanup());

describe('serve with the address pool', { timeout: 120_000 }, () => {
  it('600 orders over HTTP and 10 from the CLI at once: distinct indices, each the address ethers derives', async () => {
    const db = join(tmp.dir, 'pool.db');
    const keys = walletFromMnemonic(TEST_MNEMONIC);
    const ledger = openLedger(db);
    const service = new LocalPaymentService(ledger, { now: Date.now, caller: { actor: 'test' } });
    const m = await service.addMerchant({ name: 'Pool', evmXpub: keys.evmXpub, tronXpub: keys.tronXpub, rateLimit: 0 });
    ledger.close();
    const serve = await spawnServe(db);

    const create = (i: number) => {
      const body = { mchId: m.merchant.mchId, oid: `http-${i}`, uid: 'u1', amount: '1', timestamp: Date.now(), nonce: nextNonce() };
      return httpJson(serve.url, '/api/v1/order', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...body, sign: sign(body, m.secret) }),
      });
    };
    const http: Promise<{ status: number; json: any }>[] = [];
    for (let wave = 0; wave < 12; wave++) {
      for (let i = 0; i < 50; i++) http.push(create(wave * 50 + i));
      await Promise.all(http.slice(-50));
    }
    const cli = Array.from({ length: 10 }, (_, i) => runCli(['--db', db, 'order', 'create', '--oid', `cli-${i}`, '--uid', 'u2', '--amount', '1', '--json']));
    const [httpReplies, cliReplies] = await Promise.all([Promise.all(http), Promise.all(cli)]);
    for (const r of httpReplies) expect(r.status, JSON.stringify(r.json)).toBe(200);
    for (const r of cliReplies) expect(r.code, r.stderr).toBe(0);
    await serve.stop();

    const check = openLedger(db);
    const rows = check.sqlite
      .prepare('select chain_type as chain, address, derivation_index as i from order_addresses order by chain_type, derivation_index')
      .all() as { chain: string; address: string; i: bigint }[];
    check.close();
    expect(rows).toHaveLength(2 * 610);
    const root = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, 'm');
    for (const chain of ['EVM', 'TRON']) {
      const mine = rows.filter((r) => r.chain === chain);
      expect(new Set(mine.map((r) => r.i)).size).toBe(610);
      for (const r of mine) {
        const evm = root.derivePath(`m/44'/${chain === 'EVM' ? 60 : 195}'/0'/0/${r.i}`).address;
        expect(r.address, `${chain} ${r.i}`).toBe(chain === 'EVM' ? evm : tronAddressFromEvm(evm));
      }
    }
    expect(serve.stderr()).not.toMatch(/derivation.*(failed|stopped)/);
  });
});
