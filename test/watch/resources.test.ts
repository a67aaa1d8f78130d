/**
 * A watch runs all day: closing a watcher releases every descriptor and kernel watch, and a
 * tree costs one kernel watch per folder, not per file. Linux only (/proc).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureWatchDetection } from '../../bench/watch-detection.mjs';
import { watchClassDirs } from '../../src/watch/classwatch.js';
import { watchSources } from '../../src/watch/watcher.js';
import { put, tempTree } from './tmp.js';
import { sleep } from '../support/wait.js';

const linux = process.platform === 'linux';

function openDescriptors(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/** The inotify watches this process holds, over all its inotify descriptors. */
function inotifyWatches(): number {
  let count = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      count += fs
        .readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('inotify ')).length;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

/** Node's fs.watch handles and timers alive in this process. */
function watchHandles(): { watchers: number; timers: number } {
  const alive = process.getActiveResourcesInfo();
  return { watchers: alive.filter((r) => r === 'FSEventWrap').length, timers: alive.filter((r) => r === 'Timeout').length };
}

/** `packages` package folders of 50 files each below `root`. */
function tree(root: string, ext: string, packages = 10): void {
  for (let p = 0; p < packages; p++) for (let c = 0; c < 50; c++) put(root, `com/acme/p${p}/C${c}.${ext}`, 'x');
}

describe.runIf(linux)('watch resources', () => {
  it('opening and closing a source watcher and a class watch 50 times leaves no descriptor or kernel watch behind', async () => {
    const once = async () => {
      // A fresh tree each time: chokidar shares the handles of folders that are already watched.
      const root = tempTree();
      const src = path.join(root, 'src/main/java');
      const classes = path.join(root, 'target/classes');
      tree(src, 'java', 3);
      tree(classes, 'class', 3);
      const sources = watchSources({ roots: [src, path.join(root, 'missing')], onChange: () => undefined, onError: () => undefined });
      const classWatch = watchClassDirs({ dirs: [classes] });
      await Promise.all([sources.ready, classWatch.ready]);
      put(src, 'com/acme/p0/C0.java', 'y');
      await Promise.all([sources.close(), classWatch.close()]);
    };
    await once(); // libuv's inotify descriptor and thread pool come with the first watch
    await sleep(100); // fs.watch handles finish closing just after close() resolves
    const descriptors = openDescriptors();
    const watches = inotifyWatches();
    const handles = watchHandles();
    for (let i = 0; i < 50; i++) await once();
    await sleep(100);
    expect(openDescriptors()).toBeLessThanOrEqual(descriptors);
    expect(inotifyWatches()).toBeLessThanOrEqual(watches);
    expect(watchHandles()).toEqual(handles);
  });

  it('costs one kernel watch per folder, not per file', async () => {
    const root = tempTree();
    tree(root, 'class'); // 500 files in 13 folders
    const before = inotifyWatches();
    const watch = watchClassDirs({ dirs: [root] });
    await watch.ready;
    const used = inotifyWatches() - before;
    await watch.close();
    expect(used).toBe(13);
  });

  it('measures detection for the bench: the changed folders are found and their files stat-ed', async () => {
    const root = tempTree();
    tree(root, 'class');
    let seen: string[] = [];
    const figures = await measureWatchDetection({
      watchClassDirs,
      classDirs: [root],
      change: () => {
        fs.writeFileSync(path.join(root, 'com/acme/p1/C3.class'), 'new');
        fs.writeFileSync(path.join(root, 'com/acme/p7/C9.class'), 'new');
      },
      settleMs: 50,
      detect: (folders) => (seen = [...folders].sort()),
    });
    expect(seen).toEqual([path.join(root, 'com/acme/p1'), path.join(root, 'com/acme/p7')]);
    expect(figures.rounds).toHaveLength(1);
    expect(figures.rounds[0]).toMatchObject({ folders: 2 });
    expect(figures.rounds[0]!.detectMs).toBeGreaterThan(0);
    expect(figures.readyMs).toBeGreaterThan(0);
  });
});
