// Reads a V8 .cpuprofile (node --cpu-prof) and prints where the time went: self time by
// function, and total (inclusive) time of the functions that hold the most.
//   node bench/flame.mjs FILE.cpuprofile [rows] [filter]
// filter: only stacks passing through a function whose name or file contains it.
import { readFileSync } from 'node:fs';

const [file, rowsArg = '30', filter] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const rows = Number(rowsArg);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(dist|node_modules|src)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
// Time per sample: the deltas, attributed to the sample's node.
const self = new Map();
const total = new Map();
let all = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0;
  let id = p.samples[i];
  const stack = [];
  while (id !== undefined) {
    stack.push(byId.get(id));
    id = parent.get(id);
  }
  if (filter && !stack.some((n) => name(n).includes(filter))) continue;
  all += dt;
  const s = name(stack[0]);
  self.set(s, (self.get(s) ?? 0) + dt);
  for (const k of new Set(stack.map(name))) total.set(k, (total.get(k) ?? 0) + dt);
}
const show = (m, title) => {
  console.log(`\n${title} (of ${(all / 1e6).toFixed(2)} s)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${((100 * v) / all).toFixed(1).padStart(5)}%  ${k}`);
};
show(self, 'self time');
show(total, 'total time');
