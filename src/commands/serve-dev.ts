import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { sign } from '../signing/index.js';
import type { LocalPaymentService } from '../store/local-service.js';
import { warn } from './output.js';

/** What `serve --dev` set up: told to the developer once the server listens, undone when it stops. */
export interface DevMode {
  announce(url: string): void;
  close(): Promise<void>;
}

/**
 * `serve --dev`: everything a developer needs to try the service on this machine, and the one
 * place to extend it (a local chain to pay on belongs here too). On an empty ledger it creates
 * a development merchant with a generated wallet. The wallet's words are dropped unseen: no
 * server command prints a mnemonic (decisions §10), so its addresses are for trying the flow,
 * never for real funds.
 */
export async function startDev(ctx: Context, service: LocalPaymentService, err: (s: string) => void): Promise<DevMode> {
  let merchant: { mchId: string; secret: string } | undefined;
  if (service.countMerchants() === 0) {
    const created = await service.addMerchant({ name: 'Development merchant', generateWallet: true });
    merchant = { mchId: created.merchant.mchId, secret: created.secret };
  }
  return {
    announce(url) {
      if (merchant) printDevMerchant(ctx, err, url, merchant);
      else {
        err('development mode: the ledger already has a merchant, so none was created');
        err(`sign requests with a merchant's secret: cryptopay sign --fill --mch-id M... key=value ...`);
      }
    },
    async close() {},
  };
}

function printDevMerchant(ctx: Context, err: (s: string) => void, url: string, m: { mchId: string; secret: string }): void {
  const body = {
    mchId: m.mchId,
    oid: `demo-${ctx.now()}`,
    uid: 'user-1',
    amount: '12.50',
    timestamp: ctx.now(),
    nonce: randomBytes(12).toString('hex'),
  };
  const signed = JSON.stringify({ ...body, sign: sign(body, m.secret) });
  err('');
  err('The ledger was empty, so a development merchant was created:');
  err(`  mchId   ${m.mchId}`);
  err(`  secret  ${m.secret}`);
  err('  wallet  a development wallet generated for this ledger; its words are not shown and not kept');
  void warn(ctx, '  Nobody can spend what is sent to its addresses: never send real funds to them.');
  err('');
  err('Create an order (signed now, valid for 5 minutes):');
  err(`  curl -s -X POST ${url}/api/v1/order -H 'Content-Type: application/json' -d '${signed}'`);
  err('');
  err('Sign your own bodies:');
  err(`  CRYPTOPAY_SECRET=<secret> cryptopay sign --fill --mch-id ${m.mchId} oid=A-1 uid=u1 amount=10 --json`);
  err('');
}
