import type { ChainType } from './types.js';

/** "a loopback", "an unspecified", "an EVM", "a TRON": a word with its indefinite article. */
export const withArticle = (word: string) => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;

/** One address in two spellings: EVM's hex in any case, TRON's base58check exactly as written. */
export const sameAddress = (chainType: ChainType, a: string, b: string) => (chainType === 'EVM' ? a.toLowerCase() === b.toLowerCase() : a === b);
