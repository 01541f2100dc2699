/**
 * A URL as it may be shown: a password in it (the merchant's, for a notifyUrl's Basic auth) is
 * never printed or answered, only `***` in its place. What is stored and sent keeps it.
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.href;
  } catch {
    return url;
  }
}
