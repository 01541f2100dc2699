/**
 * The user name and password of a URL, decoded: a notifyUrl's are sent as Basic auth
 * (src/callbacks/deliver.ts), and create order refuses those that do not decode
 * (src/core/schemas.ts). Undefined when the URL has neither; throws URIError when either is not
 * valid percent-encoding (`http://%zz@host`).
 */
export function urlCredentials(u: URL): { user: string; password: string } | undefined {
  if (!u.username && !u.password) return undefined;
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
}
