/**
 * Folder histories (src/classes/history.ts) on real folders: which folders the record shows held
 * every class they have held in the agent session, so that a class file without a row there is new.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselineOf } from '../../src/classes/baseline.js';
import { breakHistories, wholeBefore } from '../../src/classes/history.js';
import { emptyIndex } from '../../src/classes/columns.js';
import { COARSE_CLOCK_MS, EVIDENCE } from '../../src/classes/evidence.js';
import { detectChanges } from '../../src/classes/snapshot.js';
import type { AppStart } from '../../src/outcome/facts.js';
import { tempDir, writeClass } from '../support/cli.js';
import { afterBuild } from './helpers.js';

const names = (list: { className: string }[]) => list.map((c) => c.className);
/** A JVM whose checkout root is `top` and whose class path is `classPath` (placement.ts). */
const jvm = (top: string, ...classPath: string[]) => ({
  top,
  classPath: classPath.map((local) => ({ local, real: local })),
  watched: () => true,
});
/** Until what was just written is older than the file system's coarse clock, and than a start time taken now. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));

/** com/acme/{A,B}.class, then the app's JVM "starts" (a start time taken now, after they settled). */
async function startedApp(): Promise<{ dir: string; classes: string; acme: string; start: AppStart; paths: ReturnType<typeof jvm> }> {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.A', 'a-1');
  writeClass(classes, 'com.acme.B', 'b-1');
  await settle();
  const start: AppStart = { kind: 'known', pid: 1, startMs: Date.now(), errorMs: 1 };
  await settle();
  return { dir, classes, acme: path.join(classes, 'com', 'acme'), start, paths: jvm(dir, classes) };
}

describe('the first listing in an agent session', () => {
  it('a folder unchanged since the JVM started is whole: a class a build then adds there is new', async () => {
    const { classes, acme, start, paths } = await startedApp();
    const { baseline, whole } = await baselineOf(emptyIndex(), [classes], 's1', start, paths);
    expect(whole.get(acme)).toBe(true);
    expect([...baseline.evidence]).toEqual([EVIDENCE.preStart, EVIDENCE.preStart]);
    writeClass(classes, 'com.acme.C', 'c-1');
    const after = await detectChanges(baseline, [classes], { ...afterBuild(), history: { kind: 'after', before: whole } });
    expect(names(after.changes.added)).toEqual(['com.acme.C']);
    expect(after.index.folderHistory.get(acme)?.whole).toBe(true);
  });

  it('a folder a class was removed from after the JVM started is not: that class comes back as a candidate, not as new', async () => {
    const { classes, acme, start, paths } = await startedApp();
    fs.rmSync(path.join(acme, 'B.class')); // `mvn clean` by hand, or one class file deleted
    const { baseline, whole } = await baselineOf(emptyIndex(), [classes], 's1', start, paths);
    expect(whole.get(acme)).toBe(false);
    expect(whole.get(classes)).toBe(true);
    writeClass(classes, 'com.acme.B', 'b-2');
    const after = await detectChanges(baseline, [classes], { ...afterBuild(), history: { kind: 'after', before: whole } });
    expect(after.changes.added).toEqual([]);
    expect(after.changes.changed.map((c) => [c.className, c.liveUnknown])).toEqual([['com.acme.B', true]]);
  });

  it('a folder moved into place after the JVM started (a swap) gives its old files no start-time evidence', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'out');
    writeClass(classes, 'com.acme.A', 'a-1');
    writeClass(path.join(dir, 'staging'), 'com.acme.A', 'a-staged'); // written before the app started
    await settle();
    const start: AppStart = { kind: 'known', pid: 1, startMs: Date.now(), errorMs: 1 };
    await settle();
    fs.rmSync(classes, { recursive: true });
    fs.renameSync(path.join(dir, 'staging'), classes);
    expect(fs.statSync(path.join(classes, 'com', 'acme', 'A.class')).ctimeMs).toBeLessThan(start.startMs);
    const { baseline } = await baselineOf(emptyIndex(), [classes], 's1', start, jvm(dir, classes));
    expect([...baseline.evidence]).toEqual([EVIDENCE.unknown]);
    // A class output directory below the folder moved into place has no start-time evidence either.
    const inner = path.join(classes, 'com');
    const { baseline: below } = await baselineOf(emptyIndex(), [inner], 's1', start, jvm(dir, inner));
    expect([...below.evidence]).toEqual([EVIDENCE.unknown]);
  });

  it('a class file linked after the JVM started to an older file gets no start-time evidence', async () => {
    const { dir, classes, acme, paths } = await startedApp();
    const older = writeClass(path.join(dir, 'old'), 'com.acme.A', 'a-old');
    await settle();
    const start: AppStart = { kind: 'known', pid: 1, startMs: Date.now(), errorMs: 1 };
    await settle();
    fs.rmSync(path.join(acme, 'A.class'));
    fs.symlinkSync(older, path.join(acme, 'A.class'));
    const { baseline } = await baselineOf(emptyIndex(), [classes], 's1', start, paths);
    expect(baseline.evidence[baseline.paths.indexOf(path.join(acme, 'A.class'))]).toBe(EVIDENCE.unknown);
    expect(baseline.evidence[baseline.paths.indexOf(path.join(acme, 'B.class'))]).toBe(EVIDENCE.preStart);
  });
});

describe('between runs and across a build', () => {
  it('a folder stays whole while its stamp does not move; an entry added and removed in between breaks it', async () => {
    const { classes, acme, start, paths } = await startedApp();
    const { baseline } = await baselineOf(emptyIndex(), [classes], 's1', start, paths);
    expect(wholeBefore(baseline.folderHistory, () => false).get(acme)).toBe(true);
    writeClass(classes, 'com.acme.Gone', 'loaded, then removed');
    fs.rmSync(path.join(acme, 'Gone.class'));
    expect(wholeBefore(baseline.folderHistory, () => false).get(acme)).toBe(false);
    // As this run's own scan found it (or under a hold kept since the record), it is whole.
    expect(wholeBefore(baseline.folderHistory, (f) => f === acme).get(acme)).toBe(true);
    // Found broken before a build, it is recorded so: a later run under the same hold keeps that.
    expect(
      breakHistories(
        baseline.folderHistory,
        wholeBefore(baseline.folderHistory, () => false),
      ),
    ).toBe(true);
    expect(baseline.folderHistory.get(acme)?.whole).toBe(false);
    expect(wholeBefore(baseline.folderHistory, () => true).get(acme)).toBe(false);
    expect(
      breakHistories(
        baseline.folderHistory,
        wholeBefore(baseline.folderHistory, () => false),
      ),
    ).toBe(false);
  });

  it('a folder the build made is as whole as its parent was; one that went away without a whole history takes its parent with it', async () => {
    const { classes, acme, start, paths } = await startedApp();
    const { baseline, whole } = await baselineOf(emptyIndex(), [classes], 's1', start, paths);
    writeClass(classes, 'com.acme.deep.D', 'd-1');
    const built = await detectChanges(baseline, [classes], { ...afterBuild(), history: { kind: 'after', before: whole } });
    expect(names(built.changes.added)).toEqual(['com.acme.deep.D']);
    const deep = path.join(acme, 'deep');
    expect(built.index.folderHistory.get(deep)?.whole).toBe(true);
    // Its history broken (an outside change), then it goes away in a build: com/acme is no longer whole.
    const broken = new Map(built.index.folderHistory);
    broken.set(deep, { ...broken.get(deep)!, whole: false });
    const index = { ...built.index, folderHistory: broken };
    await settle();
    const before = wholeBefore(index.folderHistory, () => false);
    fs.rmSync(deep, { recursive: true });
    const after = await detectChanges(index, [classes], { ...afterBuild(), history: { kind: 'after', before } });
    expect(after.index.folderHistory.has(deep)).toBe(false);
    expect(after.index.folderHistory.get(acme)?.whole).toBe(false);
    expect(after.index.folderHistory.get(classes)?.whole).toBe(true);
  });
});
