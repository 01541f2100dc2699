/**
 * Text that came from elsewhere (a remote's answer, a URL typed by someone) is printed only
 * after every character that a terminal or a reader could take for something else is replaced:
 * C0/C1 controls and DEL (ANSI escapes, \r that rewrites a line, \t that shifts a column),
 * Unicode format characters (bidi overrides such as U+202E, zero-width characters), line and
 * paragraph separators, and lone surrogates. Each becomes U+FFFD, so the reader still sees
 * that something was there.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

export const REPLACEMENT = '\ufffd';

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, REPLACEMENT);
}

/** Every string inside a parsed JSON value made printable (keys included). */
export function printableDeep<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map(printableDeep) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
  }
  return value;
}
