import { existsSync } from 'node:fs';
import type { Context } from '../context.js';
import { appVersion, schemaVersion } from '../core/version.js';
import { printJson, printRecord } from './output.js';

/**
 * What a bug report needs: this build, the ledger schema it writes, and the schema of the ledger
 * this command would use (read only: `version` never creates or migrates a ledger).
 */
export async function run(ctx: Context): Promise<void> {
  const { resolveLedgerPath, sqliteAddon } = await import('../store/db.js');
  const path = resolveLedgerPath(ctx.globals.db, ctx.env);
  let ledgerSchema: number | null = null;
  if (existsSync(path)) {
    const Database = (await import('better-sqlite3')).default;
    try {
      const db = new Database(path, { readonly: true, fileMustExist: true, nativeBinding: sqliteAddon() });
      try {
        ledgerSchema = Number(db.pragma('user_version', { simple: true }));
      } finally {
        db.close();
      }
    } catch {
      ledgerSchema = null;
    }
  }
  const info = { version: appVersion(), schema: schemaVersion(), node: process.versions.node, ledger: { path, exists: existsSync(path), schema: ledgerSchema } };
  if (ctx.globals.json) return printJson(ctx, info);
  const ledgerLine = !info.ledger.exists
    ? `${path} (none yet)`
    : ledgerSchema === null
      ? `${path} (not readable as a ledger)`
      : `${path} (schema ${ledgerSchema}${ledgerSchema < info.schema ? ', migrated when next opened' : ledgerSchema > info.schema ? ', newer than this build' : ''})`;
  await printRecord(ctx, [
    ['cryptopay', info.version],
    ['ledger schema', String(info.schema)],
    ['node', info.node],
    ['ledger', ledgerLine],
  ]);
}
