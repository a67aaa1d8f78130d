/** Change detection against the class index, and the index file on disk. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COARSE_CLOCK_MS, EVIDENCE, RECHECK } from '../../src/classes/evidence.js';
import { emptyIndex, forSession, type ClassIndex } from '../../src/classes/columns.js';
import { SLICE_MS } from '../../src/classes/scan.js';
import { detectChanges, type ScanOptions } from '../../src/classes/snapshot.js';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { tempDir, writeClass } from '../support/cli.js';
import { afterBuild, keptNew } from './helpers.js';

const names = (list: { className: string }[]) => list.map((c) => c.className);

/** A scan from before the build with the app started long after every file here: all live. */
const firstScan: ScanOptions = { judge: () => ({ kind: 'live', by: 'pre-start', code: EVIDENCE.preStart }) };

/**
 * Waits until the folders just written are older than the file system's coarse clock: a folder
 * changed later than that is listed again by the next scan (its stamp is not kept).
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));

/** A class output directory with three classes, indexed (folder stamps kept). */
async function indexed(): Promise<{ dir: string; classes: string; index: ClassIndex }> {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.A', 'a-1');
  writeClass(classes, 'com.acme.B$Inner', 'b-1');
  writeClass(classes, 'com.acme.C', 'c-1');
  await settle();
  const first = await detectChanges(emptyIndex('s1'), [classes], {
    ...afterBuild(undefined, [classes]),
    scannedBeforeBuild: new Set([classes]),
  });
  expect(names(first.changes.added)).toEqual(['com.acme.A', 'com.acme.B$Inner', 'com.acme.C']);
  // New to the JVM, each is asked once; the proof records `added` when DIAGNOSE says the JVM has not loaded it.
  expect([...first.index.evidence]).toEqual([RECHECK + EVIDENCE.added, RECHECK + EVIDENCE.added, RECHECK + EVIDENCE.added]);
  return { dir, classes, index: keptNew(first.index) };
}

describe('detectChanges', () => {
  it('finds nothing when nothing was touched, and says the index need not be written', async () => {
    const { classes, index } = await indexed();
    const again = await detectChanges(index, [classes], afterBuild(index));
    expect(again.changes).toEqual({ changed: [], checks: [], added: [], removed: [], total: 3 });
    expect(again.dirty).toBe(false);
  });

  it('reports a same-size rewrite with the old mtime as changed (ctime moved), with both hashes', async () => {
    const { classes, index } = await indexed();
    const file = path.join(classes, 'com', 'acme', 'A.class');
    const { mtime } = fs.statSync(file);
    fs.writeFileSync(file, 'a-2');
    fs.utimesSync(file, mtime, mtime);
    const { changes, dirty } = await detectChanges(index, [classes], afterBuild(index));
    expect(names(changes.changed)).toEqual(['com.acme.A']);
    expect(changes.changed[0]!.before).not.toEqual(changes.changed[0]!.after);
    expect(changes.changed[0]!.after).toMatch(/^[0-9a-f]{64}$/);
    expect(dirty).toBe(true);
  });

  it('asks once about a rewrite of live bytes with the same bytes (its stamp moved), and keeps its new stamp so it is not hashed again', async () => {
    const { classes, index } = await indexed();
    fs.writeFileSync(path.join(classes, 'com', 'acme', 'C.class'), 'c-1');
    const first = await detectChanges(index, [classes], afterBuild(index));
    expect(first.changes.changed).toEqual([]);
    expect(first.changes.checks.map((c) => [c.className, c.keeps, c.liveUnknown])).toEqual([['com.acme.C', EVIDENCE.added, false]]);
    expect(first.dirty).toBe(true);
    expect((await detectChanges(first.index, [classes], afterBuild(first.index))).dirty).toBe(false);
  });

  it('reports added and removed files and names nested classes by their binary name', async () => {
    const { classes, index } = await indexed();
    const build = afterBuild(index);
    fs.rmSync(path.join(classes, 'com', 'acme', 'B$Inner.class'));
    writeClass(classes, 'com.acme.D$1', 'd');
    const { changes } = await detectChanges(index, [classes], build);
    expect(names(changes.added)).toEqual(['com.acme.D$1']);
    expect(names(changes.removed)).toEqual(['com.acme.B$Inner']);
    expect(changes.removed[0]!.before).toMatch(/^[0-9a-f]{64}$/);
    expect(changes.total).toBe(3);
  });

  it('keeps rows of directories it was not asked to scan, and counts only the scanned ones', async () => {
    const { dir, classes, index } = await indexed();
    const other = path.join(dir, 'other', 'target', 'classes');
    writeClass(other, 'x.Y', 'y');
    const both = await detectChanges(index, [other], { ...afterBuild(undefined, [other]), scannedBeforeBuild: new Set([other]) });
    expect(names(both.changes.added)).toEqual(['x.Y']);
    expect(both.changes.total).toBe(1);
    expect(both.index.paths).toHaveLength(4);
    expect(both.index.dirs.sort()).toEqual([classes, other].sort());
  });

  it('follows symbolic links to class files and to folders, as the JVM loads them; a link to a folder that holds it is not entered', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'classes');
    const real = writeClass(path.join(dir, 'elsewhere'), 'p.A', 'a-1');
    fs.mkdirSync(path.join(classes, 'p'), { recursive: true });
    fs.symlinkSync(real, path.join(classes, 'p', 'A.class'));
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(classes, 'linked-folder'));
    fs.symlinkSync(classes, path.join(classes, 'p', 'loop'));
    const first = await detectChanges(emptyIndex(), [classes], {
      ...afterBuild(undefined, [classes]),
      scannedBeforeBuild: new Set([classes]),
    });
    expect(names(first.changes.added).sort()).toEqual(['linked-folder.p.A', 'p.A']);
    fs.writeFileSync(real, 'a-2');
    expect(names((await detectChanges(first.index, [classes], afterBuild(first.index))).changes.changed).sort()).toEqual([
      'linked-folder.p.A',
      'p.A',
    ]);
  });

  it('gives the event loop turns while it hashes (the run lock refreshes its time stamp on a timer)', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'classes');
    const big = writeClass(classes, 'p.Huge', '');
    fs.truncateSync(big, 600 * 1024 * 1024); // sparse: ~1 s to hash
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 50);
    const started = performance.now();
    try {
      await detectChanges(emptyIndex(), [classes], firstScan);
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    // A timer due every 50 ms runs at least once per 100 ms slice and its turn.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(elapsed / (SLICE_MS + 100)));
    expect(ticks).toBeGreaterThan(2);
  });

  it('skips missing directories', async () => {
    const { changes } = await detectChanges(emptyIndex(), [path.join(tempDir(), 'nope')], firstScan);
    expect(changes.total).toBe(0);
  });
});

describe('evidence in the index', () => {
  it('a removed file stays as a tombstone, reported once, and is asked about when it comes back with other bytes', async () => {
    const { classes, index } = await indexed();
    const a = path.join(classes, 'com', 'acme', 'A.class');
    fs.rmSync(a);
    const removed = await detectChanges(index, [classes], afterBuild(index));
    expect(names(removed.changes.removed)).toEqual(['com.acme.A']);
    expect(removed.index.gone[removed.index.paths.indexOf(a)]).toBe(1);
    const quiet = await detectChanges(removed.index, [classes], afterBuild(removed.index));
    expect(quiet.changes.removed).toEqual([]);
    writeClass(classes, 'com.acme.A', 'a-2');
    const back = await detectChanges(quiet.index, [classes], afterBuild(quiet.index));
    expect(back.changes.added).toEqual([]);
    expect(back.changes.changed.map((c) => [c.className, c.previous])).toEqual([['com.acme.A', [removed.changes.removed[0]!.before]]]);
  });

  it('keeps the earlier hashes of a file, latest first, so a mismatch naming any of them is "not captured yet"', async () => {
    const { classes, index } = await indexed();
    const hashes: string[] = [];
    let current = index;
    for (const bytes of ['a-2', 'a-3', 'a-4']) {
      writeClass(classes, 'com.acme.A', bytes);
      const next = await detectChanges(current, [classes], afterBuild(current));
      hashes.unshift(next.changes.changed[0]!.before!);
      expect(next.changes.changed[0]!.previous).toEqual(hashes);
      current = next.index;
    }
  });

  it('a file without live evidence whose bytes stay is asked once; what a fresh session keeps of an index is stamps, not evidence', async () => {
    const { classes, index } = await indexed();
    const fresh = forSession(index, 's2');
    expect(fresh.sessionId).toBe('s2');
    expect([...fresh.evidence]).toEqual([EVIDENCE.unknown, EVIDENCE.unknown, EVIDENCE.unknown]);
    const checked = await detectChanges(fresh, [classes], afterBuild(fresh));
    expect(names(checked.changes.checks)).toEqual(['com.acme.A', 'com.acme.B$Inner', 'com.acme.C']);
    expect(checked.changes.checks.every((c) => c.liveUnknown === true)).toBe(true);
  });

  it('lists the files other than class files written since a time, when asked', async () => {
    const { classes, index } = await indexed();
    const since = Date.now() - 10;
    fs.writeFileSync(path.join(classes, 'app.properties'), 'x=1');
    const found = await detectChanges(index, [classes], { ...afterBuild(index), resourcesSinceMs: since });
    expect(found.resources).toEqual([path.join(classes, 'app.properties')]);
    expect((await detectChanges(index, [classes], afterBuild(index))).resources).toEqual([]);
  });
});

describe('the class index file', () => {
  it('round-trips through .reclazz/classes.idx with its session', async () => {
    const { dir, classes, index } = await indexed();
    writeClassIndex(dir, index);
    const warnings: string[] = [];
    const read = readClassIndex(dir, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(read.sessionId).toBe('s1');
    expect(read.paths).toEqual(index.paths);
    expect((await detectChanges(read, [classes], afterBuild(read))).dirty).toBe(false);
  });

  it('an index of another version is rebuilt without a warning', async () => {
    const { dir, index } = await indexed();
    writeClassIndex(dir, index);
    const file = path.join(dir, '.reclazz', 'classes.idx');
    fs.writeFileSync(file, Buffer.concat([Buffer.from('RCLZIDX2'), fs.readFileSync(file).subarray(8)]));
    expect(readClassIndex(dir, () => expect.fail('no warning expected')).paths).toEqual([]);
  });

  it('is empty without a file, and ignored with a warning when any byte is wrong', async () => {
    const { dir, index } = await indexed();
    expect(readClassIndex(dir, () => expect.fail('no warning expected')).paths).toEqual([]);
    writeClassIndex(dir, index);
    const file = path.join(dir, '.reclazz', 'classes.idx');
    const bytes = fs.readFileSync(file);
    for (const damage of [
      (b: Buffer) => b.subarray(0, b.length - 1),
      (b: Buffer) => Buffer.from(b).fill(0x41, 60, 61),
      () => Buffer.from('{"version":2}'),
    ]) {
      fs.writeFileSync(file, damage(bytes));
      const warnings: string[] = [];
      expect(readClassIndex(dir, (m) => warnings.push(m)).paths).toEqual([]);
      expect(warnings).toEqual([`${file} is corrupt; ignoring it (class files are hashed again and checked, and it is rewritten)`]);
    }
  });
});
