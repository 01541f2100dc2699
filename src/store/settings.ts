import { eq } from 'drizzle-orm';
import type { Ledger } from './db.js';
import { settings } from './schema.js';

/** The keys the ledger keeps; one place, so a typo cannot make a second setting. */
export type SettingKey = 'public_url';

export function readSetting(ledger: Ledger, key: SettingKey): string | undefined {
  return ledger.db.select({ value: settings.value }).from(settings).where(eq(settings.key, key)).get()?.value;
}

export function writeSetting(ledger: Ledger, key: SettingKey, value: string, now: number): void {
  ledger.db
    .insert(settings)
    .values({ key, value, updatedAt: now })
    .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: now } })
    .run();
}
