/**
 * A folder-level watch over a few roots, on chokidar 4: the one place that talks to chokidar, for
 * both the source watcher and the class output watch.
 *
 * Why folders only: chokidar puts an fs.watch (one inotify watch on Linux) on every file it
 * tracks, so a 200,000-class tree would cost 200,000 kernel watches and as many handles. Files are
 * therefore ignored and only folders are watched; a folder's own watch still reports every entry
 * that is created, written, renamed or removed in it, through chokidar's `raw` event. A root that is
 * a file is tracked as a file (its folder is not watched).
 *
 * Why the re-watching: chokidar never picks up a root that did not exist when it was added, loses a
 * root for good once it is removed (`mvn clean`), and goes blind, without an error, on a folder
 * that is removed and made again before it looks (`rm -rf` then a compile; the new folder may even
 * reuse the inode). So a folder whose own watch reports its removal is watched afresh when it
 * exists again, and every `recheckMs` the roots (only the roots, a few stat calls) are checked: a
 * missing root that now exists is watched, a root that went away or was replaced is watched
 * afresh. Each time, `onGap` says changes below that folder may have gone unseen.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FSWatcher } from 'chokidar';

/** A change below a watched root. */
interface TreeChange {
  /** Absolute path of what changed: a file or a folder; it may no longer exist. */
  path: string;
  /** The folder whose listing or file changed (for a root file, the root's own folder). */
  folder: string;
  /** True when `path` is known to be a folder (created, found, or removed). */
  dir: boolean;
}

/** What {@link watchTree} needs. */
export interface TreeWatchOptions {
  /** Folders or files to watch; relative paths are resolved against the current folder. */
  roots: readonly string[];
  /** Paths (absolute) to leave out, with everything below them; decided by name, without a stat. Roots are never left out. */
  ignore: (absolutePath: string) => boolean;
  /** Called for each change. Several calls may name the same path. */
  onChange: (change: TreeChange) => void;
  /**
   * Called when a root or folder appeared, went away or was replaced: changes below it may have
   * gone unseen. It is watched (again) when it exists.
   */
  onGap: (folder: string) => void;
  /** Called for each error the watcher reports (for example ENOSPC: out of inotify watches). */
  onError: (error: Error) => void;
  /** How often the roots are checked for appearing, going away or being replaced, in ms (default 1000). */
  recheckMs?: number;
}

/** A running watch. */
export interface TreeWatch {
  /** Resolves once the roots present at the start are fully watched (also when the watch is closed first). */
  readonly ready: Promise<void>;
  /** Roots not watched right now because they do not exist. */
  missingRoots(): string[];
  /** Stops watching and releases every handle and timer. Safe to call more than once. */
  close(): Promise<void>;
}

/** The default period of the roots' recheck, in ms. */
const RECHECK_MS = 1000;

/** How long after a folder reported its own removal it is looked at again, in ms: `rm -rf` and `mkdir` come in quick pairs. */
const REWATCH_DELAY_MS = 20;

/** The identity of a watched root, to see it replaced. */
interface Armed {
  dev: number;
  ino: number;
  /** A root file: chokidar follows its replacement (an editor's rename-save) by itself. */
  file: boolean;
}

/** Starts watching `options.roots`. Never throws for a missing root: it is watched once it exists. */
export function watchTree(options: TreeWatchOptions): TreeWatch {
  const roots = [...new Set(options.roots.map((root) => path.resolve(root)))];
  const rootSet = new Set(roots);
  const armed = new Map<string, Armed>();
  const isRootFile = (candidate: string): boolean => armed.get(candidate)?.file === true;
  let closed = false;
  let signalClosed: () => void = () => undefined;
  const closing = new Promise<void>((resolve) => (signalClosed = resolve));

  const watcher = new FSWatcher({
    ignoreInitial: true,
    persistent: true,
    ignored: (candidate, stats) => !rootSet.has(candidate) && (options.ignore(candidate) || stats?.isFile() === true),
  });

  watcher.on('raw', (_event, name, details) => {
    const watched = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (closed || watched === undefined || isRootFile(watched)) return;
    const change = rawChange(watched, typeof name === 'string' ? name : undefined);
    if (rootSet.has(change.path) || !options.ignore(change.path)) options.onChange(change);
    if (change.path === watched && change.folder !== watched) rewatchSoon(watched);
  });
  watcher.on('all', (event, changed) => {
    if (closed) return;
    if ((event === 'unlink' || event === 'unlinkDir') && armed.has(changed)) {
      disarm(changed);
      options.onGap(changed);
    } else if (isRootFile(changed)) {
      options.onChange({ path: changed, folder: path.dirname(changed), dir: false });
    } else if (event === 'addDir' || event === 'unlinkDir') {
      // Folders found by chokidar's scan of a new folder: their files were written before any watch.
      options.onChange({ path: changed, folder: path.dirname(changed), dir: true });
    }
  });
  watcher.on('error', (error) => {
    if (!closed) options.onError(error instanceof Error ? error : new Error(String(error)));
  });

  function arm(root: string, stats: fs.Stats): void {
    armed.set(root, { dev: stats.dev, ino: stats.ino, file: !stats.isDirectory() });
    watcher.add(root);
  }
  function disarm(root: string): void {
    armed.delete(root);
    watcher.unwatch(root);
  }

  // A folder whose watch reported its removal: the kernel dropped that watch.
  const toRewatch = new Set<string>();
  let rewatchTimer: NodeJS.Timeout | undefined;
  function rewatchSoon(folder: string): void {
    toRewatch.add(folder);
    rewatchTimer ??= setTimeout(rewatch, REWATCH_DELAY_MS);
  }
  function rewatch(): void {
    rewatchTimer = undefined;
    const folders = [...toRewatch];
    toRewatch.clear();
    for (const folder of folders) {
      if (closed) return;
      const stats = statOrUndefined(folder);
      if (rootSet.has(folder)) {
        if (armed.has(folder)) disarm(folder);
        if (stats) arm(folder, stats);
      } else if (stats?.isDirectory()) {
        watcher.unwatch(folder);
        watcher.add(folder);
      } else {
        continue; // gone: chokidar reports the removal, and its parent's watch sees it made again
      }
      options.onGap(folder);
    }
  }

  for (const root of roots) {
    const stats = statOrUndefined(root);
    if (stats) arm(root, stats);
  }
  const ready =
    armed.size === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          watcher.once('ready', () => resolve());
          void closing.then(resolve);
        });

  const recheck = (): void => {
    if (closed) return;
    for (const root of roots) {
      const stats = statOrUndefined(root);
      const known = armed.get(root);
      if (known && stats && (known.file || (known.dev === stats.dev && known.ino === stats.ino))) continue;
      if (known) disarm(root);
      if (stats) arm(root, stats);
      if (known || stats) options.onGap(root);
    }
  };
  // Kept referenced like chokidar's own handles: an open watch keeps the process alive until closed.
  const timer = setInterval(recheck, options.recheckMs ?? RECHECK_MS);

  let closeOnce: Promise<void> | undefined;
  return {
    ready,
    missingRoots: () => roots.filter((root) => !armed.has(root)),
    close() {
      closeOnce ??= (async () => {
        closed = true;
        clearInterval(timer);
        clearTimeout(rewatchTimer);
        signalClosed();
        await watcher.close();
      })();
      return closeOnce;
    },
  };
}

/**
 * The change a folder watch's raw event names. A folder's watch also reports its own removal, with
 * its own name: when `folder/name` does not exist, that is the folder itself.
 */
function rawChange(watched: string, name: string | undefined): TreeChange {
  if (name === undefined || name === '') return { path: watched, folder: watched, dir: true };
  const full = path.join(watched, name);
  if (name === path.basename(watched) && !fs.existsSync(full)) {
    return { path: watched, folder: path.dirname(watched), dir: true };
  }
  return { path: full, folder: watched, dir: false };
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}
