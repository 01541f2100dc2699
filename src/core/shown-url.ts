/**
 * A URL as it may be shown: the credentials in it (the merchant's, for a notifyUrl's Basic auth)
 * are never printed or answered, only `***` in their place: a password; a user name alone, which
 * is then the credential (`https://TOKEN@host`); and the value of a query parameter named like a
 * secret (`?token=`, `key`, `sig`, `auth`, `pass`...), the other common way to put one in a
 * webhook URL (an outside review). What is stored and sent keeps them.
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    let changed = false;
    if (u.password) {
      u.password = '***';
      changed = true;
    } else if (u.username) {
      u.username = '***';
      changed = true;
    }
    const search = u.search.replace(SECRET_PARAM, (_m, head: string) => `${head}***`);
    if (search !== u.search) {
      u.search = search;
      changed = true;
    }
    return changed ? u.href : url;
  } catch {
    return url;
  }
}

/** `name=value` of a parameter whose name holds one of these words, in any case: the value goes. */
const SECRET_PARAM = /([?&][^=&#]*(?:token|secret|key|sig|auth|pass|pwd|credential|session)[^=&#]*=)[^&#]*/gi;
