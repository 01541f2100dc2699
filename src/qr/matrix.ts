import QRCode from 'qrcode';

/** A QR code as rows of dark (true) and light modules, without its quiet zone. */
export type QrMatrix = boolean[][];

/** A QR code as one byte per module (1 dark), row after row: `data[row * size + col]`. */
export interface QrModules {
  size: number;
  data: Uint8Array;
}

/**
 * The QR code of a payment address: level M (wallets scan it from a phone held at a screen, and
 * an address stays a small version, 29 modules), the whole text as one byte-mode segment, and
 * the mask the standard's penalty rules choose.
 *
 * The qrcode package builds it, but its mask choice (8 masks, each scored through a function
 * call per module) took ~85% of the time, and the payment page draws two codes per request:
 * ~0.4 ms per page. Here qrcode builds the symbol once with mask 0, the mask is taken off, and
 * the 8 candidates are scored on a byte array by the same rules, in the same order, with the
 * same ties, as qrcode's getBestMask: the symbol is the one qrcode makes (test/qr.test.ts checks
 * that), in about a tenth of the time. One byte-mode segment, not qrcode's optimal
 * segmentation (a shortest-path search per code): an address fits version 3 either way.
 */
export function qrModules(text: string): QrModules {
  const { modules } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], { errorCorrectionLevel: 'M', maskPattern: 0 }) as unknown as {
    modules: { size: number; data: Uint8Array; reservedBit: Uint8Array };
  };
  const { size, reservedBit: reserved } = modules;
  const data = Uint8Array.from(modules.data);
  const masks = maskTables(size);
  // Back to the unmasked symbol; the format bits are rewritten for each candidate.
  xorMask(data, reserved, masks[0]!);
  let best = 0;
  let lowest = Infinity;
  for (let p = 0; p < 8; p++) {
    writeFormat(data, size, p);
    xorMask(data, reserved, masks[p]!);
    const penalty = penaltyOf(data, size);
    xorMask(data, reserved, masks[p]!);
    if (penalty < lowest) {
      lowest = penalty;
      best = p;
    }
  }
  xorMask(data, reserved, masks[best]!);
  writeFormat(data, size, best);
  return { size, data };
}

export function qrMatrix(text: string): QrMatrix {
  const { size, data } = qrModules(text);
  const rows: QrMatrix = [];
  for (let y = 0; y < size; y++) {
    const row: boolean[] = [];
    for (let x = 0; x < size; x++) row.push(data[y * size + x] === 1);
    rows.push(row);
  }
  return rows;
}

/** The standard's 8 mask patterns as module masks, by symbol size (an address uses one or two sizes). */
const maskCache = new Map<number, Uint8Array[]>();

function maskTables(size: number): Uint8Array[] {
  let tables = maskCache.get(size);
  if (tables) return tables;
  const at = [
    (i: number, j: number) => (i + j) % 2 === 0,
    (i: number) => i % 2 === 0,
    (_i: number, j: number) => j % 3 === 0,
    (i: number, j: number) => (i + j) % 3 === 0,
    (i: number, j: number) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
    (i: number, j: number) => ((i * j) % 2) + ((i * j) % 3) === 0,
    (i: number, j: number) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
    (i: number, j: number) => (((i * j) % 3) + ((i + j) % 2)) % 2 === 0,
  ];
  tables = at.map((f) => {
    const t = new Uint8Array(size * size);
    for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) t[i * size + j] = f(i, j) ? 1 : 0;
    return t;
  });
  maskCache.set(size, tables);
  return tables;
}

function xorMask(data: Uint8Array, reserved: Uint8Array, mask: Uint8Array): void {
  for (let k = 0; k < data.length; k++) if (!reserved[k]) data[k]! ^= mask[k]!;
}

/** The 15 format bits of level M with mask `p` (BCH(15,5), XOR 0x5412), placed as qrcode places them. */
function writeFormat(data: Uint8Array, size: number, p: number): void {
  const info = p; // level M's two bits are 00
  let d = info << 10;
  for (let bit = 14; bit >= 10; bit--) if ((d >> bit) & 1) d ^= 0x537 << (bit - 10);
  const bits = ((info << 10) | d) ^ 0x5412;
  const set = (row: number, col: number, v: number) => (data[row * size + col] = v);
  for (let i = 0; i < 15; i++) {
    const v = (bits >> i) & 1;
    if (i < 6) set(i, 8, v);
    else if (i < 8) set(i + 1, 8, v);
    else set(size - 15 + i, 8, v);
    if (i < 8) set(8, size - i - 1, v);
    else if (i < 9) set(8, 15 - i, v);
    else set(8, 15 - i - 1, v);
  }
  set(size - 8, 8, 1);
}

/** The standard's penalty (N1 runs, N2 blocks, N3 finder-like patterns, N4 balance), as qrcode scores it. */
function penaltyOf(data: Uint8Array, size: number): number {
  let n1 = 0;
  let n3 = 0;
  for (let row = 0; row < size; row++) {
    let runCol = 0;
    let runRow = 0;
    let lastCol = -1;
    let lastRow = -1;
    let bitsCol = 0;
    let bitsRow = 0;
    for (let col = 0; col < size; col++) {
      const a = data[row * size + col]!;
      if (a === lastCol) runCol++;
      else {
        if (runCol >= 5) n1 += 3 + (runCol - 5);
        lastCol = a;
        runCol = 1;
      }
      const b = data[col * size + row]!;
      if (b === lastRow) runRow++;
      else {
        if (runRow >= 5) n1 += 3 + (runRow - 5);
        lastRow = b;
        runRow = 1;
      }
      bitsCol = ((bitsCol << 1) & 0x7ff) | a;
      if (col >= 10 && (bitsCol === 0x5d0 || bitsCol === 0x05d)) n3++;
      bitsRow = ((bitsRow << 1) & 0x7ff) | b;
      if (col >= 10 && (bitsRow === 0x5d0 || bitsRow === 0x05d)) n3++;
    }
    if (runCol >= 5) n1 += 3 + (runCol - 5);
    if (runRow >= 5) n1 += 3 + (runRow - 5);
  }
  let n2 = 0;
  for (let row = 0; row < size - 1; row++) {
    const r = row * size;
    for (let col = 0; col < size - 1; col++) {
      const s = data[r + col]! + data[r + col + 1]! + data[r + size + col]! + data[r + size + col + 1]!;
      if (s === 4 || s === 0) n2++;
    }
  }
  let dark = 0;
  for (let k = 0; k < data.length; k++) dark += data[k]!;
  const n4 = Math.abs(Math.ceil((dark * 100) / data.length / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + n4 * 10;
}
