/**
 * What watch-mode detection costs for a few changed classes in a large tree, as the class
 * watch's hints give it: take the dirty folders, then list and stat the files in them. The
 * bench (watch-figures.mjs) runs it on the built class watch, test/watch/resources.test.ts on
 * the source's.
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * Starts a class watch on `classDirs`; per round runs `change` (called with the round, from 0,
 * awaited), waits for its events, and times detection. Resolves `{ readyMs, readyRss, rounds }`:
 * the watch's start (its initial scan) in ms, this process's resident memory once it was ready
 * in bytes, and per round `{ eventsMs, detectMs, folders }` (from the end of `change` until the
 * last dirty folder was seen; taking the dirty folders plus `detect`; how many there were).
 * @param {object} options
 * @param {(options: { dirs: readonly string[] }) => any} options.watchClassDirs classes/classwatch's `watchClassDirs`
 * @param {readonly string[]} options.classDirs the class output folders of the tree (absolute)
 * @param {(round: number) => void | Promise<void>} options.change changes the tree as a build would
 * @param {number} [options.rounds] rounds on the one watch (default 1): its start is paid once, as in a watch
 * @param {(folders: ReadonlySet<string>) => unknown} [options.detect] detection from the dirty folders
 *   (default: list and stat the files in them); a watch cycle passes them to `detectChanges` as `folders`
 * @param {number} [options.settleMs] how long no new dirty folder must appear before the events count as all in (default 100)
 * @param {number} [options.timeoutMs] the longest wait for the first event after `change` (default 10,000)
 * @throws Error when no event arrives within `timeoutMs` after a `change`.
 */
export async function measureWatchDetection(options) {
  const started = performance.now();
  const watch = options.watchClassDirs({ dirs: options.classDirs });
  try {
    await watch.ready;
    const readyMs = performance.now() - started;
    const readyRss = process.memoryUsage.rss();
    const rounds = [];
    for (let round = 0; round < (options.rounds ?? 1); round += 1) rounds.push(await measureRound(watch, options, round));
    return { readyMs, readyRss, rounds };
  } finally {
    await watch.close();
  }
}

async function measureRound(watch, options, round) {
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
function statFiles(folders) {
  for (const folder of folders) {
    let entries;
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) if (entry.isFile()) fs.statSync(path.join(folder, entry.name));
  }
}
