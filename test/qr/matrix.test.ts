import { randomBytes } from 'node:crypto';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { evmAddressOf, tronAddressOf } from '../../src/chains/encode.js';
import { qrMatrix } from '../../src/qr/matrix.js';

/** What the qrcode package itself makes of the text (one byte segment, level M, its own mask choice). */
function reference(text: string): boolean[][] {
  const { modules } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], { errorCorrectionLevel: 'M' });
  return Array.from({ length: modules.size }, (_, y) => Array.from({ length: modules.size }, (_, x) => Boolean(modules.get(y, x))));
}

describe('qrMatrix', () => {
  it('is the symbol qrcode makes, mask choice included, for EVM and TRON addresses and other texts', () => {
    const texts = ['0x52908400098527886E0F7030069857D2E4169EE7', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'a', 'x'.repeat(60), 'https://example.com/pay/ord_123'];
    for (let i = 0; i < 300; i++) texts.push(evmAddressOf(randomBytes(20)));
    for (let i = 0; i < 300; i++) texts.push(tronAddressOf(randomBytes(20)));
    const masks = new Set<number>();
    for (const t of texts) {
      expect(qrMatrix(t), t).toEqual(reference(t));
      masks.add(QRCode.create([{ data: Buffer.from(t, 'utf8'), mode: 'byte' }], { errorCorrectionLevel: 'M' }).maskPattern!);
    }
    // The texts exercise every mask the penalty can choose, not one by luck.
    expect(masks.size).toBe(8);
  });
});
