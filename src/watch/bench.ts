/**
 * A measurement for the benchmark (bench/run.mjs), not used by the watch itself: what watch-mode
 * detection costs for a few changed classes in a large tree, as the class watch's hints give it:
 * take the dirty folders, then list and stat the files in them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { watchClassDirs, type ClassWatch } from './classwatch.js';

/** What {@link measureWatchDetection} needs. */
export interface DetectionBenchOptions {
  /** The class output folders of the tree (absolute). */
  classDirs: readonly string[];
  /** Changes the tree as a build would (for example rewrites 10 class files); awaited. Called with the round, from 0. */
  change: (round: number) => void | Promise<void>;
  /** Rounds on the one watch (default 1): its start is paid once, as in a watch. */
  rounds?: number;
  /**
   * Detection from the dirty folders, timed as the figure (default: list and stat the files in
   * them). A watch cycle passes them to classes/snapshot.ts `detectChanges` as `folders`.
   */
  detect?: (folders: ReadonlySet<string>) => unknown;
  /** How long no new dirty folder must appear before the events count as all in, in ms (default 100). */
  settleMs?: number;
  /** The longest wait for the first event after `change`, in ms (default 10,000). */
  timeoutMs?: number;
}

/** One round's figures, in ms, and what detection looked at. */
interface DetectionRound {
  /** From the end of `change` until the last dirty folder was seen. */
  eventsMs: number;
  /** `takeDirtyFolders` plus `detect`: the detection figure. */
  detectMs: number;
  /** How many dirty folders there were. */
  folders: number;
}

/** The figures of {@link measureWatchDetection}. */
export interface DetectionBench {
  /** From starting the class watch until it was ready (the initial scan of the tree), in ms. */
  readyMs: number;
  /** Resident memory of this process once the watch was ready, in bytes. */
  readyRss: number;
  rounds: DetectionRound[];
}

/**
 * Starts a class watch on `classDirs`; per round runs `change`, waits for its events, and times
 * detection.
 * @throws Error when no event arrives within `timeoutMs` after a `change`.
 */
export async function measureWatchDetection(options: DetectionBenchOptions): Promise<DetectionBench> {
  const started = performance.now();
  const watch = watchClassDirs({ dirs: options.classDirs });
  try {
    await watch.ready;
    const readyMs = performance.now() - started;
    const readyRss = process.memoryUsage.rss();
    const rounds: DetectionRound[] = [];
    for (let round = 0; round < (options.rounds ?? 1); round += 1) rounds.push(await measureRound(watch, options, round));
    return { readyMs, readyRss, rounds };
  } finally {
    await watch.close();
  }
}

async function measureRound(watch: ClassWatch, options: DetectionBenchOptions, round: number): Promise<DetectionRound> {
  const settleMs = options.settleMs ?? 100;
  const timeoutMs = options.timeoutMs ?? 10_000;
  watch.takeDirtyFolders();
  await options.change(round);
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
  await (options.detect ?? statFiles)(folders);
  return { eventsMs: lastSeen - changed, detectMs: performance.now() - detectStart, folders: folders.size };
}

/** Stats every file directly in each of `folders`; a folder that is gone has none. */
function statFiles(folders: ReadonlySet<string>): void {
  for (const folder of folders) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) if (entry.isFile()) fs.statSync(path.join(folder, entry.name));
  }
}
