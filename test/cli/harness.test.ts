import { describe, expect, it } from 'vitest';
import { cliEnv, spawnCli } from '../helpers/cli.js';

/**
 * The test harness itself: a CLI that exits before reading its input (a usage error refused at
 * once) closes the pipe the harness is still writing. CI refused a session's stop on the EPIPE
 * that write raised, uncaught (test/remote/plain-http.test.ts, 2026-11-25): the command's exit
 * status and output are what a test asserts, not whether it read its stdin.
 */
describe('spawnCli', () => {
  it('a command that exits before reading its input: its result, no uncaught EPIPE', async () => {
    // More than a pipe holds, so the write is still going when the command has exited.
    const r = await spawnCli(['--remote', 'http://example.com', 'order', 'list'], cliEnv(), { input: 'x'.repeat(8 * 1024 * 1024) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/plain http/);
  });
});
