import { fstatSync, writeSync } from 'node:fs';

/**
 * The CLI's standard output and error without Node's stream objects when the descriptor is a
 * pipe, a socket, a file or a character device that is no terminal (/dev/null): process.stdout
 * and process.stderr build a stream (~20 internal modules, ~2 ms of every command's start) to
 * do what Node itself does for these on Linux anyway, a synchronous write(2). A terminal keeps
 * Node's own stream (tty, colours, prompts), and so does any descriptor that says EAGAIN (made
 * non-blocking by whoever shares it): from then on every write of that descriptor goes through
 * the stream, after the bytes already written, so the order of the output is kept.
 */
export interface StdOutput {
  write(s: string): boolean;
}

/** Linux's terminal devices: tty and console (4, 5), and the pseudo-terminals (136-143). */
const terminalMajor = (major: number) => major === 4 || major === 5 || (major >= 136 && major <= 143);

/**
 * Whether `fd` is a terminal, without loading node:tty when the answer is plain: anything but a
 * character device is not one; on Linux a character device is one only with a terminal's major
 * number; elsewhere, and if fstat fails, `stream().isTTY` decides.
 */
export function isTerminal(fd: number, stream: () => { isTTY?: boolean }): boolean {
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return false;
    if (process.platform === 'linux') return terminalMajor(Math.floor(st.rdev / 256) & 0xfff);
  } catch {
    // Decided by the stream below.
  }
  return !!stream().isTTY;
}

/**
 * `fd` written directly while that works; `stream()` (process.stdout or process.stderr) for a
 * terminal and after EAGAIN. EPIPE (the reader went away) goes to `onEpipe`, which stops quietly
 * as the stream's error handler does; any other failure is thrown to the command that wrote.
 */
export function stdOutput(
  fd: number,
  stream: () => { write(s: string | Uint8Array): boolean; isTTY?: boolean },
  onEpipe: () => void,
  /** Whether `fd` is a terminal, when the caller already asked (isTerminal); else asked at the first write. */
  terminal?: boolean,
): StdOutput {
  let direct = terminal === undefined ? undefined : !terminal;
  return {
    write(s: string): boolean {
      direct ??= !isTerminal(fd, stream);
      if (!direct) return stream().write(s);
      let bytes = Buffer.from(s, 'utf8');
      try {
        while (bytes.length > 0) bytes = bytes.subarray(writeSync(fd, bytes));
        return true;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          onEpipe();
          return false;
        }
        if (code !== 'EAGAIN') throw e;
        direct = false;
        return stream().write(bytes);
      }
    },
  };
}
