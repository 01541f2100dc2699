import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RemotePaymentService } from '../../src/remote/client.js';
import { createApp } from '../../src/server/app.js';
import { openLedger } from '../../src/store/db.js';
import { LocalPaymentService } from '../../src/store/local-service.js';

it('accepts the base URL as serve prints it, with /api/v1 and a trailing slash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cryptopay-base-'));
  const service = new LocalPaymentService(openLedger(join(dir, 'l.db')), { now: Date.now, caller: { actor: 't' } });
  try {
    const { merchant, secret } = await service.addMerchant({ name: 'S', generateWallet: true });
    const app = createApp({ backend: service });
    const seen: string[] = [];
    for (const baseUrl of ['http://h', 'http://h/', 'http://h/api/v1', 'http://h/api/v1/']) {
      const remote = new RemotePaymentService({
        baseUrl, mchId: merchant.mchId, secret,
        fetch: async (url, init) => (seen.push(url), app.request(url, init)),
      });
      const order = await remote.createOrder({ oid: `o-${seen.length}`, uid: 'u1', amount: '1' });
      expect(await remote.getOrderStatus(order.id)).toBe('PENDING_PAY');
    }
    expect(seen.every((u) => u.startsWith('http://h/api/v1/') && !u.includes('/api/v1/api/v1'))).toBe(true);
    expect(seen).toHaveLength(8);
  } finally {
    service.ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
