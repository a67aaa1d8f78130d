/**
 * A measurement for the benchmark (bench/run.mjs), not used by the watch itself: what watch-mode
 * detection costs for a few changed classes in a large tree, as the class watch's hints give it:
 * take the dirty folders, then list and stat the files in them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { watchClassDirs } from './classwatch.js';

/** What {@link measureWatchDetection} needs. */
export interface DetectionBenchOptions {
  /** The class output folders of the tree (absolute). */
  classDirs: readonly string[];
  /** Changes the tree as a build would (for example rewrites 10 class files); awaited. */
  change: () => void | Promise<void>;
  /** How long no new dirty folder must appear before the events count as all in, in ms (default 100). */
  settleMs?: number;
  /** The longest wait for the first event after `change`, in ms (default 10,000). */
  timeoutMs?: number;
}

/** The figures, in ms, and what detection looked at. */
export interface DetectionBench {
  /** From starting the class watch until it was ready (the initial scan of the tree). */
  readyMs: number;
  /** From the end of `change` until the last dirty folder was seen. */
  eventsMs: number;
  /** `takeDirtyFolders` plus listing and stat'ing every file in those folders: the detection figure. */
  detectMs: number;
  /** How many dirty folders there were. */
  folders: number;
  /** How many files were stat'ed. */
  files: number;
}

/**
 * Starts a class watch on `classDirs`, runs `change`, waits for its events, and times detection.
 * @throws Error when no event arrives within `timeoutMs` after `change`.
 */
export async function measureWatchDetection(options: DetectionBenchOptions): Promise<DetectionBench> {
  const settleMs = options.settleMs ?? 100;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const started = performance.now();
  const watch = watchClassDirs({ dirs: options.classDirs });
  try {
    await watch.ready;
    const readyMs = performance.now() - started;
    watch.takeDirtyFolders();
    await options.change();
    const changed = performance.now();
    let lastSeen = changed;
    let seen = 0;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const t = performance.now();
      if (watch.dirtyCount !== seen) {
        seen = watch.dirtyCount;
        lastSeen = t;
      } else if (seen > 0 && t - lastSeen >= settleMs) {
        break;
      } else if (seen === 0 && t - changed >= timeoutMs) {
        throw new Error(`no class folder event within ${timeoutMs} ms of the change`);
      }
    }
    const detectStart = performance.now();
    const folders = watch.takeDirtyFolders();
    let files = 0;
    for (const folder of folders) files += statFiles(folder);
    const detectMs = performance.now() - detectStart;
    return { readyMs, eventsMs: lastSeen - changed, detectMs, folders: folders.size, files };
  } finally {
    await watch.close();
  }
}

/** Stats every file directly in `folder`; a folder that is gone has none. */
function statFiles(folder: string): number {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    fs.statSync(path.join(folder, entry.name));
    count += 1;
  }
  return count;
}
