import { readFileSync, statSync } from 'node:fs';
import { fileProblem, usage } from '../core/errors.js';

/** A file that may hold a secret is used only while nobody but its owner can read it. */
export function assertPrivate(path: string, what: string): void {
  const mode = statSync(path).mode;
  if (mode & 0o077) {
    throw usage(`${what} ${path} can be read by others (mode ${(mode & 0o777).toString(8)}); it may hold secrets, so it is not used: run chmod 600 ${path}`);
  }
}

export function readSecretFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  let text: string;
  try {
    assertPrivate(path, 'the secret file');
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    if ((e as { kind?: string }).kind) throw e;
    throw usage(`cannot read the secret file ${path}: ${fileProblem(e)}`);
  }
  if (!text) throw usage(`the secret file ${path} is empty`);
  return text;
}
