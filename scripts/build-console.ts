// Writes the console's static files to console/dist (index.html, console.css, console.js) for a deploy beside the
// API, and prints their sizes, gzipped as a browser downloads them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildConsole } from '../lib/local/console-site';

const out = join(process.cwd(), 'console', 'dist');
mkdirSync(out, { recursive: true });
let total = 0;
for (const [name, file] of buildConsole()) {
  writeFileSync(join(out, name), file.body);
  const gz = gzipSync(file.body).length;
  total += gz;
  console.log(`${name.padEnd(12)} ${String(file.body.length).padStart(7)} B  ${String(gz).padStart(6)} B gzipped`);
}
console.log(`${'total'.padEnd(12)} ${' '.repeat(9)}  ${String(total).padStart(6)} B gzipped (first load)`);
