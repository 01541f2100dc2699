/**
 * Whether a request's Accept-Encoding (RFC 9110 §12.5.3) takes a gzip-coded answer: `gzip` (or
 * its old alias `x-gzip`) with a weight above 0, or else `*` with a weight above 0. Codings are
 * case-insensitive; a weight that is not a number is read as 0 (not acceptable), so a malformed
 * header gets the plain answer, which every client can read. No header at all: plain.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const item of header.split(',')) {
    const [name = '', ...params] = item.split(';');
    const coding = name.trim().toLowerCase();
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    let q = 1;
    for (const p of params) {
      const [k = '', v = ''] = p.split('=');
      if (k.trim().toLowerCase() === 'q') q = /^\s*(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/.test(v) ? Number(v) : 0;
    }
    // An explicit gzip decides, whatever `*` says (RFC 9110: `*` matches codings not listed).
    if (coding !== '*') return q > 0;
    star = q > 0;
  }
  return star;
}
