// tsc builds dist/ incrementally (tsconfig.build.json: dist/.tsbuildinfo), and an incremental
// build trusts its record: an output deleted by hand (or `rm -rf dist/*`, which leaves the
// dotfile) is not written again. So before tsc runs, the record is dropped when any source's
// output is missing, and that build is a whole one.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const RECORD = 'dist/.tsbuildinfo';
const missing = (dir) =>
  readdirSync(dir, { withFileTypes: true }).some((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return missing(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !existsSync(join('dist', path.slice('src/'.length).replace(/\.ts$/, '.js')));
  });
if (existsSync(RECORD) && missing('src')) rmSync(RECORD);
