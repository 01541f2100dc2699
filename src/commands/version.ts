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
  // Where the operations go: with a remote in effect (--remote, CRYPTOPAY_REMOTE, a profile) the
  // local ledger is not the one the commands use, and the report says so.
  let remote: { url: string; source: string } | { error: string } | null = null;
  try {
    const { resolveRemote } = await import('../remote/target.js');
    const r = resolveRemote(ctx.globals, ctx.env);
    if (r) remote = { url: r.url, source: r.source };
  } catch (e) {
    remote = { error: (e as Error).message };
  }
  const info = { version: appVersion(), schema: schemaVersion(), node: process.versions.node, ledger: { path, exists: existsSync(path), schema: ledgerSchema }, remote };
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
    ...whereOperationsGo(remote, ledgerLine),
  ]);
}

/** The ledger the commands use, or the remote they go to and the local ledger beside it. */
function whereOperationsGo(remote: { url: string; source: string } | { error: string } | null, ledgerLine: string): [string, string][] {
  if (remote === null) return [['ledger', ledgerLine]];
  const to = 'url' in remote ? `${remote.url} (${remote.source}): every command that has a remote form goes there` : `cannot be used: ${remote.error}`;
  return [['remote', to], ['local ledger', ledgerLine]];
}
