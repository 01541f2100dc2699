/**
 * A 64-bit FNV-1a-style hash over 8-byte words (the tail padded with zeros), computed by a
 * 100-byte WebAssembly module: the code cache's check that an entry's payload is the one that was
 * written. node:zlib's crc32 would load the stream machinery (~1.9 ms of every start) and
 * node:crypto ~2.7 ms; a JavaScript loop over ~500 KB runs cold in the interpreter (5-13 ms).
 * Each step (h ^ word) * odd prime is a bijection of h, so any one changed word changes the result.
 */
const MODULE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 126, 3, 2, 1, 0, 5, 3, 1, 0, 0, 7, 9, 2, 1, 109, 2, 0, 1, 104, 0, 0, 10, 62, 1, 60,
  2, 1, 127, 1, 126, 66, 165, 198, 136, 161, 200, 156, 167, 249, 75, 33, 2, 2, 64, 3, 64, 32, 1, 32, 0, 79, 13, 1, 32, 2, 32, 1, 41, 3,
  0, 133, 66, 179, 131, 128, 128, 128, 32, 126, 33, 2, 32, 1, 65, 8, 106, 33, 1, 12, 0, 11, 11, 32, 2, 11,
]);
// (func (export "h") (param $len i32) (result i64) (local $i i32) (local $h i64)
//   h = 0xcbf29ce484222325; while (i < len) { h = (h ^ i64.load(i)) * 0x100000001b3; i += 8 } h)
// with (memory (export "m") 0).

// Node's global; the project's type libraries (ES2022, no DOM) do not declare it.
declare const WebAssembly: { Instance: new (module: unknown) => { exports: unknown }; Module: new (bytes: Uint8Array) => unknown };

let wasm: { m: { buffer: ArrayBuffer; grow(pages: number): number }; h: (len: number) => bigint } | undefined;

export function wordHash(data: Uint8Array): bigint {
  wasm ??= new WebAssembly.Instance(new WebAssembly.Module(MODULE)).exports as typeof wasm;
  const { m, h } = wasm!;
  const padded = (data.length + 7) & ~7;
  const missing = padded - m.buffer.byteLength;
  if (missing > 0) m.grow(Math.ceil(missing / 65536));
  const memory = new Uint8Array(m.buffer, 0, padded);
  memory.set(data);
  memory.fill(0, data.length);
  return BigInt.asUintN(64, h(padded));
}
