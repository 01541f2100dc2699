import { qrModules } from './matrix.js';

/** Quiet zone in modules around the code: scanners need light space to find it. */
const MARGIN = 2;

/**
 * The QR code of `text` as an SVG element: one path of dark runs, a few hundred bytes for an
 * address. Holds nothing of `text` itself, only coordinates, so it is safe to put into a page.
 */
export function qrSvg(text: string): string {
  const { size: n, data } = qrModules(text);
  const size = n + 2 * MARGIN;
  let d = '';
  for (let y = 0; y < n; y++) {
    const row = y * n;
    for (let x = 0; x < n; ) {
      if (!data[row + x]) {
        x++;
        continue;
      }
      let end = x;
      while (end < n && data[row + end]) end++;
      d += `M${x + MARGIN} ${y + MARGIN}h${end - x}v1h-${end - x}z`;
      x = end;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges" aria-hidden="true" focusable="false"><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`;
}
