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
// FLAME_AFTER_MS=N: only the samples taken N ms or more after the profile began (skips start-up).
// FLAME_LAST_MS=N: only the last N ms of the profile (a load run that ended with the process).
const after = process.env.FLAME_LAST_MS ? p.endTime - p.startTime - Number(process.env.FLAME_LAST_MS) * 1000 : Number(process.env.FLAME_AFTER_MS ?? 0) * 1000;
let at = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0;
  at += p.timeDeltas[i] ?? 0;
  if (at < after) continue;
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
// FLAME_PER=N: also each row's µs per unit of work, for N units done in the window (requests).
const per = Number(process.env.FLAME_PER ?? 0);
const show = (m, title) => {
  console.log(`\n${title} (of ${(all / 1e6).toFixed(2)} s)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${((100 * v) / all).toFixed(1).padStart(5)}%${per ? ` ${(v / per).toFixed(2).padStart(7)} µs` : ''}  ${k}`);
};
show(self, 'self time');
show(total, 'total time');
