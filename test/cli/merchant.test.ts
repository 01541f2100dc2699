import { existsSync, readFileSync } from 'node:fs';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { describe, expect, it } from 'vitest';
import { createDeriver, walletFromMnemonic } from '../../src/chains/derive.js';
import { TEST_MNEMONIC } from '../helpers/cli.js';
import { sandbox, SLOW } from './_support.js';

const TEST_WALLET = walletFromMnemonic(TEST_MNEMONIC);
/** m/44'/60'/0'/0/0 of the test mnemonic: the well-known Hardhat account #0. */
const HARDHAT_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

/** "label  value" lines of a record, as the CLI prints one. */
function record(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^(\S(?:.*?\S)?)\s{2,}(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

// Every test has its own ledger: they run side by side.
describe.concurrent('merchants', { timeout: SLOW }, () => {
  describe('merchant add --generate-wallet', () => {
    it('prints the mchId, the secret and the 24 words of the wallet it uses, with a warning, and stores no words', async () => {
      const s = sandbox();
      const r = await s.run(['merchant', 'add', '--name', 'My shop', '--generate-wallet']);
      expect(r.code).toBe(0);
      const rec = record(r.stdout);
      expect(rec.mchId).toMatch(/^M\d+$/);
      expect(rec.secret).toMatch(/^sk_[A-Za-z0-9_-]{20,}$/);
      const words = rec['wallet words']!.split(' ');
      expect(words).toHaveLength(24);
      expect(Mnemonic.isValidMnemonic(words.join(' '))).toBe(true);
      expect(r.stderr).toMatch(/^warning: /m);
      expect(r.stderr).toMatch(/24 words/);
      expect(r.stderr).toMatch(/shown once/);

      // The words are the wallet that receives the payments: its xpubs are the merchant's.
      const shown = await s.json(['merchant', 'show', rec.mchId!]);
      const wallet = walletFromMnemonic(words.join(' '));
      expect(shown).toMatchObject({ mchId: rec.mchId, name: 'My shop', evmXpub: wallet.evmXpub, tronXpub: wallet.tronXpub });

      // "never stored": not in the ledger file, nor in its journal. The ledger itself must be
      // there, or the loop below would check nothing.
      expect(existsSync(s.db)).toBe(true);
      for (const f of [s.db, `${s.db}-wal`, `${s.db}-journal`]) {
        if (existsSync(f)) expect(readFileSync(f).includes(Buffer.from(words.slice(0, 3).join(' ')))).toBe(false);
      }
    });

    it('--json gives {mchId, secret, mnemonic}', async () => {
      const s = sandbox();
      const m = await s.json(['merchant', 'add', '--name', 'J', '--generate-wallet']);
      expect(Object.keys(m).sort()).toEqual(['mchId', 'mnemonic', 'secret']);
      expect(m.mchId).toMatch(/^M\d+$/);
      expect(m.secret).toMatch(/^sk_/);
      expect(m.mnemonic.split(' ')).toHaveLength(24);
    });
  });

  describe('merchant add with xpubs', () => {
    it('--evm-xpub and --tron-xpub: orders get addresses derived from them, no words are printed', async () => {
      const s = sandbox();
      const r = await s.run(['merchant', 'add', '--name', 'Xpub shop', '--evm-xpub', TEST_WALLET.evmXpub, '--tron-xpub', TEST_WALLET.tronXpub]);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/wallet words/);
      const o = await s.json(['order', 'create', '--oid', 'X-1', '--uid', 'u1', '--amount', '1']);
      expect(o.addresses).toEqual({ EVM: HARDHAT_0, TRON: createDeriver(TEST_WALLET.tronXpub).tron(0) });
      expect(o.addresses.TRON).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    });

    it('only an EVM xpub: orders carry only an EVM address', async () => {
      const s = sandbox();
      await s.ok(['merchant', 'add', '--name', 'EVM only', '--evm-xpub', TEST_WALLET.evmXpub]);
      const o = await s.json(['order', 'create', '--oid', 'E-1', '--uid', 'u1', '--amount', '1']);
      expect(o.addresses).toEqual({ EVM: HARDHAT_0 });
      const human = await s.ok(['address', o.id]);
      expect(human).toContain(HARDHAT_0);
      expect(human).not.toMatch(/TRON/);
    });

    it('refuses a bad key, both kinds of wallet or none with exit 2 (judged by their form, before the ledger is opened) and a message naming the option: no merchant, not even a ledger file', async () => {
      const s = sandbox();
      const typo = TEST_WALLET.evmXpub.slice(0, -1) + (TEST_WALLET.evmXpub.endsWith('a') ? 'b' : 'a');
      const xprv = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, "m/44'/60'/0'").extendedKey;
      const master = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(TEST_MNEMONIC).computeSeed()).neuter().extendedKey;
      const [bad, priv, depth, tron, both, none, rate] = await Promise.all([
        s.run(['merchant', 'add', '--name', 'A', '--evm-xpub', typo]),
        s.run(['merchant', 'add', '--name', 'B', '--evm-xpub', xprv]),
        s.run(['merchant', 'add', '--name', 'C', '--evm-xpub', master]),
        s.run(['merchant', 'add', '--name', 'D', '--tron-xpub', 'not-a-key']),
        s.run(['merchant', 'add', '--name', 'E', '--generate-wallet', '--evm-xpub', TEST_WALLET.evmXpub]),
        s.run(['merchant', 'add', '--name', 'F']),
        s.run(['merchant', 'add', '--name', 'G', '--generate-wallet', '--rate-limit', '2000000']),
      ]);
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toMatch(/evm-xpub is not a valid extended public key.*checksum/);
      expect(priv.code, priv.stderr).toBe(2);
      expect(priv.stderr).toMatch(/extended private key/);
      expect(priv.stderr).not.toContain(xprv); // a leaked private key is never echoed
      expect(depth.code, depth.stderr).toBe(2);
      expect(depth.stderr).toMatch(/depth 0.*account-level/);
      expect(tron.code, tron.stderr).toBe(2);
      expect(tron.stderr).toMatch(/tron-xpub is not a valid extended public key/);
      expect(both.code, both.stderr).toBe(2);
      expect(both.stderr).toMatch(/either --generate-wallet or xpubs/);
      expect(none).toEqual({ code: 2, stdout: '', stderr: 'error: a merchant needs a wallet to receive payments: give --evm-xpub and/or --tron-xpub, or --generate-wallet\n' });
      expect(rate).toEqual({ code: 2, stdout: '', stderr: 'error: --rate-limit must be a whole number of requests per minute, at most 1000000 (0 means no limit)\n' });
      expect((await s.run(['merchant', 'list'])).stderr).toMatch(/^error: no ledger at /);
    });

    it('refuses a second merchant on the same xpub (they would share addresses)', async () => {
      const s = sandbox();
      await s.ok(['merchant', 'add', '--name', 'First', '--evm-xpub', TEST_WALLET.evmXpub]);
      const r = await s.run(['merchant', 'add', '--name', 'Second', '--evm-xpub', TEST_WALLET.evmXpub]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already the wallet of merchant M\d+/);
    });
  });

  describe('merchant list, show, rotate-secret', () => {
    it('list and show never print the secret; rotate-secret --yes prints a new one', async () => {
      const s = sandbox();
      const a = await s.json(['merchant', 'add', '--name', 'Alpha', '--generate-wallet']);
      const b = await s.json(['merchant', 'add', '--name', 'Beta', '--evm-xpub', TEST_WALLET.evmXpub, '--order-lifetime', '2h', '--rate-limit', '0']);
      const views = await Promise.all([
        s.run(['merchant', 'list']),
        s.run(['merchant', 'list', '--json']),
        s.run(['merchant', 'show', a.mchId]),
        s.run(['merchant', 'show', b.mchId, '--json']),
        s.run(['--mch-id', b.mchId, 'merchant', 'show']),
        s.run(['log', '--json']),
      ]);
      for (const v of views) {
        expect(v.code).toBe(0);
        for (const secret of [a.secret, b.secret]) {
          expect(v.stdout).not.toContain(secret);
          expect(v.stderr).not.toContain(secret);
        }
        expect(v.stdout).not.toMatch(/sk_/);
      }
      const [list, listJson, showA, showB, showBByFlag] = views.map((v) => v.stdout);
      expect(list!.split('\n').filter(Boolean).map((l) => l.split('\t').slice(0, 2))).toEqual([['mchId', 'name'], [a.mchId, 'Alpha'], [b.mchId, 'Beta']]);
      expect(JSON.parse(listJson!).map((m: { mchId: string }) => m.mchId)).toEqual([a.mchId, b.mchId]);
      expect(record(showA!)).toMatchObject({ mchId: a.mchId, name: 'Alpha', 'order lifetime': '30m', 'rate limit': '60/min' });
      expect(JSON.parse(showB!)).toMatchObject({ mchId: b.mchId, orderLifetime: '2h', rateLimit: 0, tronXpub: null });
      expect(record(showBByFlag!).mchId).toBe(b.mchId);

      const rot = await s.run(['merchant', 'rotate-secret', a.mchId, '--yes']);
      expect(rot.code).toBe(0);
      const fresh = record(rot.stdout).secret!;
      expect(fresh).toMatch(/^sk_/);
      expect(fresh).not.toBe(a.secret);
      expect(rot.stderr).toMatch(/shown this once/);
      const after = await s.json(['merchant', 'show', a.mchId]);
      expect(after.secretRotatedAt).toEqual(expect.any(Number));
      expect(JSON.stringify(after)).not.toContain(fresh);

      const rotJson = await s.json(['merchant', 'rotate-secret', b.mchId, '--yes']);
      expect(rotJson).toEqual({ mchId: b.mchId, secret: expect.stringMatching(/^sk_/) });
    });

    it('rotate-secret without a terminal and without --yes: exit 2, nothing rotated', async () => {
      const s = sandbox();
      const a = await s.json(['merchant', 'add', '--name', 'Alpha', '--generate-wallet']);
      const r = await s.run(['merchant', 'rotate-secret', a.mchId]);
      expect(r.code).toBe(2);
      // Not "changes money": what it does is cut off whoever signs with the secret.
      expect(r.stderr).toBe('error: Rotate the secret: this cuts off every client that signs with the current secret, so it needs confirmation; pass --yes to confirm without a terminal (nothing was changed)\n');
      expect(r.stdout).not.toMatch(/sk_/);
      expect((await s.json(['merchant', 'show'])).secretRotatedAt).toBeNull();
    });

    it('show of an unknown merchant: exit 1, "not found"', async () => {
      const s = sandbox();
      await s.ok(['merchant', 'add', '--name', 'Alpha', '--generate-wallet']);
      const r = await s.run(['merchant', 'show', 'M999999']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/merchant M999999 not found/);
    });

    it('missing --name without a terminal: exit 2, nothing added', async () => {
      const s = sandbox();
      const r = await s.run(['merchant', 'add', '--generate-wallet']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('missing required option --name');
      expect(r.stdout).toBe('');
      // Nothing added, not even an empty ledger.
      expect((await s.run(['merchant', 'list'])).stderr).toMatch(/^error: no ledger at /);
    });
  });
});

describe('merchant payout-wallet', { timeout: SLOW }, () => {
  it('adds, lists and removes the addresses a merchant pays out from, by chain type; refuses a bad address, a duplicate and one not there, changing nothing', async () => {
    const s = sandbox();
    const m = await s.json<{ mchId: string }>(['merchant', 'add', '--name', 'Shop', '--generate-wallet']);
    const evm = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const tron = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    expect(await s.json(['merchant', 'payout-wallet', 'list'])).toEqual({ mchId: m.mchId, wallets: { EVM: [], TRON: [] } });
    // An EVM address in lower case is stored checksummed.
    const added = await s.run(['merchant', 'payout-wallet', 'add', evm.toLowerCase()]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(new RegExp(`^EVM payout wallets +${evm}$`, 'm'));
    expect(added.stdout).toMatch(/^TRON payout wallets +none: the sender is not checked$/m);
    expect(added.stderr).toContain(`${evm} added: withdrawals of merchant ${m.mchId} on EVM chains verify only when paid from one of its EVM payout wallets`);
    expect(await s.json(['merchant', 'payout-wallet', 'add', tron])).toMatchObject({ chainType: 'TRON', address: tron, wallets: { EVM: [evm], TRON: [tron] } });
    expect(await s.json(['merchant', 'show'])).toMatchObject({ mchId: m.mchId, payoutWallets: { EVM: [evm], TRON: [tron] } });

    const [dup, bad, checksum, absent] = await Promise.all([
      s.run(['merchant', 'payout-wallet', 'add', evm]),
      s.run(['merchant', 'payout-wallet', 'add', 'hello']),
      s.run(['merchant', 'payout-wallet', 'add', '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed']),
      s.run(['merchant', 'payout-wallet', 'remove', '0x0000000000000000000000000000000000000001']),
    ]);
    expect(dup).toMatchObject({ code: 1, stderr: `error: ${evm} is already a payout wallet of merchant ${m.mchId}\n` });
    expect(bad).toMatchObject({ code: 2, stderr: 'error: address hello is neither an EVM address (0x…) nor a TRON address (T…)\n' });
    expect(checksum.code).toBe(2);
    expect(checksum.stderr).toMatch(/^error: address is not a valid EVM address: /);
    expect(absent).toMatchObject({ code: 1, stderr: `error: 0x0000000000000000000000000000000000000001 is not a payout wallet of merchant ${m.mchId}\n` });

    const removed = await s.run(['merchant', 'payout-wallet', 'remove', evm]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain(`${evm} removed: merchant ${m.mchId} names no EVM payout wallet now, so who paid a withdrawal on EVM chains is not checked`);
    expect(await s.json(['merchant', 'payout-wallet', 'list'])).toEqual({ mchId: m.mchId, wallets: { EVM: [], TRON: [tron] } });
    const log = await s.json<{ action: string; detail: unknown }[]>(['log']);
    expect(log.filter((e) => e.action.startsWith('merchant.payout_wallet')).map((e) => e.action)).toEqual([
      'merchant.payout_wallet_removed', 'merchant.payout_wallet_added', 'merchant.payout_wallet_added',
    ]);
    expect((await s.run(['ledger', 'check'])).code).toBe(0);
  });
});
