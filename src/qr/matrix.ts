import QRCode from 'qrcode';

/** A QR code as rows of dark (true) and light modules, without its quiet zone. */
export type QrMatrix = boolean[][];

/**
 * The QR code of a payment address. Level M: wallets scan it from a phone held at a screen,
 * and an address stays a small version (29 modules for an EVM address).
 */
export function qrMatrix(text: string): QrMatrix {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const rows: QrMatrix = [];
  for (let y = 0; y < modules.size; y++) {
    const row: boolean[] = [];
    for (let x = 0; x < modules.size; x++) row.push(Boolean(modules.get(x, y)));
    rows.push(row);
  }
  return rows;
}
