/**
 * `npm run docs` (after `npm run build`): writes every generated block of the documents
 * (scripts/docs-blocks.mjs): the README's exit-status table from the one exit-status table
 * (src/outcome/exit.ts, rendered by src/report/help.ts), the tables of docs/performance.md from
 * the last bench run (bench/results.json, scripts/bench-block.mjs), and the terminal samples recorded from
 * real runs (scripts/samples.mjs). test/outcome/exit.test.ts and test/package/samples.test.ts
 * fail while a document is out of date.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitMarkdown } from '../dist/report/shortfall-words.js';
import { benchBlock } from './bench-block.mjs';
import { documents, writeBlocks } from './docs-blocks.mjs';
import { recordSamples } from './samples.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const contents = { 'exit-statuses': exitMarkdown(), 'bench-last-run': benchBlock(root), ...(await recordSamples()) };
for (const name of documents(root)) {
  const file = path.join(root, name);
  const before = fs.readFileSync(file, 'utf8');
  const after = writeBlocks(before, contents, name);
  if (after !== before) fs.writeFileSync(file, after);
  console.log(`${after === before ? 'unchanged' : 'written  '} ${name}`);
}
