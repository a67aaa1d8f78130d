/** Class output folder hints on real temp trees, and when a full pass is due (with a fake clock). */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FULL_PASS_EVERY_MS, watchClassDirs, type ClassWatch, type ClassWatchOptions } from '../../src/watch/classwatch.js';
import { mkdirs, put, tempTree } from './tmp.js';
import { sleep, waitFor } from '../support/wait.js';

const open: ClassWatch[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

async function start(options: ClassWatchOptions): Promise<ClassWatch> {
  const watch = watchClassDirs(options);
  open.push(watch);
  await watch.ready;
  return watch;
}

/**
 * Writes `text` to `file` again and again until the watch reports its folder dirty, then waits a
 * little longer and takes the dirty set: a folder the watch took up after an event of its own
 * (a recheck, a new folder) is watched once that has run, not after a guessed time.
 */
async function rewriteUntilDirty(watch: ClassWatch, file: string, text: string): Promise<string[]> {
  const seen = new Set<string>();
  const folder = path.dirname(file);
  await waitFor(
    () => {
      for (const dirty of watch.takeDirtyFolders()) seen.add(dirty);
      if (seen.has(folder)) return true;
      fs.writeFileSync(file, text);
      return false;
    },
    `dirty ${folder}`,
    { pollMs: 50 },
  );
  await sleep(100);
  for (const dirty of watch.takeDirtyFolders()) seen.add(dirty);
  return [...seen].sort();
}

/** Waits until `folders` are all dirty, then a little longer, and takes the dirty set. */
async function take(watch: ClassWatch, folders: string[]): Promise<string[]> {
  const seen = new Set<string>();
  await waitFor(
    () => {
      for (const folder of watch.takeDirtyFolders()) seen.add(folder);
      return folders.every((folder) => seen.has(folder));
    },
    `dirty ${folders.join(', ')}`,
  );
  await sleep(100);
  for (const folder of watch.takeDirtyFolders()) seen.add(folder);
  return [...seen].sort();
}

describe('watchClassDirs: dirty folders', () => {
  it('collects the folders whose classes were written, added or removed since the last take', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    const a = put(classes, 'com/acme/A.class', 'a');
    const b = put(classes, 'com/acme/web/B.class', 'b');
    put(classes, 'org/other/C.class', 'c');
    const watch = await start({ dirs: [classes] });
    expect(watch.takeDirtyFolders()).toEqual(new Set());
    fs.writeFileSync(a, 'a2'); // javac rewrites in place
    fs.rmSync(b);
    expect(await take(watch, [path.dirname(a), path.dirname(b)])).toEqual([path.dirname(a), path.dirname(b)].sort());
    expect(watch.takeDirtyFolders()).toEqual(new Set());
    const added = put(classes, 'com/acme/A$Inner.class', 'inner');
    expect(await take(watch, [path.dirname(added)])).toEqual([path.dirname(added)]);
  });

  it('marks a new package folder and its parent, and sees classes written in it later', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'build/classes/java/main');
    put(classes, 'com/A.class');
    const watch = await start({ dirs: [classes] });
    // Made in one go, before any watch is on the new folders: the folders are marked, so their files get stat'ed.
    const deep = put(classes, 'com/acme/billing/Invoice.class');
    const dirty = await take(watch, [path.join(classes, 'com/acme'), path.join(classes, 'com/acme/billing')]);
    expect(dirty).toContain(path.join(classes, 'com'));
    expect(dirty).toContain(path.join(classes, 'com/acme/billing'));
    await sleep(100);
    watch.takeDirtyFolders();
    fs.writeFileSync(deep, 'v2');
    expect(await take(watch, [path.dirname(deep)])).toEqual([path.dirname(deep)]);
  });

  it('marks a removed package folder and its parent, and keeps dirty folders inside the class folders', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    put(classes, 'com/acme/A.class');
    put(classes, 'com/acme/sub/B.class');
    const watch = await start({ dirs: [classes] });
    fs.rmSync(path.join(classes, 'com/acme'), { recursive: true });
    const dirty = await take(watch, [path.join(classes, 'com'), path.join(classes, 'com/acme')]);
    expect(dirty.every((folder) => folder === classes || folder.startsWith(classes + path.sep))).toBe(true);
  });

  it('sees events between takes, whoever compiled (a build outside the watch included)', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    const a = put(classes, 'A.class');
    const watch = await start({ dirs: [classes] });
    fs.writeFileSync(a, 'compiled by another terminal');
    await sleep(200);
    expect(watch.dirtyCount).toBe(1);
    expect(watch.takeDirtyFolders()).toEqual(new Set([classes]));
  });
});

describe('watchClassDirs: full passes', () => {
  it('is due before any pass, then every 60 s by default (measured from when a pass started)', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    let now = 1_000_000;
    const watch = await start({ dirs: [classes], now: () => now });
    expect(FULL_PASS_EVERY_MS).toBe(60_000);
    expect(watch.fullPassDue()).toBe(true);
    watch.markFullPass(now);
    now += 59_999;
    expect(watch.fullPassDue()).toBe(false);
    expect(watch.fullPassDue(now + 1)).toBe(true);
    watch.markFullPass(500_000); // an older pass does not move the mark back
    expect(watch.fullPassDue(now + 1)).toBe(true);
    watch.markFullPass();
    expect(watch.fullPassDue()).toBe(false);
  });

  it('takes the period from the options, and rejects one that is not positive', async () => {
    const root = tempTree();
    let now = 0;
    const watch = await start({ dirs: [root], fullPassEveryMs: 5000, now: () => now });
    watch.markFullPass(0);
    now = 4999;
    expect(watch.fullPassDue()).toBe(false);
    now = 5000;
    expect(watch.fullPassDue()).toBe(true);
    expect(() => watchClassDirs({ dirs: [root], fullPassEveryMs: 0 })).toThrow(/positive number of ms/);
  });

  it('is due after a watcher error, until a pass that started after it; the error is noted and passed on', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    let now = 1000;
    const errors: Error[] = [];
    const watch = await start({ dirs: [classes], now: () => now, onError: (e) => errors.push(e) });
    watch.markFullPass(now);
    expect(watch.fullPassDue()).toBe(false);
    now = 2000;
    fs.symlinkSync('loop', path.join(classes, 'loop')); // stat fails with ELOOP
    await waitFor(() => watch.errorCount === 1, 'the error');
    expect((watch.lastError as NodeJS.ErrnoException).code).toBe('ELOOP');
    expect(errors).toHaveLength(1);
    expect(watch.fullPassDue()).toBe(true);
    watch.markFullPass(1500); // started before the error: does not cover it
    expect(watch.fullPassDue()).toBe(true);
    now = 2500;
    watch.markFullPass(2500);
    expect(watch.fullPassDue()).toBe(false);
  });

  it('watches a class folder made after the start (a clean build) and asks for a full pass then', async () => {
    const root = tempTree();
    const classes = path.join(root, 'target/classes');
    let now = 1000;
    const watch = await start({ dirs: [classes], now: () => now, recheckMs: 30 });
    watch.markFullPass(now);
    now = 2000;
    const a = put(classes, 'com/A.class');
    await waitFor(() => watch.fullPassDue(), 'the class folder');
    expect(watch.takeDirtyFolders()).toContain(classes);
    watch.markFullPass((now = 3000));
    await sleep(100);
    watch.takeDirtyFolders();
    expect(await rewriteUntilDirty(watch, a, 'v2')).toEqual([path.dirname(a)]);
    expect(watch.fullPassDue()).toBe(false);
  });

  it('asks for a full pass after mvn clean (the folder removed and made again), and keeps watching it', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    put(classes, 'com/A.class');
    let now = 1000;
    const watch = await start({ dirs: [classes], now: () => now, recheckMs: 30 });
    watch.markFullPass(now);
    now = 2000;
    fs.rmSync(path.join(root, 'target'), { recursive: true });
    const a = put(classes, 'com/A.class', 'recompiled');
    await waitFor(() => watch.fullPassDue(), 'the full pass flag');
    await sleep(100);
    watch.markFullPass((now = 3000));
    watch.takeDirtyFolders();
    expect(watch.fullPassDue()).toBe(false);
    // Seen once the recheck found the new folder.
    expect(await rewriteUntilDirty(watch, a, 'v3')).toEqual([path.dirname(a)]);
  });

  it('sees again a package folder removed and made at once (rm -rf, then a compile), and asks for a full pass', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    const acme = path.join(classes, 'com/acme');
    put(acme, 'A.class');
    let now = 1000;
    const watch = await start({ dirs: [classes], now: () => now });
    watch.markFullPass(now);
    now = 2000;
    fs.rmSync(acme, { recursive: true });
    const a = put(acme, 'A.class', 'recompiled'); // the new folder may even reuse the inode
    await waitFor(() => watch.fullPassDue(), 'the full pass flag');
    await sleep(100);
    watch.markFullPass((now = 3000));
    watch.takeDirtyFolders();
    expect(await rewriteUntilDirty(watch, a, 'v3')).toEqual([acme]);
    expect(watch.fullPassDue()).toBe(false);
  });

  it('is due when a pass was marked before the watch was ready', async () => {
    const root = tempTree();
    let now = 1000;
    const watch = watchClassDirs({ dirs: [root], now: () => now });
    open.push(watch);
    watch.markFullPass(now);
    expect(watch.fullPassDue()).toBe(true);
    now = 1001;
    await watch.ready;
    expect(watch.fullPassDue()).toBe(true);
    watch.markFullPass((now = 1002)); // a pass started after the watch was ready
    expect(watch.fullPassDue()).toBe(false);
  });
});
