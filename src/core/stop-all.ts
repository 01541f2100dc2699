/** One thing to stop: its name (for the report when it fails) and how. */
export type StopStep = readonly [name: string, stop: () => unknown];

/**
 * Stops every part in order, each even when one before it failed: a watcher that throws on its
 * way out must not leave the derivation thread running or the ledger open. Each failure is
 * reported with the part's name; once all have run, the first is thrown, so the process still
 * exits saying it did not stop cleanly.
 */
export async function stopAll(steps: readonly (StopStep | undefined | false)[], report: (line: string) => void): Promise<void> {
  let first: { error: unknown } | undefined;
  for (const step of steps) {
    if (!step) continue;
    const [name, stop] = step;
    try {
      await stop();
    } catch (e) {
      report(`stopping ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
      first ??= { error: e };
    }
  }
  if (first) throw first.error;
}
