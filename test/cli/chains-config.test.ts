import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempLedger } from '../helpers/cli.js';

const SEPOLIA_USDT = '0x7169D38820dfd117C3FA1f22a697dBA58d90BA06';
const TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('the chain registry from a config file', () => {
  let t: ReturnType<typeof tempLedger>;
  afterEach(() => t.cleanup());

  it('CRYPTOPAY_CHAINS adds a chain and token that withdrawals can use; a bad file is refused', async () => {
    t = tempLedger();
    const chains = join(t.dir, 'chains.json');
    writeFileSync(chains, JSON.stringify({
      chains: [{ chainId: 11155111, chainType: 'EVM', name: 'Sepolia', confirmations: 2 }, { chainId: 1, rpcUrl: 'https://ops:hunter2@eth.example/v3/SUPERSECRETAPIKEY0123456789?key=QUERYKEY' }],
      tokens: [{ chainId: 11155111, address: SEPOLIA_USDT, symbol: 'USDT', asset: 'USDT', decimals: 6 }],
    }));
    const env = { CRYPTOPAY_DB: t.db, CRYPTOPAY_CHAINS: chains, XDG_CONFIG_HOME: t.dir };
    expect((await runCli(['merchant', 'add', '--name', 'S', '--generate-wallet'], { env })).code).toBe(0);

    const list = await runCli(['chains', '--json'], { env });
    expect(list.code).toBe(0);
    const known = JSON.parse(list.stdout) as { chainId: string; name: string; watch: { rpc: string | null }; confirmations: number; tokens: { address: string }[] }[];
    expect(known.find((c) => c.chainId === '11155111')).toMatchObject({ name: 'Sepolia', confirmations: 2, tokens: [{ address: SEPOLIA_USDT }] });
    expect(known.find((c) => c.chainId === '1')).toMatchObject({ watch: { rpc: 'https://eth.example/…' }, confirmations: 12 });
    // The node provider's key, password and query never appear: only the redacted form (an attacker review found the whole rpcUrl here).
    expect(list.stdout).not.toMatch(/hunter2|SUPERSECRET|QUERYKEY|"rpcUrl"/);
    expect((await runCli(['chains'], { env })).stdout).not.toMatch(/hunter2|SUPERSECRET|QUERYKEY/);

    expect((await runCli(['balance', 'adjust', 'u1', '--amount', '+5', '--reason', 'seed', '--yes'], { env })).code).toBe(0);
    const apply = await runCli(['withdraw', 'apply', '--uid', 'u1', '--amount', '2', '--to', TO, '--chain-id', '11155111', '--chain-type', 'EVM', '--token', SEPOLIA_USDT, '--json'], { env });
    expect(apply.stderr).toBe('');
    expect(JSON.parse(apply.stdout)).toMatchObject({ chainId: '11155111', status: 'PENDING', amount: '2' });

    // Without the file the chain is unknown.
    const without = await runCli(['withdraw', 'apply', '--uid', 'u1', '--amount', '1', '--to', TO, '--chain-id', '11155111', '--chain-type', 'EVM', '--token', SEPOLIA_USDT], { env: { ...env, CRYPTOPAY_CHAINS: undefined } });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/--chain-id 11155111 is not a chain this service knows/);

    writeFileSync(chains, '{ not json');
    const bad = await runCli(['chains'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not valid JSON');
  });

  it('serve with a chains config that does not hold stops at once, naming the file, and serves nothing', async () => {
    t = tempLedger();
    const chains = join(t.dir, 'chains.json');
    for (const [text, code, message] of [
      ['{ not json', 2, `error: the chains config ${chains} is not valid JSON`],
      [JSON.stringify({ chains: [{ chainId: 'x' }] }), 1, 'error: registry config chains[0]: chainId must be a positive decimal integer such as 56, got "x"'],
    ] as const) {
      writeFileSync(chains, text);
      for (const extra of [[], ['--dev']]) {
        const t0 = Date.now();
        const r = await runCli(['serve', '--port', '0', ...extra], { env: { CRYPTOPAY_DB: t.db, CRYPTOPAY_CHAINS: chains, XDG_CONFIG_HOME: t.dir } });
        expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code, stderr: `${message}\n`, stdout: '' });
        expect(Date.now() - t0).toBeLessThan(10_000);
      }
    }
  });
});
