/** Detection from the class watch's hints: only the folders named are looked at, the rest of the record stays. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyIndex, type ClassIndex } from '../../src/classes/columns.js';
import { COARSE_CLOCK_MS, EVIDENCE } from '../../src/classes/evidence.js';
import { detectInFolders } from '../../src/classes/hinted.js';
import { detectChanges } from '../../src/classes/snapshot.js';
import { tempDir, writeClass } from '../support/cli.js';
import { afterBuild, keptNew } from './helpers.js';

const names = (list: { className: string }[]) => list.map((c) => c.className);
/** Until what was just written is older than the file system's coarse clock (else its folder's stamp is not kept). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));

/** Two packages with two classes each, indexed. */
async function indexed(): Promise<{ classes: string; acme: string; other: string; index: ClassIndex }> {
  const classes = path.join(tempDir(), 'target', 'classes');
  for (const name of ['com.acme.A', 'com.acme.B', 'org.other.C', 'org.other.D']) writeClass(classes, name, `${name}-1`);
  await settle();
  const first = await detectChanges(emptyIndex('s1'), [classes], {
    ...afterBuild(undefined, [classes]),
    scannedBeforeBuild: new Set([classes]),
  });
  return { classes, acme: path.join(classes, 'com', 'acme'), other: path.join(classes, 'org', 'other'), index: keptNew(first.index) };
}

describe('detectInFolders', () => {
  it('finds what changed, was added or removed in the folders named, and counts every class file', async () => {
    const { classes, acme, index } = await indexed();
    const build = afterBuild(index);
    fs.writeFileSync(path.join(acme, 'A.class'), 'a-2');
    fs.rmSync(path.join(acme, 'B.class'));
    writeClass(classes, 'com.acme.E', 'e-1');
    // Both passes keep acme's new stamp, however long apart they run.
    await settle();
    const hinted = await detectInFolders(index, [classes], new Set([acme]), build);
    const full = await detectChanges(index, [classes], build);
    expect(hinted.changes).toEqual(full.changes);
    expect(names(hinted.changes.changed)).toEqual(['com.acme.A']);
    expect(names(hinted.changes.added)).toEqual(['com.acme.E']);
    expect(names(hinted.changes.removed)).toEqual(['com.acme.B']);
    expect(hinted.changes.total).toBe(4);
    // The same record as a full pass's, row for row (the new file is appended, the others keep their rows).
    const rows = (i: ClassIndex) =>
      i.paths.map((p, row) => [p, i.evidence[row], i.gone[row], i.shas.toString('hex', row * 32, row * 32 + 32)]);
    expect(new Set(rows(hinted.index).map((r) => JSON.stringify(r)))).toEqual(new Set(rows(full.index).map((r) => JSON.stringify(r))));
    expect(hinted.index.paths.slice(0, index.paths.length)).toEqual(index.paths);
    expect(hinted.index.folderHistory).toEqual(full.index.folderHistory);
  });

  it('leaves the folders not named as the record has them, and the next hinted pass on its result still works', async () => {
    const { classes, acme, other, index } = await indexed();
    fs.writeFileSync(path.join(other, 'C.class'), 'c-2');
    const first = await detectInFolders(index, [classes], new Set([acme]), afterBuild(index));
    expect(first.changes.changed).toEqual([]);
    expect(first.changes.total).toBe(4);
    // The folder histories carry through a hinted pass: a class new in a folder the pass did not change is still new.
    const build = afterBuild(first.index);
    writeClass(classes, 'com.acme.F', 'f-1');
    const second = await detectInFolders(first.index, [classes], new Set([other, acme]), build);
    expect(names(second.changes.changed)).toEqual(['org.other.C']);
    expect(names(second.changes.added)).toEqual(['com.acme.F']);
    expect(second.changes.total).toBe(5);
  });

  it('looks in the folders of classes the record does not show live too, as a full pass would: they are asked again', async () => {
    const { classes, acme, other, index } = await indexed();
    const c = index.paths.indexOf(path.join(other, 'C.class'));
    index.evidence[c] = EVIDENCE.unproven;
    const hinted = await detectInFolders(index, [classes], new Set([acme]), afterBuild(index));
    expect(names(hinted.changes.checks)).toEqual(['org.other.C']);
    expect(hinted.changes.checks[0]!.liveUnknown).toBe(false);
    expect(hinted.changes.total).toBe(4);
    // Not in a folder of the directories scanned: left as it is.
    const elsewhere = await detectInFolders(index, [path.join(classes, 'com')], new Set([acme]), afterBuild(index));
    expect(elsewhere.changes.checks).toEqual([]);
  });
});

describe('detectChanges with folders', () => {
  it('keeps the rows of folders it did not look at, never taking them as removed', async () => {
    const { classes, acme, index } = await indexed();
    fs.writeFileSync(path.join(acme, 'A.class'), 'a-2');
    const { changes } = await detectChanges(index, [classes], { ...afterBuild(index), folders: new Set([acme]) });
    expect(names(changes.changed)).toEqual(['com.acme.A']);
    expect(changes.removed).toEqual([]);
    expect(changes.total).toBe(4);
  });
});
