/**
 * The agent's watches on its class output directories (agent watcher/FileWatcher.java: the JDK's
 * WatchService, inotify on Linux): a watch is on the folder itself, not on its path. A watched
 * folder renamed away keeps its watch where it went, so a folder put at its path in its place is
 * not watched; a watched folder deleted loses its watch, and the path is watched again once a
 * folder is there (FileWatcher.recoverLostDirectories, a clean build). The fake holds each folder
 * open to tell the two apart: a deleted folder has no links left.
 */
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';

/** One watched root: its path and the folder held. */
interface Watch {
  path: string;
  fd: number | undefined;
  ino: number;
}

/** The roots a running application's agent watches. */
export class RootWatches {
  private watches: Watch[] = [];

  /** Watches `roots` (absolute, existing) from now, letting go of any earlier ones. */
  reset(roots: readonly string[]): void {
    this.release();
    this.watches = roots.flatMap((root) => {
      const watch = open(root);
      return watch === undefined ? [] : [watch];
    });
  }

  /** The roots watched now: each whose folder is the one watched, or a new one where the watched folder was deleted. */
  current(): string[] {
    const roots: string[] = [];
    for (const [i, watch] of this.watches.entries()) {
      const ino = inodeOf(watch.path);
      if (ino === undefined) continue;
      if (ino !== watch.ino) {
        if (!deleted(watch)) continue; // renamed away: the watch went with it
        closeFd(watch.fd);
        const again = open(watch.path);
        if (again === undefined) continue;
        this.watches[i] = again;
      }
      roots.push(watch.path);
    }
    return roots;
  }

  /** Lets go of every watched folder (the application stops or restarts). */
  release(): void {
    for (const watch of this.watches) closeFd(watch.fd);
    this.watches = [];
  }
}

function open(path: string): Watch | undefined {
  const ino = inodeOf(path);
  if (ino === undefined) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
  } catch {
    fd = undefined; // a platform that cannot open a folder: its path stands for it
  }
  return { path, fd, ino };
}

/** True when the watched folder no longer exists anywhere (no links), or cannot be held to tell. */
function deleted(watch: Watch): boolean {
  if (watch.fd === undefined) return true;
  try {
    return fstatSync(watch.fd).nlink === 0;
  } catch {
    return true;
  }
}

function inodeOf(path: string): number | undefined {
  try {
    const stat = statSync(path);
    return stat.isDirectory() ? stat.ino : undefined;
  } catch {
    return undefined;
  }
}

function closeFd(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
