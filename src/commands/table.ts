/**
 * Tables for three readers (issue #15 item 4). A person at a terminal gets columns fitted to its
 * width: no borders or row dividers, hashes and addresses shortened in the middle, times
 * relative, free text cut at its end, and the least important columns left out (and named) when
 * even that does not fit. A script gets every value whole: tab-separated with a header row when
 * piped, or CSV for a spreadsheet. Pure functions of the rows; output.ts decides which one runs.
 */

export type Cell = string | number | boolean | null | undefined;

/** A column: its header, and how it may give way on a narrow terminal. */
export interface Column {
  name: string;
  /**
   * Which columns go first when the table cannot fit: the lowest. Default: the further right,
   * the lower. A column of ids is never left out (an id is what the next command needs).
   */
  priority?: number;
  /**
   * Free text (a remark, a name, an error): may be cut at its end, marked with …, down to
   * `minWidth` (default 10). Other columns are never cut: a cut chain id or amount would mislead.
   */
  text?: boolean;
  minWidth?: number;
  /**
   * Details that read best whole: when the table does not fit, this column leaves the row and
   * is written under it, indented and wrapped (the audit log's details).
   */
  below?: boolean;
}

export interface TerminalOptions {
  width: number;
  now: number;
  /** TERM=dumb: plain ASCII (no …, no U+FFFD). */
  ascii: boolean;
  /** Wraps a header in bold, when colour is on. */
  bold?: (s: string) => string;
}

const GAP = 2;
const EMPTY = '-';

const show = (v: Cell): string => (v === null || v === undefined || v === '' ? EMPTY : String(v));

// ------------------------------------------------------------------ what a cell holds

/** Our own ids: `ord_`, `wd_`, `rf_` + time + random. Never shortened: the next command needs them whole. */
const ID = /^(?:ord|wd|rf|evt)_[0-9A-Za-z_-]{20,40}$/;
/** What output.ts's formatTime writes. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z$/;
/** Transaction hashes (EVM 0x + 64, TRON 64 hex), EVM addresses, TRON addresses, in any text. */
const LONG_TOKEN = /\b0x[0-9a-fA-F]{64}\b|\b0x[0-9a-fA-F]{40}\b|\b[0-9a-fA-F]{64}\b|\bT[1-9A-HJ-NP-Za-km-z]{33}\b/g;
/** Control, format and separator characters: a terminal could act on them (an ESC in a remark). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** 0x1234…abcd: the ends a person compares with a block explorer or a wallet. */
export function shortenMiddle(s: string, ascii: boolean): string {
  const head = s.startsWith('0x') ? 6 : 5;
  return `${s.slice(0, head)}${ascii ? '...' : '…'}${s.slice(-4)}`;
}

/** "3 min ago", "in 25 min": enough to tell recent from old and pending from expired. */
export function relativeTime(ms: number, now: number): string {
  const d = now - ms;
  const a = Math.abs(d);
  const say = (n: number, unit: string) => (d >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (a < 60_000) return d >= 0 ? 'just now' : `in ${Math.max(1, Math.floor(a / 1000))} s`;
  if (a < 3_600_000) return say(Math.floor(a / 60_000), 'min');
  if (a < 48 * 3_600_000) return say(Math.floor(a / 3_600_000), 'h');
  if (a < 60 * 86_400_000) return say(Math.floor(a / 86_400_000), 'd');
  return new Date(ms).toISOString().slice(0, 10);
}

/** A cell as a person at a terminal reads it. */
function terminalCell(v: Cell, o: TerminalOptions): string {
  const s = show(v).replace(UNPRINTABLE, o.ascii ? '?' : '\ufffd');
  if (ISO_TIME.test(s)) return relativeTime(Date.parse(s), o.now);
  if (ID.test(s)) return s;
  // The audit log's subject `withdrawal:wd_…`: the id's own prefix already names its kind.
  const subject = /^(?:order|withdrawal|refund):(.+)$/.exec(s);
  if (subject && ID.test(subject[1]!)) return subject[1]!;
  return s.replace(LONG_TOKEN, (t) => shortenMiddle(t, o.ascii));
}

/**
 * Words wrapped to `width` columns; a word longer than that is cut into pieces, or with `whole`
 * stands alone on its line (a hash or an address the user copies must never be broken).
 */
export function wrap(s: string, width: number, whole = false): string[] {
  const lines: string[] = [];
  let cur = '';
  for (let word of s.split(' ')) {
    while (!whole && displayWidth(word) > width) {
      if (cur) lines.push(cur);
      cur = '';
      let piece = '';
      for (const ch of word) {
        if (displayWidth(piece + ch) > width) break;
        piece += ch;
      }
      lines.push(piece);
      word = word.slice(piece.length);
    }
    if (!cur) cur = word;
    else if (displayWidth(`${cur} ${word}`) <= width) cur += ` ${word}`;
    else {
      lines.push(cur);
      cur = word;
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

// ------------------------------------------------------------------ display width

/** Columns a string takes on a terminal: East Asian wide and emoji take two, combining marks none. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (/\p{Mn}|\p{Me}|\u200b/u.test(ch)) continue;
    w += isWide(c) ? 2 : 1;
  }
  return w;
}

function isWide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0x303e) || (c >= 0x3041 && c <= 0x33ff) ||
    (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xa000 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
    (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd)
  );
}

/** Cut at the end to `width` columns, marking the cut. */
function cutEnd(s: string, width: number, ascii: boolean): string {
  if (displayWidth(s) <= width) return s;
  const mark = ascii ? '...' : '…';
  const room = width - mark.length;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = displayWidth(ch);
    if (w + cw > room) break;
    out += ch;
    w += cw;
  }
  return out + mark;
}

const pad = (s: string, width: number) => s + ' '.repeat(Math.max(0, width - displayWidth(s)));

// ------------------------------------------------------------------ the terminal table

export interface TerminalTable {
  lines: string[];
  /** Names of the columns left out to fit the width. */
  hidden: string[];
}

export function terminalTable(columns: Column[], rows: Cell[][], o: TerminalOptions): TerminalTable {
  const header = columns.map((c) => c.name.toUpperCase());
  const body = rows.map((r) => columns.map((_, i) => terminalCell(r[i], o)));
  const n = columns.length;
  const natural = columns.map((_, i) => Math.max(displayWidth(header[i]!), ...body.map((r) => displayWidth(r[i]!))));
  const fixed = columns.map((c) => !c.text);
  const isId = columns.map((_, i) => body.some((r) => ID.test(r[i]!)) && body.every((r) => r[i] === EMPTY || ID.test(r[i]!)));
  const widths = [...natural];
  const shown = new Array<boolean>(n).fill(true);
  const total = () => widths.reduce((sum, w, i) => sum + (shown[i] ? w : 0), 0) + GAP * (shown.filter(Boolean).length - 1);
  // 0. Details that do not fit go under their row.
  const below = total() > o.width ? columns.findIndex((c) => c.below) : -1;
  if (below >= 0) shown[below] = false;

  // 1. Free text gives way first: the widest text column loses a column at a time.
  const floor = (i: number) => Math.min(natural[i]!, Math.max(displayWidth(header[i]!), columns[i]!.minWidth ?? 10));
  while (total() > o.width) {
    let widest = -1;
    for (let i = 0; i < n; i++) if (shown[i] && !fixed[i] && widths[i]! > floor(i) && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]!--;
  }
  // 2. Then whole columns go, the least important first; never the first column nor ids.
  const hidden: string[] = [];
  const order = columns
    .map((c, i) => ({ i, p: c.priority ?? -i }))
    .filter(({ i }) => i > 0 && !isId[i])
    .sort((a, b) => a.p - b.p);
  for (const { i } of order) {
    if (total() <= o.width) break;
    shown[i] = false;
    hidden.push(columns[i]!.name);
  }
  // Hiding a column may leave room that free text can take back.
  for (let i = 0; i < n; i++) {
    if (!shown[i] || fixed[i]) continue;
    widths[i] = Math.min(natural[i]!, widths[i]! + Math.max(0, o.width - total()));
  }

  const line = (cells: string[], head = false) => {
    const parts: string[] = [];
    const last = cells.reduce((l, _, i) => (shown[i] ? i : l), -1);
    cells.forEach((c, i) => {
      if (!shown[i]) return;
      const text = cutEnd(c, widths[i]!, o.ascii);
      const padded = i === last ? text : pad(text, widths[i]!);
      parts.push(head && o.bold ? o.bold(padded) : padded);
    });
    return parts.join(' '.repeat(GAP)).trimEnd();
  };
  const indent = '    ';
  const lines = [line(header, true)];
  for (const r of body) {
    lines.push(line(r));
    if (below >= 0 && r[below] !== EMPTY) lines.push(...wrap(r[below]!, Math.max(20, o.width - indent.length)).map((l) => indent + l));
  }
  return { lines, hidden };
}

// ------------------------------------------------------------------ for scripts

/**
 * A value as a pipe gets it: one line, nothing a terminal further down could act on. A tab,
 * newline or carriage return is written as \t, \n, \r and a backslash as \\ (PostgreSQL's text
 * format); any other control character, a line or paragraph separator, a lone surrogate or a
 * bidirectional override (text that reads in another order than it is stored) as \u and its
 * four hex digits. Every value comes back exactly.
 */
export function escapeForPipe(value: string): string {
  return value.replace(PIPE_UNSAFE, (c) => NAMED_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
const PIPE_UNSAFE = /[\\\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const NAMED_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const CSV_UNSAFE = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** Tab-separated, whole values (escapeForPipe), a header row: every row is one line. */
export function tsv(columns: Column[], rows: Cell[][]): string {
  const esc = (v: Cell) => escapeForPipe(show(v));
  return [columns.map((c) => c.name), ...rows.map((r) => columns.map((_, i) => r[i]))].map((r) => `${r.map(esc).join('\t')}\n`).join('');
}

/**
 * RFC 4180 CSV with a header row, for spreadsheets. An empty value stays empty (not "-").
 * A cell that a spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage
 * return, perhaps after spaces) gets a leading apostrophe, so it is shown as the text it is:
 * an oid, uid, memo or remark is written by whoever created the order, and `=HYPERLINK(…)` or a
 * DDE call must not run on an operator's machine. A plain number (`-5`, `+2.5`) is left alone:
 * a spreadsheet reads it as the number it is.
 */
export function csv(columns: Column[], rows: Cell[][]): string {
  const cell = (v: Cell) => {
    // Control and direction characters of stored text become U+FFFD, a line break and a tab
    // excepted (a quoted cell keeps them for the spreadsheet): a terminal that shows the file
    // would act on an ESC, an OSC 52 clipboard write or a carriage return (an attacker review).
    let s = v === null || v === undefined ? '' : String(v).replace(CSV_UNSAFE, (c) => (c === '\n' || c === '\t' ? c : '\ufffd'));
    if (/^[\s]*[=+\-@\t\r]/.test(s) && !/^[+-]?\d+(\.\d+)?$/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map((c) => c.name), ...rows.map((r) => columns.map((_, i) => r[i]))].map((r) => `${r.map(cell).join(',')}\r\n`).join('');
}
