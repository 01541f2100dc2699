import { describe, expect, it } from 'vitest';
import { stopAll } from '../src/core/stop-all.js';

describe('stopAll (serve\'s way out)', () => {
  it('runs every step in order, also after one fails, and then throws the first failure', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const first = new Error('node went away');
    const outcome = stopAll(
      [
        ['the HTTP server', () => void ran.push('server')],
        ['the chain watcher', async () => {
          ran.push('watcher');
          throw first;
        }],
        undefined,
        ['the callback sender', () => {
          ran.push('sender');
          throw new Error('second');
        }],
        false,
        ['the address derivation thread', async () => void ran.push('pool')],
      ],
      (l) => lines.push(l),
    );
    await expect(outcome).rejects.toBe(first);
    expect(ran).toEqual(['server', 'watcher', 'sender', 'pool']);
    expect(lines).toEqual(['stopping the chain watcher failed: node went away', 'stopping the callback sender failed: second']);
  });

  it('waits for each step before the next, and reports nothing when all stop', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    await stopAll(
      [
        ['slow', () => new Promise<void>((r) => setTimeout(() => (ran.push('slow'), r()), 30))],
        ['fast', () => void ran.push('fast')],
      ],
      (l) => lines.push(l),
    );
    expect(ran).toEqual(['slow', 'fast']);
    expect(lines).toEqual([]);
  });
});
