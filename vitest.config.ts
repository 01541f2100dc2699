import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Vitest's default is one worker less than the cores: one on a 2-core machine. Most test time
    // is spent waiting on spawned CLIs, serve processes, anvil and chromium: with two files at once
    // the two cores were busy 78% of the suite (645 s on 2026-12-02), with three 91% (535 s, the
    // same 2,036 tests passing), which keeps CI inside its 15 minutes on the slower days this
    // machine has (bench/ measures speed, never these tests).
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
