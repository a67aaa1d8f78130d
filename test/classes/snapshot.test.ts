/** Change detection against the class index, and the index file on disk. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectChanges, emptyIndex, type ClassIndex } from '../../src/classes/snapshot.js';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { tempDir, writeClass } from '../support/cli.js';

const names = (list: { className: string }[]) => list.map((c) => c.className);

/** A class output directory with three classes, indexed. */
function indexed(): { dir: string; classes: string; index: ClassIndex } {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.A', 'a-1');
  writeClass(classes, 'com.acme.B$Inner', 'b-1');
  writeClass(classes, 'com.acme.C', 'c-1');
  const first = detectChanges(emptyIndex('s1'), [classes]);
  expect(names(first.changes.added)).toEqual(['com.acme.A', 'com.acme.B$Inner', 'com.acme.C']);
  return { dir, classes, index: first.index };
}

describe('detectChanges', () => {
  it('finds nothing when nothing was touched, and says the index need not be written', () => {
    const { classes, index } = indexed();
    const again = detectChanges(index, [classes]);
    expect(again.changes).toEqual({ changed: [], added: [], removed: [], total: 3 });
    expect(again.dirty).toBe(false);
  });

  it('reports a same-size rewrite with the old mtime as changed (ctime moved), with both hashes', () => {
    const { classes, index } = indexed();
    const file = path.join(classes, 'com', 'acme', 'A.class');
    const { mtime } = fs.statSync(file);
    fs.writeFileSync(file, 'a-2');
    fs.utimesSync(file, mtime, mtime);
    const { changes, dirty } = detectChanges(index, [classes]);
    expect(names(changes.changed)).toEqual(['com.acme.A']);
    expect(changes.changed[0]!.before).not.toEqual(changes.changed[0]!.after);
    expect(changes.changed[0]!.after).toMatch(/^[0-9a-f]{64}$/);
    expect(dirty).toBe(true);
  });

  it('does not report a rewrite with the same bytes, but keeps its new stamp so it is not hashed again', () => {
    const { classes, index } = indexed();
    fs.writeFileSync(path.join(classes, 'com', 'acme', 'C.class'), 'c-1');
    const first = detectChanges(index, [classes]);
    expect(first.changes.changed).toEqual([]);
    expect(first.dirty).toBe(true);
    expect(detectChanges(first.index, [classes]).dirty).toBe(false);
  });

  it('reports added and removed files and names nested classes by their binary name', () => {
    const { classes, index } = indexed();
    fs.rmSync(path.join(classes, 'com', 'acme', 'B$Inner.class'));
    writeClass(classes, 'com.acme.D$1', 'd');
    const { changes } = detectChanges(index, [classes]);
    expect(names(changes.added)).toEqual(['com.acme.D$1']);
    expect(names(changes.removed)).toEqual(['com.acme.B$Inner']);
    expect(changes.removed[0]!.before).toMatch(/^[0-9a-f]{64}$/);
    expect(changes.total).toBe(3);
  });

  it('keeps rows of directories it was not asked to scan, and counts only the scanned ones', () => {
    const { dir, classes, index } = indexed();
    const other = path.join(dir, 'other', 'target', 'classes');
    writeClass(other, 'x.Y', 'y');
    const both = detectChanges(index, [other]);
    expect(names(both.changes.added)).toEqual(['x.Y']);
    expect(both.changes.total).toBe(1);
    expect(both.index.paths).toHaveLength(4);
    expect(both.index.dirs.sort()).toEqual([classes, other].sort());
  });

  it('names files below a nested class output directory by the innermost one, scanning each file once', () => {
    const dir = tempDir();
    const outer = path.join(dir, 'out');
    const inner = path.join(outer, 'nested');
    writeClass(outer, 'p.A', 'a');
    writeClass(inner, 'q.B', 'b');
    const { changes, index } = detectChanges(emptyIndex(), [outer, inner]);
    expect(names(changes.added)).toEqual(['p.A', 'q.B']);
    expect(index.paths).toHaveLength(2);
  });

  it('skips missing directories', () => {
    const { changes } = detectChanges(emptyIndex(), [path.join(tempDir(), 'nope')]);
    expect(changes.total).toBe(0);
  });
});

describe('the class index file', () => {
  it('round-trips through .reclazz/classes.idx with its session', () => {
    const { dir, classes, index } = indexed();
    writeClassIndex(dir, index);
    const warnings: string[] = [];
    const read = readClassIndex(dir, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(read.sessionId).toBe('s1');
    expect(read.paths).toEqual(index.paths);
    expect(detectChanges(read, [classes]).dirty).toBe(false);
  });

  it('is empty without a file, and ignored with a warning when any byte is wrong', () => {
    const { dir, index } = indexed();
    expect(readClassIndex(dir, () => expect.fail('no warning expected')).paths).toEqual([]);
    writeClassIndex(dir, index);
    const file = path.join(dir, '.reclazz', 'classes.idx');
    const bytes = fs.readFileSync(file);
    for (const damage of [(b: Buffer) => b.subarray(0, b.length - 1), (b: Buffer) => Buffer.from(b).fill(0x41, 60, 61), () => Buffer.from('{"version":2}')]) {
      fs.writeFileSync(file, damage(bytes));
      const warnings: string[] = [];
      expect(readClassIndex(dir, (m) => warnings.push(m)).paths).toEqual([]);
      expect(warnings).toEqual([`${file} is corrupt; ignoring it (class files are hashed again and it is rewritten)`]);
    }
  });
});
