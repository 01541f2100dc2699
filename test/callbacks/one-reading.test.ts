import { describe, expect, it } from 'vitest';
import { signedEventBody } from '../../src/callbacks/event.js';
import { canonicalString } from '../../src/signing/index.js';
import type { EventFields } from '../../src/store/outbox.js';
import { USDT, addShopMerchant, evmTx, paidOrder, useHarness } from '../helpers/service.js';

/**
 * A signed callback has one reading (docs/decisions.md, "Why a signed body has one reading"):
 * no value in it holds "&", so every "&" of its canonical string is a boundary between two
 * fields, every name runs to the first "=", and the string gives back the body and nothing else.
 * A merchant verifying a callback accepts any field names, so the request side's rule (no
 * "&<field>=" for the endpoint's own fields) is not enough here.
 */
function readBack(body: Record<string, unknown>): Record<string, string> {
  const secretless = canonicalString(body);
  return Object.fromEntries(secretless.split('&').map((piece) => {
    const at = piece.indexOf('=');
    return [piece.slice(0, at), piece.slice(at + 1)];
  }));
}

const asStrings = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([k, v]) => k !== 'sign' && v !== '' && v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));

describe('every callback the service signs reads back as itself', () => {
  const h = useHarness();

  it('order.paid, order.refunded, withdraw.confirmed and withdraw.rejected, with the oddest oid, uid and remarks the service accepts', async () => {
    const { service } = h();
    const m = await addShopMerchant(service);
    // Each text is tried with and without "&": whatever the service accepts goes into callbacks.
    const odd = 'a=b?c;d,e/f%26g+h#i=j k|l';
    const texts = [odd, `${odd}&paidAmount=1000&paidAmountX=x`, `${odd}&zz`];
    const accepted = async (op: () => Promise<unknown>) => {
      try {
        await op();
        return true;
      } catch (e) {
        if ((e as { kind?: string }).kind !== 'invalid') throw e;
        return false;
      }
    };
    let n = 0;
    for (const t of texts) {
      n++;
      const uid = `u${n}=${t}`;
      if (!(await accepted(() => paidOrder(service, { oid: `o${n}=${t}`, uid, amount: '10', notifyUrl: 'https://shop.example/cb?x=1&y=2' })))) continue;
      const [o] = await service.listOrders({ uid });
      await accepted(() => service.refund({ id: o!.id, amount: '1', remark: `r=${t}` }));
      await service.adjustBalance({ uid, amount: '100', reason: 'seed' });
      const apply = () => service.applyWithdrawal({ uid, amount: '1', to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chainId: 1, chainType: 'EVM', token: USDT.ETH, notifyUrl: 'https://shop.example/w?a=1&b=2' });
      const w1 = await apply();
      await service.confirmWithdrawal({ logId: w1.id, txHash: evmTx(0xabc + n), blockNumber: 5 });
      const w2 = await apply();
      await accepted(() => service.rejectWithdrawal({ id: w2.id, remark: `no=${t}` }));
    }
    const events = await service.listCallbacks({ limit: 100 });
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['order.paid', 'order.refunded', 'withdraw.confirmed', 'withdraw.rejected']));
    for (const e of events) {
      const body = signedEventBody((await service.showCallback(e.id)).payload as EventFields, m.mchId, m.secret, Date.now());
      expect(readBack(body), e.event).toEqual(asStrings(body));
    }
  });
});
