/**
 * The class index file: something other than a regular file in its place is never opened (a
 * FIFO would block the run for good) and never replaced; reading it only means hashing again.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';
import { names, scratch, thrownBy } from './helpers.js';

describe('classes.idx that is not a regular file', () => {
  it.each([
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file])],
    ['a folder', (file: string) => fs.mkdirSync(file)],
  ])('%s: read with a warning as an empty index without blocking; not replaced by a write', (_, make) => {
    const project = scratch();
    const file = path.join(project, '.reclazz', 'classes.idx');
    fs.mkdirSync(path.dirname(file));
    make(file);
    const warnings: string[] = [];
    expect(readClassIndex(project, (m) => warnings.push(m)).paths).toEqual([]);
    expect(warnings).toEqual([`cannot read ${file} (it is not a regular file); ignoring it`]);
    expect(thrownBy(() => writeClassIndex(project, indexOf(2))).message).toBe(`cannot write ${file} (it is not a regular file: move it away)`);
    expect(names(path.dirname(file))).toEqual(['classes.idx']);
    expect(fs.lstatSync(file).isFile()).toBe(false);
  });
});

describe('classes.idx written and read in pieces', () => {
  it('an index of more rows than one piece of paths round-trips whole', () => {
    const project = scratch();
    const index = indexOf(10_000);
    writeClassIndex(project, index);
    const read = readClassIndex(project, () => expect.fail('no warning expected'));
    expect(read.paths).toEqual(index.paths);
    expect(Buffer.from(read.stamps.buffer).equals(Buffer.from(index.stamps.buffer))).toBe(true);
    expect(read.shas.equals(index.shas)).toBe(true);
    expect([...read.evidence]).toEqual([...index.evidence]);
  });

  it('paths of several UTF-8 bytes a character, across piece boundaries, and one longer than a piece, round-trip whole', () => {
    const project = scratch();
    const index = indexOf(3_000);
    // Multi-byte characters shift every later piece boundary; one path is longer than a 64 KiB piece.
    index.paths = index.paths.map((file, i) => (i % 7 === 3 ? file.replace('Class', 'Klasse\u00e4\u4e2d\u{1f600}') : file));
    index.paths[1_500] = `/project/target/classes/${'p\u00e9/'.repeat(30_000)}Long.class`;
    writeClassIndex(project, index);
    const read = readClassIndex(project, () => expect.fail('no warning expected'));
    expect(read.paths).toEqual(index.paths);
  });
});
