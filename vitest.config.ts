import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Vitest's default is one worker less than the cores: one on a 2-core machine. Most test time
    // is spent waiting on spawned CLIs, serve processes, anvil and chromium, so two files at once
    // keep both cores busy (78% of a 645 s run on 2026-12-02) and CI inside its time (bench/
    // measures speed, never these tests). Three (535 s) starved the lowest-priority address
    // derivation thread that test/chains/derive-ahead.test.ts times, in two clean-clone CI runs.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
