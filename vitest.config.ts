import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Vitest's default is one worker less than the cores: one on a 2-core machine. Most test time
    // is spent waiting on spawned CLIs, serve processes, anvil and chromium, so two files at once
    // keep both cores busy and CI inside its time (bench/ measures speed, never these tests).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
