import { qrMatrix } from './matrix.js';

const MARGIN = 2;
const RESET = '\u001b[0m';
// Black on white whatever the terminal's theme: a scanner needs dark modules on a light ground.
const INK_ON_PAPER = '\u001b[30;47m';

/**
 * The QR code of `text` for a terminal, two modules per character cell (half blocks). With
 * colour it is drawn black on white; without (NO_COLOR, a pipe) the glyphs are the dark modules,
 * which reads right on a light background and scans inverted on a dark one. `ascii` (TERM=dumb,
 * a terminal without Unicode blocks) draws each module as two characters, `##` or two spaces,
 * one line per row of modules: twice as tall, and still square on a terminal's tall cells.
 */
export function qrText(text: string, color: boolean, ascii = false): string {
  const m = qrMatrix(text);
  const n = m.length + 2 * MARGIN;
  const dark = (x: number, y: number) => {
    const r = m[y - MARGIN];
    return r !== undefined && r[x - MARGIN] === true;
  };
  const lines: string[] = [];
  if (ascii) {
    for (let y = 0; y < n; y++) {
      let line = '';
      for (let x = 0; x < n; x++) line += dark(x, y) ? '##' : '  ';
      lines.push(line);
    }
    return `${lines.join('\n')}\n`;
  }
  for (let y = 0; y < n; y += 2) {
    let line = '';
    for (let x = 0; x < n; x++) {
      const top = dark(x, y);
      const bottom = y + 1 < n && dark(x, y + 1);
      line += top ? (bottom ? '█' : '▀') : bottom ? '▄' : ' ';
    }
    lines.push(color ? `${INK_ON_PAPER}${line}${RESET}` : line);
  }
  return `${lines.join('\n')}\n`;
}
