/**
 * The benchmark's "build": rewrites the first N class files of a tree in place (open,
 * truncate, write, as javac does) with new bytes. Every third keeps its size and gets its
 * old whole-second mtime back (a same-size, same-mtime rewrite only ctime reveals), every
 * third keeps its size, the rest change size a little.
 *
 *   node bench/mutate.mjs <classes dir> <manifest.json> <count>
 */
import fs from 'node:fs';
import path from 'node:path';
import { classBytes } from './tree.mjs';

const [dir, manifest, countText] = process.argv.slice(2);
const files = JSON.parse(fs.readFileSync(manifest, 'utf8')).slice(0, Number(countText));
files.forEach((relative, i) => {
  const file = path.join(dir, relative);
  const before = fs.statSync(file);
  const delta = i % 3 === 2 ? (before.size > 1000 ? -7 : 7) : 0;
  fs.writeFileSync(file, classBytes(before.size + delta));
  if (i % 3 === 0) {
    const seconds = Math.floor(before.mtimeMs / 1000);
    fs.utimesSync(file, seconds, seconds);
  }
});
