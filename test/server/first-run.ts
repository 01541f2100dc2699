import { LangEn } from 'ethers';

const list = LangEn.wordlist();
const words = new Set(Array.from({ length: 2048 }, (_, i) => list.getWord(i)));

/**
 * The first run of 12 or more consecutive BIP-39 English words in `text` (a mnemonic has 12 to
 * 24), or undefined. No server command may print one (decisions §10).
 */
export function mnemonicIn(text: string): string | undefined {
  const tokens = text.split(/\s+/);
  let run: string[] = [];
  for (const t of [...tokens, '']) {
    if (words.has(t)) {
      run.push(t);
      continue;
    }
    if (run.length >= 12) return run.join(' ');
    run = [];
  }
  return undefined;
}
