import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDir, configDir, dataDir } from '../src/paths.js';

/** Where the CLI keeps its files: the XDG variables, else $HOME, else the account's home (node:os, loaded only then). */
describe('paths', () => {
  it('takes the XDG variables first, then $HOME, then the home directory of the account', () => {
    expect(configDir({ XDG_CONFIG_HOME: '/x/c', HOME: '/h' })).toBe('/x/c/cryptopay');
    expect(dataDir({ XDG_DATA_HOME: '/x/d', HOME: '/h' })).toBe('/x/d/cryptopay');
    expect(cacheDir({ XDG_CACHE_HOME: '/x/k', HOME: '/h' })).toBe('/x/k/cryptopay');
    expect([configDir({ HOME: '/h' }), dataDir({ HOME: '/h' }), cacheDir({ HOME: '/h' })]).toEqual(['/h/.config/cryptopay', '/h/.local/share/cryptopay', '/h/.cache/cryptopay']);
    const home = homedir();
    expect([configDir({}), dataDir({ HOME: '' }), cacheDir({})]).toEqual([join(home, '.config/cryptopay'), join(home, '.local/share/cryptopay'), join(home, '.cache/cryptopay')]);
  });
});
