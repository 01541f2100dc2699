/**
 * A JSON object that gives a key twice. JSON.parse keeps the last value; other readers keep the
 * first or refuse the text, so a body with `"amount":"1"` before `"amount":"1000"` would be one
 * order to a proxy, a firewall or a log in front of the server and another to the server. The
 * signature cannot tell them apart (it is computed over what one reader kept). Bodies that give
 * a key twice are refused wherever a body is read (the server, `sign`, `listen`).
 */
export const duplicateRefusal = (key: string) => `field ${key} is given twice in the body: JSON readers disagree on which one counts`;

/**
 * The first key given twice in the outermost object of `text`, a valid JSON object that
 * JSON.parse read into `parsed`; undefined when there is none. Keys are compared as JSON.parse
 * reads them, so `"amount"` and `"am\u006funt"` are the same key. Keys of nested objects are
 * not the outer object's.
 *
 * One pass over the text counts the outer object's keys (a `:` at depth 1, outside strings);
 * only when they outnumber the parsed object's are they read one by one, to name the repeat.
 */
export function duplicateKey(text: string, parsed: object): string | undefined {
  const count = outerKeys(text, undefined);
  if (count <= Object.keys(parsed).length) return undefined;
  let repeat: string | undefined;
  const seen = new Set<string>();
  outerKeys(text, (key) => {
    if (repeat === undefined && seen.has(key)) repeat = key;
    seen.add(key);
  });
  return repeat;
}

function outerKeys(text: string, each: ((key: string) => void) | undefined): number {
  let depth = 0;
  let count = 0;
  let stringStart = 0;
  let stringEnd = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, over escapes.
      stringStart = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      stringEnd = i + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x3a && depth === 1) {
      count++;
      each?.(JSON.parse(text.slice(stringStart, stringEnd)) as string);
    }
  }
  return count;
}
