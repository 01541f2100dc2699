/**
 * Prompts that check as you go (issue #15 item 6), under a real pseudo-terminal: each answer is
 * judged by the flag's own rule when it is typed, and nothing is asked that follows from an
 * earlier answer.
 */
import { describe, expect, it } from 'vitest';
import { EVM_TO, HAS_SCRIPT, paidOrder, runPty, SLOW, TRON_CHAIN, USDT_ETH, USDT_TRON, withMerchant } from './_support.js';

const ERASE = '\x7f'.repeat(12);

describe.skipIf(!HAS_SCRIPT).concurrent('prompts on a terminal', { timeout: SLOW }, () => {
  it('withdraw apply: "1,5" is refused at the amount question itself and asked again; chain type and token follow from the chain', async () => {
    const s = await withMerchant();
    await paidOrder(s, 'P-1', 'user-1', '10');
    const r = await runPty(['--db', s.db, 'withdraw', 'apply'], {
      env: { NO_COLOR: '1' },
      steps: [
        { waitFor: /User id/, send: 'user-1\r' },
        { waitFor: /Amount/, send: '1,5\r' },
        // Refused where it was typed, before any other question.
        { waitFor: /amount must be a plain decimal/, send: `${ERASE}1.5\r` },
        { waitFor: /Chain id/, send: '1\r' },
        { waitFor: /Target address \(EVM\)/, send: `${EVM_TO}\r` },
      ],
    });
    expect(r.code, r.text).toBe(0);
    expect(r.text).not.toMatch(/Chain type/);
    expect(r.text).not.toMatch(/Token/);
    // The refusal came before the chain was asked for.
    expect(r.text.indexOf('amount must be a plain decimal')).toBeLessThan(r.text.indexOf('Chain id'));
    const [w] = await s.json(['withdraw', 'list']);
    expect(w).toMatchObject({ uid: 'user-1', amount: '1.5', chainId: '1', chainType: 'EVM', token: USDT_ETH, to: EVM_TO });
  });

  it('an address for the wrong chain type, or a chain the ledger does not know, is refused at its question', async () => {
    const s = await withMerchant();
    await paidOrder(s, 'P-1', 'user-1', '10');
    const r = await runPty(['--db', s.db, 'withdraw', 'apply', '--uid', 'user-1', '--amount', '2'], {
      env: { NO_COLOR: '1' },
      steps: [
        { waitFor: /Chain id/, send: '5\r' },
        { waitFor: /chain-id 5 is not a chain this ledger knows/, send: `\x7f${TRON_CHAIN}\r` },
        { waitFor: /Target address \(TRON\)/, send: `${EVM_TO}\r` },
        { waitFor: /to .*(TRON|base58)/i, send: `${'\x7f'.repeat(EVM_TO.length)}TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL\r` },
      ],
    });
    expect(r.code, r.text).toBe(0);
    const [w] = await s.json(['withdraw', 'list']);
    expect(w).toMatchObject({ chainId: TRON_CHAIN, chainType: 'TRON', token: USDT_TRON, to: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', amount: '2' });
  });

  it('order create: an oid too long is refused at its question; the answer that fits is used', async () => {
    const s = await withMerchant();
    const long = 'X'.repeat(65);
    const r = await runPty(['--db', s.db, 'order', 'create', '--uid', 'u1', '--amount', '5'], {
      env: { NO_COLOR: '1' },
      steps: [
        { waitFor: /Merchant order number \(oid\)/, send: `${long}\r` },
        { waitFor: /oid must be at most 64 characters/, send: `${'\x7f'.repeat(65)}P-1\r` },
      ],
    });
    expect(r.code, r.text).toBe(0);
    expect(r.text).toMatch(/oid\s+P-1/);
  });

  it('a wrong flag is refused before the first question is asked', async () => {
    const s = await withMerchant();
    const r = await runPty(['--db', s.db, 'withdraw', 'apply', '--amount', '1,5']);
    expect(r.code, r.text).toBe(2);
    expect(r.text).toMatch(/--amount must be a plain decimal/);
    expect(r.text).not.toMatch(/User id/);
  });
});

describe.concurrent('withdraw apply without a terminal', { timeout: SLOW }, () => {
  it('the chain type and the token follow from --chain-id; a --chain-type that contradicts it is a usage error', async () => {
    const s = await withMerchant();
    await paidOrder(s, 'P-1', 'user-1', '10');
    const w = await s.json(['withdraw', 'apply', '--uid', 'user-1', '--amount', '1', '--chain-id', '56', '--to', EVM_TO]);
    expect(w).toMatchObject({ chainId: '56', chainType: 'EVM', token: '0x55d398326f99059fF775485246999027B3197955' });
    const wrong = await s.run(['withdraw', 'apply', '--uid', 'user-1', '--amount', '1', '--chain-id', '1', '--chain-type', 'TRON', '--to', EVM_TO]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--chain-type TRON does not match --chain-id 1/);
    const missing = await s.run(['withdraw', 'apply', '--uid', 'user-1', '--amount', '1', '--to', EVM_TO]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required option --chain-id/);
    expect(await s.json(['withdraw', 'list'])).toHaveLength(1);
  });
});
