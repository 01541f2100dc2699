/** A path or word as one POSIX shell word: as it is when it needs no quoting, else in single quotes. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
