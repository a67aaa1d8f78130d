/**
 * The generated blocks of the documents: text between `<!-- generated: <id> -->` and
 * `<!-- /generated -->` on lines of their own, written by `npm run docs` (scripts/docs.mjs) and
 * checked by the tests (test/package/samples.test.ts, test/outcome/exit.test.ts). One id may
 * appear in several places; every place gets the same text.
 */
import fs from 'node:fs';
import path from 'node:path';

const BLOCK = /^<!-- generated: ([a-z0-9-]+) -->\n([\s\S]*?)\n?<!-- \/generated -->$/gm;

/**
 * The documents that may hold generated blocks, relative to `root`: README.md, CONTRIBUTING.md
 * and every docs/*.md. (bench/README.md is written by the bench's own report.)
 * @param {string} root the checkout
 * @returns {string[]}
 */
export function documents(root) {
  const docs = fs.existsSync(path.join(root, 'docs')) ? fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')) : [];
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort().map((f) => `docs/${f}`)].filter((f) => fs.existsSync(path.join(root, f)));
}

/**
 * Every generated block of `text`, in order.
 * @param {string} text a Markdown document
 * @returns {{ id: string, body: string }[]} `body` without the marker lines
 */
export function readBlocks(text) {
  return [...text.matchAll(BLOCK)].map((m) => ({ id: m[1], body: m[2] }));
}

/**
 * `text` with every generated block's body replaced by `contents[id]`.
 * @param {string} text a Markdown document
 * @param {Record<string, string>} contents block id -> its text
 * @param {string} name the document's name, for the error
 * @returns {string}
 * @throws {Error} for a block whose id `contents` does not have
 */
export function writeBlocks(text, contents, name) {
  return text.replace(BLOCK, (_all, id) => {
    if (!(id in contents)) throw new Error(`${name}: no generator for the block "${id}" (scripts/samples.mjs, scripts/docs.mjs)`);
    return `<!-- generated: ${id} -->\n${contents[id]}\n<!-- /generated -->`;
  });
}
