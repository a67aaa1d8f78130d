/**
 * Detection hints for the class output folders during a watch: a folder with any event since the
 * last take is dirty. Events are hints only (an inotify overflow can pass unreported), so a full
 * stat pass is due every `fullPassEveryMs` and after a possible miss. Folders holding class files
 * that are symbolic links are in every take. Verdicts are the caller's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { watchTree } from './fswatch.js';
import { startsWithDir } from '../util/fs.js';

/** The longest time between two full stat passes, in ms (issue "Detection in watch mode"). */
export const FULL_PASS_EVERY_MS = 60_000;

/** What {@link watchClassDirs} needs. */
export interface ClassWatchOptions {
  /** The class output folders (absolute); missing ones are watched once they exist. */
  dirs: readonly string[];
  /** The longest time between two full passes, in ms (default {@link FULL_PASS_EVERY_MS}). */
  fullPassEveryMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
  /** Called for each watcher error, after it was noted. */
  onError?: (error: Error) => void;
  /** How often missing or removed class folders are looked for, in ms (default 1000). */
  recheckMs?: number;
}

/** A running class folder watch. */
export interface ClassWatch {
  /** Resolves once the existing class folders are fully watched. Run the first full pass after it. */
  readonly ready: Promise<void>;
  /**
   * Takes (and clears) the folders (absolute) that had an event since the last take, plus those
   * holding linked class files. A folder may no longer exist; a new one comes with its parent.
   */
  takeDirtyFolders(): Set<string>;
  /** Marks `folders` (absolute) dirty, as a full stat pass found them; folders outside the class folders are left out. */
  markDirty(folders: Iterable<string>): void;
  /** How many folders are dirty right now, without taking them. */
  readonly dirtyCount: number;
  /** True when a full stat pass is due at `now` (ms): none yet, the last is too old, or the watch may have missed events. */
  fullPassDue(now?: number): boolean;
  /** Records a full pass that started at `startedAt` (ms, default the clock); pass the time it started, not ended. */
  markFullPass(startedAt?: number): void;
  /** How many errors the watcher reported so far. */
  readonly errorCount: number;
  /** The last error the watcher reported, if any. */
  readonly lastError: Error | undefined;
  /** Stops watching; releases every handle and timer. */
  close(): Promise<void>;
}

/**
 * Starts watching the class output folders.
 * @throws RangeError when `fullPassEveryMs` is not a positive number of ms.
 */
export function watchClassDirs(options: ClassWatchOptions): ClassWatch {
  const every = fullPassPeriod(options.fullPassEveryMs);
  const now = options.now ?? Date.now;
  const roots = options.dirs.map((dir) => path.resolve(dir));
  let dirty = new Set<string>();
  const inside = (file: string) => roots.some((root) => startsWithDir(file, root));
  // A root's own removal is reported against its parent: keep only folders inside the class folders.
  const markDirty = (folder: string): void => {
    if (inside(folder)) dirty.add(folder);
  };
  // Class files that are symbolic links, as the watch found them; dropped once no longer a link.
  const links = new Set<string>();
  let lastPassAt: number | undefined;
  // The latest time the watch may have missed an event; a full pass that started after it covers it.
  let gapAt: number | undefined;
  let errorCount = 0;
  let lastError: Error | undefined;
  let isReady = false;

  const tree = watchTree({
    roots,
    ignore: () => false,
    onChange: (change) => {
      markDirty(change.folder);
      if (change.dir) markDirty(change.path);
    },
    onGap: (folder) => {
      markDirty(folder);
      gapAt = now();
    },
    onError: (error) => {
      errorCount += 1;
      lastError = error;
      gapAt = now();
      options.onError?.(error);
    },
    recheckMs: options.recheckMs,
    onLink: (link) => {
      if (link.endsWith('.class') && inside(link)) links.add(link);
    },
  });
  const ready = tree.ready.then(() => {
    isReady = true;
    // A pass marked before the watch was ready may have missed changes made before it was.
    if (lastPassAt !== undefined) gapAt = now();
  });

  return {
    ready,
    takeDirtyFolders() {
      const taken = dirty;
      dirty = new Set();
      for (const folder of linkedFolders(links)) taken.add(folder);
      return taken;
    },
    markDirty(folders) {
      for (const folder of folders) markDirty(folder);
    },
    get dirtyCount() {
      return dirty.size;
    },
    fullPassDue(at = now()) {
      if (lastPassAt === undefined || !isReady) return true;
      if (gapAt !== undefined && gapAt >= lastPassAt) return true;
      return at - lastPassAt >= every;
    },
    markFullPass(startedAt = now()) {
      lastPassAt = lastPassAt === undefined ? startedAt : Math.max(lastPassAt, startedAt);
    },
    get errorCount() {
      return errorCount;
    },
    get lastError() {
      return lastError;
    },
    close: () => tree.close(),
  };
}

/**
 * The full pass period given (ms), or the default.
 * @throws RangeError when it is not a positive number.
 */
function fullPassPeriod(every = FULL_PASS_EVERY_MS): number {
  if (!Number.isFinite(every) || every <= 0)
    throw new RangeError(`the full pass period must be a positive number of ms, got ${String(every)}`);
  return every;
}

/** The folders of the class files of `links` that are still symbolic links; the others leave `links`. */
function linkedFolders(links: Set<string>): string[] {
  const folders: string[] = [];
  for (const link of links) {
    if (isLink(link)) folders.push(path.dirname(link));
    else links.delete(link);
  }
  return folders;
}

/** True when `file` is a symbolic link now. */
function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}
