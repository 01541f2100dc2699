import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { evmAddressOf, tronAddressOf } from '../../src/chains/encode.js';
import { qrMatrix } from '../../src/qr/matrix.js';
import { qrSvg } from '../../src/qr/svg.js';
import { readQr } from '../helpers/qr-decode.js';

/**
 * The SVG drawn the way a renderer draws it: the view box, then every line of the path stroked
 * one unit wide (SVG's default), each covering half a unit either side of its y. Returns the
 * dark cells of the view box, a unit square each, and the white background's extent.
 */
function paint(svg: string): { size: number; dark: boolean[][] } {
  const box = /viewBox="([-\d.]+) ([-\d.]+) (\d+) (\d+)"/.exec(svg)!;
  const [minX, minY, w, h] = box.slice(1).map(Number) as [number, number, number, number];
  expect(w).toBe(h);
  expect(svg).toContain(`<rect y="${String(minY).replace('0.', '.')}" width="${w}" height="${h}" fill="#fff"/>`);
  const d = /<path stroke="#000" d="([^"]*)"\/>/.exec(svg)![1]!;
  const dark = Array.from({ length: h }, () => Array<boolean>(w).fill(false));
  let x = 0;
  let y = 0;
  for (const [, op, a, b] of d.matchAll(/([MmHh])(-?\d+)(?: (-?\d+))?/g)) {
    const n = Number(a);
    if (op === 'M') [x, y] = [n, Number(b)];
    else if (op === 'm') [x, y] = [x + n, y + Number(b)];
    else {
      const to = op === 'h' ? x + n : n;
      // A stroke from x to `to` at height y covers the unit cells [x, to) x [y - .5, y + .5).
      for (let c = Math.min(x, to); c < Math.max(x, to); c++) dark[y - .5 - minY]![c - minX] = true;
      x = to;
    }
  }
  // Nothing of the path is left unparsed.
  expect(d.replace(/([MmHh])(-?\d+)(?: (-?\d+))?/g, '')).toBe('');
  return { size: w, dark };
}

describe('qrSvg', () => {
  it('paints exactly the symbol\'s dark modules inside a light quiet zone of two modules', () => {
    const texts = ['0x52908400098527886E0F7030069857D2E4169EE7', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'a', 'x'.repeat(60)];
    for (let i = 0; i < 100; i++) texts.push(evmAddressOf(randomBytes(20)), tronAddressOf(randomBytes(20)));
    for (const t of texts) {
      const symbol = qrMatrix(t);
      const { size, dark } = paint(qrSvg(t));
      expect(size).toBe(symbol.length + 4);
      const expected = Array.from({ length: size }, (_, y) => Array.from({ length: size }, (_, x) => symbol[y - 2]?.[x - 2] ?? false));
      expect(dark, t).toEqual(expected);
    }
  });

  it('scans back to its text', () => {
    for (const t of [evmAddressOf(randomBytes(20)), tronAddressOf(randomBytes(20))]) {
      const { size, dark } = paint(qrSvg(t));
      const scale = 6;
      const px = size * scale;
      const data = new Uint8ClampedArray(px * px * 4);
      for (let i = 0; i < px * px; i++) {
        const v = dark[Math.floor(i / px / scale)]![Math.floor((i % px) / scale)] ? 0 : 255;
        data.set([v, v, v, 255], i * 4);
      }
      expect(readQr({ data, width: px, height: px })).toBe(t);
    }
  });

  it('holds nothing of the text, only coordinates', () => {
    const t = evmAddressOf(randomBytes(20));
    expect(qrSvg(t)).not.toContain(t.slice(2, 10));
    expect(qrSvg(t)).toMatch(/^<svg [^<>]*><rect [^<>]*\/><path stroke="#000" d="[Mmh\d -]*"\/><\/svg>$/);
  });
});
