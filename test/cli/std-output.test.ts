import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTerminal, stdOutput } from '../../src/std-output.js';

const dir = mkdtempSync(join(tmpdir(), 'cryptopay-std-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stream stand-in that records what reached it (what process.stdout would have written). */
const recorder = () => {
  const got: string[] = [];
  return { got, stream: () => ({ write: (s: string | Uint8Array) => (got.push(Buffer.from(s).toString('utf8')), true) }) };
};

/** A real FIFO opened read-write and non-blocking (no reader needed on Linux), and a reader of it. */
function fifo(name: string): { fd: number; drain(): string; close(): void } {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  return {
    fd,
    drain() {
      const chunks: Buffer[] = [];
      const b = Buffer.alloc(65536);
      for (;;) {
        try {
          const n = readSync(fd, b);
          if (n === 0) break;
          chunks.push(Buffer.from(b.subarray(0, n)));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw e;
        }
      }
      return Buffer.concat(chunks).toString('utf8');
    },
    close: () => closeSync(fd),
  };
}

describe.skipIf(process.platform !== 'linux')('standard output without Node\'s streams', () => {
  it('writes a pipe directly, and a file, and /dev/null; none of them is a terminal', () => {
    const p = fifo('direct');
    const r = recorder();
    const out = stdOutput(p.fd, r.stream, () => {});
    out.write('first line\n');
    out.write('ünïcödé ✓\n');
    expect(p.drain()).toBe('first line\nünïcödé ✓\n');
    expect(r.got).toEqual([]);
    expect(isTerminal(p.fd, () => ({ isTTY: true }))).toBe(false);
    p.close();
    const devNull = openSync('/dev/null', 'w');
    expect(isTerminal(devNull, () => ({ isTTY: true }))).toBe(false);
    closeSync(devNull);
  });

  it('a descriptor that says EAGAIN goes on through the stream, after what was written, nothing lost or repeated', () => {
    const p = fifo('full');
    // More than the pipe holds: part of it is written directly, the rest says EAGAIN.
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join('');
    const r = recorder();
    const out = stdOutput(p.fd, r.stream, () => {});
    out.write(text);
    out.write('after\n');
    const inPipe = p.drain();
    expect(inPipe.length).toBeGreaterThan(0);
    expect(r.got.length).toBe(2);
    // What the pipe took, then what the stream took, is exactly what was written, in order.
    expect(inPipe + r.got.join('')).toBe(`${text}after\n`);
    p.close();
  });

  it('a reader gone away (EPIPE) is handed to its handler, not thrown', () => {
    const path = join(dir, 'gone');
    execFileSync('mkfifo', [path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    let gone = 0;
    const r = recorder();
    expect(stdOutput(writer, r.stream, () => gone++).write('lost\n')).toBe(false);
    expect(gone).toBe(1);
    expect(r.got).toEqual([]);
    closeSync(writer);
  });
});
