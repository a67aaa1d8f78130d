/** Watch mode's detection hints: a full pass first and when due, then the dirty folders; the background pass between cycles. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emptyIndex } from '../../src/classes/columns.js';
import { EVIDENCE } from '../../src/classes/evidence.js';
import { detectChanges } from '../../src/classes/snapshot.js';
import { staleFolders } from '../../src/session/detect.js';
import { writeClassIndex } from '../../src/state/store.js';
import { classHints, type ClassHints } from '../../src/watch/hints.js';
import { mkdirs, put, tempTree } from './tmp.js';
import { sleep, waitFor } from '../support/wait.js';

const open: ClassHints[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

/** A cycle's question: a new cycle, then its folders. */
function next(h: ClassHints, dirs: string[], full: boolean) {
  h.startCycle();
  return h.changedFolders(dirs, full);
}

/**
 * Cycles until the class watch is ready: until then every pass is full (a pass marked before it
 * was ready is followed by one more), however long its folders take to be watched. The folders
 * of the first cycle that is not a full pass.
 */
async function untilReady(h: ClassHints, dirs: string[]): Promise<ReadonlySet<string>> {
  let folders: ReadonlySet<string> | undefined;
  await waitFor(async () => (folders = await next(h, dirs, false)) !== undefined, 'the class watch to be ready', { pollMs: 50 });
  return folders!;
}

/** Cycles until the folders the cycles gave (together) hold `folder`; all they gave. */
async function untilSeen(h: ClassHints, dirs: string[], folder: string): Promise<Set<string>> {
  const seen = new Set<string>();
  await waitFor(
    async () => {
      for (const dirty of (await next(h, dirs, false)) ?? []) seen.add(dirty);
      return seen.has(folder);
    },
    `${folder} in a cycle's folders`,
    { pollMs: 50 },
  );
  return seen;
}

function hints(options: Partial<Parameters<typeof classHints>[0]> = {}): ClassHints {
  const made = classHints({ stalePass: async () => [], onError: (error) => expect.fail(error.message), ...options });
  open.push(made);
  return made;
}

describe('classHints', () => {
  it('gives a full pass first, then only the folders that changed; a full pass whenever the cycle scans all anyway', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    const a = put(classes, 'com/acme/A.class');
    put(classes, 'org/other/B.class');
    const h = hints();
    await h.watch([classes]);
    expect(await next(h, [classes], false)).toBeUndefined();
    expect(await untilReady(h, [classes])).toEqual(new Set());
    fs.writeFileSync(a, 'a-2');
    expect(await untilSeen(h, [classes], path.dirname(a))).toEqual(new Set([path.dirname(a)]));
    fs.writeFileSync(a, 'a-3');
    await sleep(200);
    expect(await next(h, [classes], true)).toBeUndefined();
    expect(await next(h, [classes], false)).toEqual(new Set());
  });

  it('a new set of class output directories is watched afresh, its first pass full', async () => {
    const root = tempTree();
    const one = mkdirs(root, 'a/target/classes');
    const two = mkdirs(root, 'b/target/classes');
    const h = hints();
    await h.watch([one]);
    expect(await next(h, [one], false)).toBeUndefined();
    expect(await untilReady(h, [one])).toEqual(new Set());
    expect(await next(h, [one], false)).toEqual(new Set());
    expect(await next(h, [one, two], false)).toBeUndefined();
  });

  it('the background pass marks the folders it found stale, once a pass is due', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    put(classes, 'com/acme/A.class');
    const stale = path.join(classes, 'com', 'acme');
    let passes = 0;
    const h = hints({
      fullPassEveryMs: 300,
      checkEveryMs: 50,
      stalePass: async () => {
        passes += 1;
        return [stale];
      },
    });
    await h.watch([classes]);
    await next(h, [classes], false);
    // A background pass before the watch is ready is covered by a full pass; then one that marks folders.
    const seen = new Set(await untilReady(h, [classes]));
    const passesWhenReady = passes;
    await waitFor(() => passes > passesWhenReady, 'a background pass');
    for (const dirty of (await next(h, [classes], false)) ?? []) seen.add(dirty);
    expect(seen).toEqual(new Set([stale]));
  });
});

describe('staleFolders', () => {
  it('names the folders whose class files moved from the record, and every folder with no record', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    const a = put(classes, 'com/acme/A.class', 'a');
    put(classes, 'org/other/B.class', 'b');
    const gone = put(classes, 'net/gone/C.class', 'c');
    const warn = (message: string) => expect.fail(message);
    expect(await staleFolders(root, [classes], warn)).toEqual(
      new Set(['com/acme', 'org/other', 'net/gone'].map((f) => path.join(classes, f))),
    );
    const { index } = await detectChanges(emptyIndex('s1'), [classes], {
      judge: () => ({ kind: 'live', by: 'pre-start', code: EVIDENCE.preStart }),
    });
    writeClassIndex(root, index);
    expect(await staleFolders(root, [classes], warn)).toEqual(new Set());
    fs.writeFileSync(a, 'a-2');
    fs.rmSync(gone);
    put(classes, 'org/other/New.class', 'n');
    expect(await staleFolders(root, [classes], warn)).toEqual(
      new Set(['com/acme', 'org/other', 'net/gone'].map((f) => path.join(classes, f))),
    );
  });
});
