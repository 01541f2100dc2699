import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * Copies test/fixtures/NAME (a ledger an earlier release wrote) to `path`, 0600 as cryptopay
 * requires of a ledger; the fixture itself is never opened.
 */
export function copyFixture(name: string, path: string): void {
  copyFileSync(new URL(`../fixtures/${name}`, import.meta.url), path);
  chmodSync(path, 0o600);
}

/**
 * Registers the cleanup after each test and returns a function that copies fixture NAME into a
 * fresh temporary folder and answers the copy's path.
 */
export function useFixtureCopies(name: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'cryptopay-fixture-'));
    dirs.push(dir);
    const file = join(dir, 'ledger.db');
    copyFixture(name, file);
    return file;
  };
}
