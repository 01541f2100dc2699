/**
 * HTML built by a tagged template that escapes every interpolation by construction: a value
 * becomes markup only by being wrapped in `Html` by this module, never by accident. Merchant
 * values (memo, oid, logo, redirect URL) can therefore only ever be text or attribute data.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escaped for text and for quoted attribute values alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | bigint | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  // false, null and undefined render nothing, so `${cond && html`...`}` reads naturally.
  if (part === null || part === undefined || part === false) return '';
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/**
 * A merchant's text in a sentence of the page, escaped and in <bdi>: a bidirectional override or
 * a right-to-left run inside it ends at its end and cannot reorder the page's own words around
 * it (a name ending in U+202E would otherwise reverse the rest of "contact ... with order number").
 */
export function isolated(value: string): Html {
  return new Html(`<bdi>${escapeHtml(value)}</bdi>`);
}

/**
 * Markup this program made itself (a QR code's SVG, a hashed inline script): the one way
 * around escaping, for text that never holds a merchant's value.
 */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** An http(s) URL as a string fit for href/src, or undefined for anything else (javascript:, data:, junk). */
export function httpUrl(value: string | null | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}
