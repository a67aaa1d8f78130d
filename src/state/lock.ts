/**
 * Serialises reclazz-build runs in one checkout with an advisory lock (proper-lockfile), so
 * two runs never hold the agent with one owner token at the same time. A lock left by a killed
 * run goes stale (its mtime stops being refreshed) and is taken over.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { StateError, stateDir, writingState } from './store.js';

/** A lock not refreshed for this long belongs to a dead run, in ms. */
export const LOCK_STALE_MS = 5000;
/** How often a waiting run tries again, in ms. */
export const LOCK_RETRY_MS = 100;

/** The result of {@link acquireRunLock}. */
export type LockResult =
  | { kind: 'locked'; release: () => Promise<void> }
  | { kind: 'busy'; waitedMs: number; lockPath: string }
  | { kind: 'aborted' };

/**
 * Takes the run lock of `projectDir` (`.reclazz/build.lock`), waiting up to `waitMs` ms while
 * another run holds it and reporting the wait through `onWait`. `onLost` is called if the lock
 * is later taken over (this run stopped refreshing it for {@link LOCK_STALE_MS} ms).
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
  writingState(dir, () => fs.mkdirSync(dir, { recursive: true }));
  const start = performance.now();
  for (;;) {
    try {
      const release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        stale: LOCK_STALE_MS,
        realpath: false,
        // Another run took the lock over: this one stalled past LOCK_STALE_MS, or the lock folder was removed.
        onCompromised: onLost,
      });
      return { kind: 'locked', release: () => release().catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw new StateError(lockPath, error);
    }
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
