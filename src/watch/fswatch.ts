/**
 * A folder-level watch over a few roots: the one place that talks to chokidar (4). Only folders
 * are watched, since chokidar spends one kernel watch per file it tracks; a folder's `raw` events
 * still name each entry changed in it. Links found go to `onLink`: a write through one lands
 * elsewhere. Chokidar misses a root that appears late and goes blind on a folder removed and made
 * again (`mvn clean`, `rm -rf`), so such folders are watched afresh and the roots are rechecked
 * every `recheckMs`; `onGap` says changes below may have gone unseen.
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
  recheckMs?: number | undefined;
  /** Called for each symbolic link found below a root when its folder is (re)read; may repeat a link. */
  onLink?: (link: string) => void;
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
  const tree = new TreeWatcher(options);
  return { ready: tree.ready, missingRoots: () => tree.missingRoots(), close: () => tree.close() };
}

/** One watch's state: the roots, which of them are armed, the chokidar watcher and the timers. */
class TreeWatcher {
  readonly ready: Promise<void>;
  private readonly options: TreeWatchOptions;
  private readonly roots: string[];
  private readonly rootSet: Set<string>;
  private readonly armed = new Map<string, Armed>();
  private readonly watcher: FSWatcher;
  // A folder whose watch reported its removal: the kernel dropped that watch.
  private readonly toRewatch = new Set<string>();
  private rewatchTimer: NodeJS.Timeout | undefined;
  private readonly recheckTimer: NodeJS.Timeout;
  private closed = false;
  private closeOnce: Promise<void> | undefined;
  private signalClosed: () => void = () => undefined;

  constructor(options: TreeWatchOptions) {
    this.options = options;
    this.roots = [...new Set(options.roots.map((root) => path.resolve(root)))];
    this.rootSet = new Set(this.roots);
    const closing = new Promise<void>((resolve) => (this.signalClosed = resolve));
    this.watcher = new FSWatcher({
      ignoreInitial: true,
      persistent: true,
      ignored: (candidate, stats) => this.ignored(candidate, stats),
    });
    this.listen();
    for (const root of this.roots) {
      const stats = statOrUndefined(root);
      if (stats) this.arm(root, stats);
    }
    this.ready =
      this.armed.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            this.watcher.once('ready', () => resolve());
            void closing.then(resolve);
          });
    // Kept referenced like chokidar's own handles: an open watch keeps the process alive until closed.
    this.recheckTimer = setInterval(() => this.recheck(), options.recheckMs ?? RECHECK_MS);
  }

  missingRoots(): string[] {
    return this.roots.filter((root) => !this.armed.has(root));
  }

  close(): Promise<void> {
    this.closeOnce ??= (async () => {
      this.closed = true;
      clearInterval(this.recheckTimer);
      clearTimeout(this.rewatchTimer);
      this.signalClosed();
      await this.watcher.close();
    })();
    return this.closeOnce;
  }

  private listen(): void {
    this.watcher.on('raw', (_event, name, details) => this.onRaw(name, details));
    this.watcher.on('all', (event, changed) => this.onEvent(event, changed));
    this.watcher.on('error', (error) => {
      if (!this.closed) this.options.onError(error instanceof Error ? error : new Error(String(error)));
    });
  }

  /** A folder watch's own report of an entry, or of the folder itself going away. */
  private onRaw(name: unknown, details: unknown): void {
    const watched = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (this.closed || watched === undefined || this.isRootFile(watched)) return;
    const change = rawChange(watched, typeof name === 'string' ? name : undefined);
    if (this.rootSet.has(change.path) || !this.options.ignore(change.path)) this.options.onChange(change);
    if (change.path === watched && change.folder !== watched) this.rewatchSoon(watched);
  }

  /** Chokidar's own events: a root removed, a root file changed, or folders found by a scan. */
  private onEvent(event: string, changed: string): void {
    if (this.closed) return;
    if ((event === 'unlink' || event === 'unlinkDir') && this.armed.has(changed)) {
      this.disarm(changed);
      this.options.onGap(changed);
    } else if (this.isRootFile(changed)) {
      this.options.onChange({ path: changed, folder: path.dirname(changed), dir: false });
    } else if (event === 'addDir' || event === 'unlinkDir') {
      // Folders found by chokidar's scan of a new folder: their files were written before any watch.
      this.options.onChange({ path: changed, folder: path.dirname(changed), dir: true });
    }
  }

  /**
   * Chokidar's filter: roots are kept, `ignore`'s paths and files are left out (folders only).
   * A folder's entries come with their lstat, so a symbolic link shows as one here.
   */
  private ignored(candidate: string, stats: fs.Stats | undefined): boolean {
    if (this.rootSet.has(candidate)) return false;
    if (this.options.ignore(candidate)) return true;
    if (stats?.isSymbolicLink() === true && !this.closed) this.options.onLink?.(candidate);
    return stats?.isFile() === true;
  }

  private isRootFile(candidate: string): boolean {
    return this.armed.get(candidate)?.file === true;
  }

  private arm(root: string, stats: fs.Stats): void {
    this.armed.set(root, { dev: stats.dev, ino: stats.ino, file: !stats.isDirectory() });
    this.watcher.add(root);
  }

  private disarm(root: string): void {
    this.armed.delete(root);
    this.watcher.unwatch(root);
  }

  private rewatchSoon(folder: string): void {
    this.toRewatch.add(folder);
    this.rewatchTimer ??= setTimeout(() => this.rewatch(), REWATCH_DELAY_MS);
  }

  private rewatch(): void {
    this.rewatchTimer = undefined;
    const folders = [...this.toRewatch];
    this.toRewatch.clear();
    for (const folder of folders) {
      if (this.closed) return;
      const stats = statOrUndefined(folder);
      if (this.rootSet.has(folder)) {
        if (this.armed.has(folder)) this.disarm(folder);
        if (stats) this.arm(folder, stats);
      } else if (stats?.isDirectory()) {
        this.watcher.unwatch(folder);
        this.watcher.add(folder);
      } else {
        continue; // gone: chokidar reports the removal, and its parent's watch sees it made again
      }
      this.options.onGap(folder);
    }
  }

  /** Every `recheckMs`: watches a root that appeared, and afresh one that went away or was replaced. */
  private recheck(): void {
    if (this.closed) return;
    for (const root of this.roots) {
      const stats = statOrUndefined(root);
      const known = this.armed.get(root);
      if (known && stats && (known.file || (known.dev === stats.dev && known.ino === stats.ino))) continue;
      if (known) this.disarm(root);
      if (stats) this.arm(root, stats);
      if (known || stats) this.options.onGap(root);
    }
  }
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
