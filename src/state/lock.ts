/**
 * Serialises reclazz-build runs in one checkout with an advisory lock (proper-lockfile), so
 * two runs never hold the agent with one owner token at the same time. A lock left by a killed
 * run goes stale (its mtime stops being refreshed) and is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { StateError, stateDir, writingState } from './store.js';

/**
 * A lock not refreshed for this long belongs to a dead run, in ms, when its holder cannot be
 * checked (no holder file yet, or a run on another host sharing the folder).
 */
export const LOCK_STALE_MS = 5000;
/**
 * proper-lockfile's own staleness: long, because a run that is alive but not refreshing the lock
 * (suspended with Ctrl-Z, stopped in a debugger, a paused VM) must keep it; a run that is gone
 * is recognised by its process id instead (see the holder file).
 */
const LOCK_REFRESH_STALE_MS = 10 * 60_000;
/** How often a waiting run tries again, in ms. */
export const LOCK_RETRY_MS = 100;

/** The result of {@link acquireRunLock}. */
export type LockResult =
  | { kind: 'locked'; release: () => Promise<void> }
  | { kind: 'busy'; waitedMs: number; lockPath: string }
  | { kind: 'aborted' };

/**
 * Takes the run lock of `projectDir` (`.reclazz/build.lock`), waiting up to `waitMs` ms while
 * another run holds it and reporting the wait through `onWait`. Next to the lock,
 * `build.lock.holder` names this process, so that a later run can tell a lock left by a run
 * that is gone (taken over at once) from one of a run that is only slow or suspended (waited
 * for). `onLost` is called if the lock is taken over all the same (its folder was removed).
 * @throws StateError when the state folder or the lock cannot be created (for example a
 *   read-only checkout).
 */
export async function acquireRunLock(
  projectDir: string,
  waitMs: number,
  onWait: (elapsedMs: number) => void,
  signal?: AbortSignal,
  onLost: () => void = () => undefined,
): Promise<LockResult> {
  const dir = stateDir(projectDir);
  const lockPath = path.join(dir, 'build.lock');
  const holderPath = `${lockPath}.holder`;
  writingState(dir, () => fs.mkdirSync(dir, { recursive: true }));
  const start = performance.now();
  for (;;) {
    try {
      const release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        stale: LOCK_REFRESH_STALE_MS,
        update: LOCK_STALE_MS / 2,
        realpath: false,
        // Another run took the lock over (it found this one gone, or the lock folder was removed).
        onCompromised: onLost,
      });
      writingState(holderPath, () => fs.writeFileSync(holderPath, JSON.stringify({ pid: process.pid, host: os.hostname() })));
      return {
        kind: 'locked',
        release: () => {
          // The holder file goes first: a lock without one is never taken for a dead run's.
          fs.rmSync(holderPath, { force: true });
          return release().catch(() => undefined);
        },
      };
    } catch (error) {
      if (error instanceof StateError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw new StateError(lockPath, error);
    }
    if (takeOverFromTheGone(lockPath, holderPath)) continue;
    const elapsed = performance.now() - start;
    if (elapsed >= waitMs) return { kind: 'busy', waitedMs: Math.round(elapsed), lockPath };
    onWait(Math.round(elapsed));
    try {
      await sleep(LOCK_RETRY_MS, undefined, { signal });
    } catch {
      return { kind: 'aborted' };
    }
  }
}

/**
 * Removes the lock when the run holding it is gone: its holder file names a process on this
 * host that no longer exists, or there is no holder file and the lock has not been refreshed
 * for {@link LOCK_STALE_MS} ms. The holder file is first renamed to a name of our own, so of
 * several waiting runs only one removes the lock. A lock held by a live process is never
 * removed, however long since it was refreshed.
 * @returns true when the lock was removed (try to take it again at once).
 */
function takeOverFromTheGone(lockPath: string, holderPath: string): boolean {
  let holder: { pid: number; host: string } | undefined;
  try {
    holder = JSON.parse(fs.readFileSync(holderPath, 'utf8')) as { pid: number; host: string };
  } catch {
    holder = undefined;
  }
  try {
    if (holder === undefined) {
      if (Date.now() - fs.statSync(lockPath).mtimeMs < LOCK_STALE_MS) return false;
      fs.rmdirSync(lockPath);
      return true;
    }
    if (holder.host !== os.hostname() || isAlive(holder.pid)) return false;
    const claimed = `${holderPath}.${process.pid}`;
    fs.renameSync(holderPath, claimed);
    fs.rmdirSync(lockPath);
    fs.rmSync(claimed, { force: true });
    return true;
  } catch {
    // Another run got there first, or the lock was just released: try again.
    return false;
  }
}

/** Whether process `pid` exists (one of another user counts). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
