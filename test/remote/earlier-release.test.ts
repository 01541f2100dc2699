/**
 * A remote of an earlier release answers `summary` without the fields added since (the period's
 * balance adjustments, the retrying callbacks): the CLI says it cannot tell instead of printing
 * nothing or a zero that would read as "none moved" (a reviewer found no test of it).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { envelope, home, stopAll, tiny } from './_support.js';

afterAll(stopAll);

const SIGNER = { CRYPTOPAY_MCH_ID: 'M100001', CRYPTOPAY_SECRET: 'sk_test_not_a_real_secret_123456' };
const DAY = Date.UTC(2026, 11, 2);
const period = (since: number) => ({
  since,
  payments: { count: 2, total: { USDT: '30.5' } },
  refunds: { count: 0, total: {} },
  withdrawals: { count: 1, total: { USDT: '5' } },
});
/** A summary as a server from before adjustments, refused payments and retrying callbacks answered it. */
const EARLIER = {
  at: DAY + 3_600_000,
  mchId: 'M100001',
  pendingWithdrawals: { count: 0, total: {}, confirming: 0 },
  today: period(DAY),
  week: period(DAY - 2 * 86_400_000),
  balances: { available: { USDT: '25.5' }, held: {} },
  heldPayments: { count: 0, total: {} },
  chains: [],
  failedCallbacks: 0,
};

describe('summary from a remote of an earlier release', () => {
  it('says the adjustments are not told, prints the rest, and asks for nothing else', async () => {
    const server = await tiny((req, res) => envelope(res, req.url?.startsWith('/api/v1/summary') ? EARLIER : null));
    const h = home();
    const [plain, json] = await Promise.all([
      h.cli(['--remote', server.url, 'summary'], { env: SIGNER }),
      h.cli(['--remote', server.url, '--json', 'summary'], { env: SIGNER }),
    ]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    // Both periods: today's and this week's.
    expect(plain.stdout.match(/^ {2}adjustments +not told by this server \(an earlier release\)$/gm)).toHaveLength(2);
    expect(plain.stdout).toMatch(/^ {2}payments +2, 30\.5 USDT$/m);
    expect(plain.stdout).toMatch(/^users hold +available 25\.5 USDT; held for withdrawals 0 USDT/m);
    // No row for what the server did not send about callbacks being retried.
    expect(plain.stdout).not.toMatch(/retrying callbacks/);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    const shown = JSON.parse(json.stdout);
    expect(shown.today).not.toHaveProperty('adjustments');
    expect(shown.today.payments).toEqual({ count: 2, total: { USDT: '30.5' } });
    // One signed read per command, nothing else asked of the server.
    expect(server.hits).toEqual(['POST /api/v1/summary', 'POST /api/v1/summary']);
  });

  it('a present but malformed adjustments field is refused, not read as missing', async () => {
    const bad = { ...EARLIER, today: { ...period(DAY), adjustments: { count: -1, credited: {}, debited: {} } } };
    const server = await tiny((_req, res) => envelope(res, bad));
    const r = await home().cli(['--remote', server.url, 'summary'], { env: SIGNER });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/adjustments/);
  });
});
