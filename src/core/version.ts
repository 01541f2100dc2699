import { readFileSync } from 'node:fs';

/**
 * This build's version and the ledger schema it writes. Both files are read from the package:
 * this module sits two levels below the package root in src/ and in dist/bundle alike (as
 * src/store/db.ts finds its migrations), so no build step has to copy a number around.
 */
const root = new URL('../../', import.meta.url);

let version: string | undefined;
export function appVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version;
  return version;
}

let schema: number | undefined;
/** How many migrations this build knows: what `PRAGMA user_version` of an up-to-date ledger says. */
export function schemaVersion(): number {
  schema ??= (JSON.parse(readFileSync(new URL('src/store/migrations/meta/_journal.json', root), 'utf8')) as { entries: unknown[] }).entries.length;
  return schema;
}
