import { createRequire } from 'node:module';

type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

/** jsQR is CommonJS whose typings declare an ES default export; take the function itself. */
const jsQR = createRequire(import.meta.url)('jsqr') as JsQr;

/** The text of the QR code in an RGBA image, or null when none is found. */
export function readQr(img: { data: Uint8ClampedArray; width: number; height: number }): string | null {
  return jsQR(img.data, img.width, img.height)?.data ?? null;
}
