import { qrModules } from './matrix.js';

/** Quiet zone in modules around the code: scanners need light space to find it. */
const MARGIN = 2;

/**
 * The QR code of `text` as an SVG element: one stroked path, a horizontal line one module wide
 * per run of dark modules. The view box starts half a module up, so a line drawn at the row's
 * index covers exactly that row; within a row each run is a relative move and a relative line
 * (`m3 0h2`): about half the bytes of a filled rectangle per run, and the payment page carries
 * two codes on every request. Holds nothing of `text` itself, only coordinates, so it is safe to
 * put into a page.
 */
export function qrSvg(text: string): string {
  const { size: n, data } = qrModules(text);
  const size = n + 2 * MARGIN;
  let d = '';
  for (let y = 0; y < n; y++) {
    const row = y * n;
    // Where the pen stands on this row (-1: not on the row yet).
    let pen = -1;
    for (let x = 0; x < n; ) {
      if (!data[row + x]) {
        x++;
        continue;
      }
      let end = x;
      while (end < n && data[row + end]) end++;
      d += pen < 0 ? `M${x + MARGIN} ${y + MARGIN}h${end - x}` : `m${x - pen} 0h${end - x}`;
      pen = end;
      x = end;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 -.5 ${size} ${size}" shape-rendering="crispEdges" aria-hidden="true" focusable="false"><rect y="-.5" width="${size}" height="${size}" fill="#fff"/><path stroke="#000" d="${d}"/></svg>`;
}
