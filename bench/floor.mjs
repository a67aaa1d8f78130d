/**
 * The floors that change detection is divided by, run as a child process of their own so
 * they start as cold as the CLI does:
 *
 *   node bench/floor.mjs walk <dir>   readdir + lstat of every file below <dir>
 *   node bench/floor.mjs hash <dir>   the same walk, then `sha256sum` of every file it found
 *   node bench/floor.mjs node-hash <dir>   the same walk, then Node's SHA-256 of every file
 *                                          (read whole, one at a time: what OpenSSL costs here)
 *
 * Prints one JSON line: { files, walkMs, hashMs, ms }, where ms runs from the walk's start to
 * the end of the hashing (hashMs is 0 for `walk`). Exits 1 on any failure.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';

const [mode, root] = process.argv.slice(2);
if (!['walk', 'hash', 'node-hash'].includes(mode) || root === undefined) {
  process.stderr.write('usage: node bench/floor.mjs <walk|hash|node-hash> <dir>\n');
  process.exit(2);
}

/** Every file below `root`: one readdir per folder, one lstat per file, as little else as possible. */
function walk(dir) {
  const files = [];
  const folders = [dir];
  while (folders.length > 0) {
    const folder = folders.pop();
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const file = `${folder}/${entry.name}`;
      if (entry.isDirectory()) folders.push(file);
      else {
        fs.lstatSync(file);
        files.push(file);
      }
    }
  }
  return files;
}

/** sha256sum of `files`, fed by xargs in as few processes as the argument limit allows; one core, as the CLI hashes. */
function sha256sum(files) {
  return new Promise((resolve, reject) => {
    const child = spawn('xargs', ['-0', 'sha256sum', '--'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`xargs sha256sum exited ${code}`))));
    child.stdin.end(files.join('\0'));
  });
}

function nodeSha256(files) {
  for (const file of files) createHash('sha256').update(fs.readFileSync(file)).digest();
}

const start = performance.now();
const files = walk(root);
const walked = performance.now();
if (mode === 'hash') await sha256sum(files);
if (mode === 'node-hash') nodeSha256(files);
const end = performance.now();
process.stdout.write(`${JSON.stringify({ files: files.length, walkMs: walked - start, hashMs: end - walked, ms: end - start })}\n`);
