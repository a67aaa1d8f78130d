/**
 * Folder stamps in the class index: a folder whose stamp is the one the index has is not read
 * again, and nothing a build can do to its entries goes unseen (every entry change moves the
 * folder's stamp; every file is still looked at).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptyIndex, forSession, type ClassIndex } from '../../src/classes/columns.js';
import { COARSE_CLOCK_MS, EVIDENCE } from '../../src/classes/evidence.js';
import { detectChanges } from '../../src/classes/snapshot.js';
import { folderStamp } from '../../src/classes/folders.js';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { tempDir, writeClass } from '../support/cli.js';
import { afterBuild, keptNew } from './helpers.js';

const names = (list: { className: string }[]) => list.map((c) => c.className);
/** Until what was just written is older than the file system's coarse clock (else its folder's stamp is not kept). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));

afterEach(() => {
  vi.restoreAllMocks();
});

/** com/acme/{A,B}.class and com/acme/deep/C.class, indexed once the folders settled. */
async function indexed(): Promise<{ dir: string; classes: string; index: ClassIndex }> {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  for (const [name, bytes] of [
    ['com.acme.A', 'a-1'],
    ['com.acme.B', 'b-1'],
    ['com.acme.deep.C', 'c-1'],
  ] as const)
    writeClass(classes, name, bytes);
  await settle();
  const first = await detectChanges(emptyIndex('s1'), [classes], {
    ...afterBuild(undefined, [classes]),
    scannedBeforeBuild: new Set([classes]),
  });
  expect(names(first.changes.added)).toEqual(['com.acme.A', 'com.acme.B', 'com.acme.deep.C']);
  return { dir, classes, index: keptNew(first.index) };
}

/** Counts readdir calls during `body`. */
async function readdirsDuring<T>(body: () => Promise<T>): Promise<{ result: T; readdirs: number }> {
  const spy = vi.spyOn(fs, 'readdirSync');
  const result = await body();
  const readdirs = spy.mock.calls.length;
  spy.mockRestore();
  return { result, readdirs };
}

describe('folder stamps', () => {
  it('an unchanged tree is scanned without reading a folder, and the index is the one it had (no copy)', async () => {
    const { classes, index } = await indexed();
    expect(index.folders.paths.sort()).toEqual(['', 'com', 'com/acme', 'com/acme/deep'].map((p) => path.join(classes, p)).sort());
    const { result, readdirs } = await readdirsDuring(() => detectChanges(index, [classes], afterBuild(index)));
    expect(readdirs).toBe(0);
    expect(result.changes).toEqual({ changed: [], checks: [], added: [], removed: [], total: 3 });
    expect(result.dirty).toBe(false);
    expect(result.index.shas).toBe(index.shas);
  });

  it('a class file rewritten in place (as javac does) is found though its folder is not read', async () => {
    const { classes, index } = await indexed();
    const file = path.join(classes, 'com', 'acme', 'A.class');
    const { mtime } = fs.statSync(file);
    fs.writeFileSync(file, 'a-2');
    fs.utimesSync(file, mtime, mtime); // same size, same mtime: only ctime moved
    const { result, readdirs } = await readdirsDuring(() => detectChanges(index, [classes], afterBuild(index)));
    expect(readdirs).toBe(0);
    expect(names(result.changes.changed)).toEqual(['com.acme.A']);
  });

  it('a file added, removed or renamed over moves its folder stamp and is found', async () => {
    const { classes, index } = await indexed();
    const build = afterBuild(index);
    writeClass(classes, 'com.acme.D', 'd-1');
    fs.rmSync(path.join(classes, 'com', 'acme', 'B.class'));
    const scratch = path.join(classes, 'com', 'acme', 'deep', 'C.tmp');
    fs.writeFileSync(scratch, 'c-2');
    fs.renameSync(scratch, path.join(classes, 'com', 'acme', 'deep', 'C.class'));
    const { changes } = await detectChanges(index, [classes], build);
    expect(names(changes.added)).toEqual(['com.acme.D']);
    expect(names(changes.removed)).toEqual(['com.acme.B']);
    expect(names(changes.changed)).toEqual(['com.acme.deep.C']);
  });

  it('a file added in a new folder below an unchanged one is found (each folder has its own stamp)', async () => {
    const { classes, index } = await indexed();
    await settle();
    const build = afterBuild(index);
    writeClass(classes, 'com.acme.deep.C', 'c-1'); // in place: the folders above keep their stamps
    writeClass(classes, 'com.acme.deep.more.E', 'e-1');
    const { changes } = await detectChanges(index, [classes], build);
    expect(names(changes.added)).toEqual(['com.acme.deep.more.E']);
  });

  it('a link to a class file that did not exist is found once its target appears (its folder does not change)', async () => {
    const { dir, classes } = await (async () => {
      const d = tempDir();
      const c = path.join(d, 'classes');
      fs.mkdirSync(path.join(c, 'p'), { recursive: true });
      fs.symlinkSync(path.join(d, 'elsewhere', 'A.class'), path.join(c, 'p', 'A.class'));
      return { dir: d, classes: c };
    })();
    await settle();
    const first = await detectChanges(emptyIndex('s1'), [classes], afterBuild(undefined, [classes]));
    expect(first.changes.total).toBe(0);
    const build = afterBuild(first.index);
    writeClass(path.join(dir, 'elsewhere'), 'A', 'a-1');
    const { result, readdirs } = await readdirsDuring(() => detectChanges(first.index, [classes], build));
    expect(readdirs).toBe(0);
    expect(names(result.changes.added)).toEqual(['p.A']);
  });

  it('keeps no stamp for a folder changed within the coarse clock of its listing: it is read again next time', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'classes');
    writeClass(classes, 'p.A', 'a-1');
    // The listing's clock within the coarse clock of the folder's change, however long writing it took here.
    const changedAt = fs.statSync(path.join(classes, 'p')).ctimeMs;
    vi.spyOn(Date, 'now').mockReturnValue(Math.ceil(changedAt) + 1);
    const first = await detectChanges(emptyIndex('s1'), [classes], afterBuild(undefined, [classes]));
    vi.restoreAllMocks();
    const p = first.index.folders.paths.indexOf(path.join(classes, 'p'));
    expect(Number.isNaN(first.index.folders.stamps[3 * p])).toBe(true);
    const build = afterBuild(first.index);
    writeClass(classes, 'p.B', 'b-1');
    const { result, readdirs } = await readdirsDuring(() => detectChanges(first.index, [classes], build));
    expect(readdirs).toBeGreaterThan(0);
    // Found, and not taken as new: without a stamp, the folder's history cannot be shown unchanged since the record.
    expect(names(result.changes.changed)).toEqual(['p.B']);
    expect(result.changes.added).toEqual([]);
  });

  it('a fresh session keeps the folder stamps, with the rows after a dropped tombstone moved up', async () => {
    const { classes, index } = await indexed();
    fs.rmSync(path.join(classes, 'com', 'acme', 'A.class'));
    const removed = await detectChanges(index, [classes], afterBuild(index));
    await settle();
    const settled = await detectChanges(removed.index, [classes], afterBuild(removed.index));
    const fresh = forSession(settled.index, 's2');
    expect(fresh.paths).toHaveLength(2);
    const { result, readdirs } = await readdirsDuring(() => detectChanges(fresh, [classes], afterBuild(fresh)));
    expect(readdirs).toBe(0);
    expect(names(result.changes.checks)).toEqual(['com.acme.B', 'com.acme.deep.C']);
    expect(result.changes.checks.every((c) => c.liveUnknown)).toBe(true);
  });
});

describe('the folder table in classes.idx', () => {
  it('round-trips, so the next run reads no unchanged folder', async () => {
    const { dir, classes, index } = await indexed();
    writeClassIndex(dir, index);
    const read = readClassIndex(dir, () => expect.fail('no warning expected'));
    expect(read.folders).toEqual(index.folders);
    expect(read.folderHistory).toEqual(index.folderHistory);
    expect([...read.folderHistory.values()].every((h) => h.whole && h.stamp !== undefined)).toBe(true);
    const { result, readdirs } = await readdirsDuring(() => detectChanges(read, [classes], afterBuild(read)));
    expect(readdirs).toBe(0);
    expect(result.dirty).toBe(false);
  });

  it('an index of the version before (RCLZIDX3, no folder table) is still read: rows and evidence kept, folders read once', async () => {
    const { dir, classes, index } = await indexed();
    writeClassIndex(dir, index);
    const file = path.join(dir, '.reclazz', 'classes.idx');
    fs.writeFileSync(file, asVersion(fs.readFileSync(file), 3));
    const read = readClassIndex(dir, () => expect.fail('no warning expected'));
    expect(read.paths).toEqual(index.paths);
    expect([...read.evidence]).toEqual([...index.evidence]);
    expect(read.folders.paths).toEqual([]);
    const again = await detectChanges(read, [classes], afterBuild(read));
    expect(again.changes).toEqual({ changed: [], checks: [], added: [], removed: [], total: 3 });
    expect(again.dirty).toBe(true); // the folder stamps are worth saving
    expect(again.index.folders.paths).toHaveLength(4);
  });

  it('an index of version 4 (no folder histories) is still read: rows, evidence and folders kept, no class taken as new', async () => {
    const { dir, classes, index } = await indexed();
    writeClassIndex(dir, index);
    const file = path.join(dir, '.reclazz', 'classes.idx');
    fs.writeFileSync(file, asVersion(fs.readFileSync(file), 4));
    const read = readClassIndex(dir, () => expect.fail('no warning expected'));
    expect(read.paths).toEqual(index.paths);
    expect([...read.evidence]).toEqual([...index.evidence]);
    expect(read.folders).toEqual(index.folders);
    expect(read.folderHistory.size).toBe(0);
    const build = afterBuild(read);
    writeClass(classes, 'com.acme.New', 'new-1');
    const again = await detectChanges(read, [classes], build);
    expect(names(again.changes.changed)).toEqual(['com.acme.New']);
    expect(again.changes.added).toEqual([]);
  });

  it('a folder table whose rows lie beyond the index is corrupt', async () => {
    const { dir, index } = await indexed();
    const folders = { ...index.folders, rowCount: index.folders.rowCount.map(() => 9) };
    writeClassIndex(dir, { ...index, folders });
    const warnings: string[] = [];
    expect(readClassIndex(dir, (m) => warnings.push(m)).paths).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/is corrupt; ignoring it/);
  });

  it('does not trust evidence it cannot read: a fresh session after an index of another session asks again', async () => {
    const { classes, index } = await indexed();
    expect([...index.evidence].every((e) => e === EVIDENCE.added)).toBe(true);
    const fresh = await detectChanges(forSession(index, 's2'), [classes], afterBuild());
    expect(fresh.changes.checks).toHaveLength(3);
  });
});

/**
 * A version-5 index file rewritten as an earlier version wrote it: 4 without the folder history
 * counts and histories, 3 also without the folder counts and the folder table.
 */
function asVersion(v5: Buffer, version: 3 | 4): Buffer {
  const u32 = (i: number) => v5.readUInt32LE(8 + 4 * i);
  const [count, headerBytes, pathBytes, historyBytes, folderCount, folderTextBytes, pastCount, pastTextBytes] = [
    0, 1, 2, 3, 4, 5, 6, 7,
  ].map(u32) as number[];
  const rowsEnd = 40 + headerBytes! + pathBytes! + count! * 70 + historyBytes!;
  const foldersEnd = rowsEnd + folderCount! * 36 + folderTextBytes!;
  expect(v5.length).toBe(foldersEnd + pastCount! * 25 + pastTextBytes! + 32);
  const body =
    version === 4
      ? Buffer.concat([Buffer.from('RCLZIDX4'), v5.subarray(8, 32), v5.subarray(40, foldersEnd)])
      : Buffer.concat([Buffer.from('RCLZIDX3'), v5.subarray(8, 24), v5.subarray(40, rowsEnd)]);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

describe('folderStamp', () => {
  const stat = (mtimeMs: number, ctimeMs: number) => ({ mtimeMs, ctimeMs, ino: 7 }) as fs.Stats;
  it('keeps the stamp of a folder with sub-second stamps that settled before the listing', () => {
    expect(folderStamp(stat(1_000_000.25, 1_000_000.5), 2_000_000)).toEqual([1_000_000.25, 1_000_000.5, 7]);
  });
  it('keeps none for a folder stamped in whole seconds: an entry added in that second would not move it', () => {
    expect(folderStamp(stat(1_000_000, 1_000_000), 2_000_000)).toBeUndefined();
  });
});
