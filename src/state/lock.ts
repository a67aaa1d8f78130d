/**
 * Serialises runs in one checkout (proper-lockfile), so two runs never hold the agent with one
 * owner token. A killed run's lock is taken over, but not while its build (the process group in
 * the holder file) still runs: it may still write class files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import * as z from 'zod/mini';
import type { BuildGroup, LockHolder } from '../outcome/facts.js';
import { readStateFile, refuseLink, removeStateFile, StateError, writeStateFile } from './files.js';
import { LOCK_DIR, LOCK_HOLDER_FILE, openStateFolder, removeInterruptedWrites } from './folder.js';
import { pause } from '../util/wait.js';

/**
 * A lock not refreshed for this long belongs to a dead run, in ms, when its holder cannot be
 * checked (no holder file yet, or a run on another host sharing the folder).
 */
const LOCK_STALE_MS = 5000;
/** proper-lockfile's own staleness: long, so a suspended run (Ctrl-Z, a debugger) keeps it; a gone run is known by its pid. */
const LOCK_REFRESH_STALE_MS = 10 * 60_000;
/** How often a waiting run tries again, in ms. */
const LOCK_RETRY_MS = 100;

/** The result of {@link acquireRunLock}. */
export type LockResult =
  | {
      kind: 'locked';
      release: () => Promise<void>;
      /** Records the build's process group in the holder file; false when it cannot be written. */
      recordBuild: (group: BuildGroup) => boolean;
    }
  | { kind: 'busy'; waitedMs: number; lockPath: string; orphan?: BuildGroup; holder?: LockHolder }
  | { kind: 'aborted' };

/** When a process started: within `startMs ± errorMs`, epoch ms (tool/proc-host.ts `StartTime`). */
interface ProcessStart {
  startMs: number;
  errorMs: number;
}

/** This process as the run lock needs it: its id for the holder file, and whether another process exists. */
export interface LockProcess {
  pid: number;
  /** Whether process `pid` exists (one of another user counts). */
  isAlive(pid: number): boolean;
  /** When this process started, kept in the holder file; absent where it cannot be read. */
  start?: ProcessStart;
  /** Whether process `pid` is the one that started at `start` (not a later one given its pid); undefined when this machine cannot tell. */
  startedAt?(pid: number, start: ProcessStart): Promise<boolean | undefined>;
  /** Whether a recorded build's process group still runs; undefined (or absent) when this machine cannot tell. */
  isGroupAlive?(group: BuildGroup): Promise<boolean | undefined>;
}

/** The holder file's content: the run, and the build it started (once it did). */
const holderSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  host: z.string(),
  start: z.optional(z.object({ startMs: z.number(), errorMs: z.number().check(z.nonnegative()) })),
  build: z.optional(
    z.object({
      pgid: z.number().check(z.int(), z.positive()),
      leaderStartMs: z.number(),
      leaderErrorMs: z.number().check(z.nonnegative()),
      command: z.string(),
    }),
  ),
});

/**
 * Takes the run lock of `projectDir` (`.reclazz/build.lock`), waiting up to `waitMs` ms (through
 * `onWait`) while another run or a gone run's build holds it. `build.lock.holder` names `self`, so
 * a later run takes over a gone run's lock at once but waits for a slow one. `onLost`: taken over
 * all the same. Opens the state folder first; once locked, removes interrupted writes' temp files.
 * @throws StateError when the state folder or the lock cannot be created (for example a
 *   read-only checkout), or a symbolic link stands in the place of the folder or a state file.
 */
export async function acquireRunLock(
  projectDir: string,
  self: LockProcess,
  waitMs: number,
  onWait: (elapsedMs: number, orphan?: BuildGroup) => void,
  signal?: AbortSignal,
  onLost: () => void = () => undefined,
): Promise<LockResult> {
  const dir = openStateFolder(projectDir);
  const lockPath = path.join(dir, LOCK_DIR);
  const holderPath = path.join(dir, LOCK_HOLDER_FILE);
  const start = performance.now();
  for (;;) {
    // proper-lockfile stats through a link in the lock's place (and takes its target's age for the lock's).
    refuseLink(lockPath, 'write');
    // Checked first: proper-lockfile itself takes over a lock unrefreshed for 10 minutes.
    const orphan = await orphanBuild(holderPath, self);
    if (orphan !== undefined) {
      const elapsed = performance.now() - start;
      if (elapsed >= waitMs) return { kind: 'busy', waitedMs: Math.round(elapsed), lockPath, orphan };
      onWait(Math.round(elapsed), orphan);
      if (!(await pause(LOCK_RETRY_MS, signal))) return { kind: 'aborted' };
      continue;
    }
    try {
      const release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        stale: LOCK_REFRESH_STALE_MS,
        update: LOCK_STALE_MS / 2,
        realpath: false,
        // Another run took the lock over (it found this one gone, or the lock folder was removed).
        onCompromised: onLost,
      });
      const holder = { pid: self.pid, host: os.hostname(), ...(self.start === undefined ? {} : { start: self.start }) };
      try {
        removeInterruptedWrites(dir);
        // It names a process of this boot: after a crash of the machine no holder is alive anyway.
        writeStateFile(holderPath, JSON.stringify(holder), 'process');
      } catch (error) {
        await release().catch(() => undefined);
        throw error;
      }
      return {
        kind: 'locked',
        recordBuild: (build) => {
          try {
            writeStateFile(holderPath, JSON.stringify({ ...holder, build }), 'process');
            return true;
          } catch {
            return false;
          }
        },
        release: () => {
          // The holder file goes first: a lock without one is never taken for a dead run's.
          removeQuietly(holderPath);
          return release().catch(() => undefined);
        },
      };
    } catch (error) {
      if (error instanceof StateError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw new StateError(lockPath, error);
    }
    if (await takeOverFromTheGone(lockPath, holderPath, self)) continue;
    const elapsed = performance.now() - start;
    if (elapsed >= waitMs) return { kind: 'busy', waitedMs: Math.round(elapsed), lockPath, ...holderOf(holderPath) };
    onWait(Math.round(elapsed));
    if (!(await pause(LOCK_RETRY_MS, signal))) return { kind: 'aborted' };
  }
}

/**
 * The build recorded in the holder file when the run that started it is gone (on this host)
 * and its process group still runs, as `self.isGroupAlive` tells (same leader start time, so a
 * reused pgid is not taken for it). Nothing is ever sent to that group: it is not ours.
 */
async function orphanBuild(holderPath: string, self: LockProcess): Promise<BuildGroup | undefined> {
  const holder = readHolder(holderPath);
  if (holder?.build === undefined || holder.host !== os.hostname() || (await holderRuns(holder, self))) return undefined;
  return (await self.isGroupAlive?.(holder.build)) === true ? holder.build : undefined;
}

/** The holder file's run when it is of this host, for the words of a lock still busy. */
function holderOf(holderPath: string): { holder?: LockHolder } {
  const holder = readHolder(holderPath);
  if (holder === undefined || holder.host !== os.hostname()) return {};
  return { holder: { pid: holder.pid, ...(holder.build === undefined ? {} : { command: holder.build.command }) } };
}

/** Removes a state file we made, leaving anything else (a link stays, and is refused by the next run). */
function removeQuietly(file: string): void {
  try {
    removeStateFile(file);
  } catch {
    // Releasing must not fail; what is left is refused or taken over by the next run.
  }
}

/**
 * Removes the lock when its run is gone: the holder names a process on this host that is gone (or
 * another since, by its start time), or there is
 * no valid holder and no refresh for {@link LOCK_STALE_MS} ms. The holder is renamed to our own
 * name first, so only one waiting run removes it. A live holder's lock is never removed.
 * @returns true when the lock was removed (try to take it again at once).
 * @throws StateError when the lock or its holder file is a symbolic link.
 */
async function takeOverFromTheGone(lockPath: string, holderPath: string, self: LockProcess): Promise<boolean> {
  const holder = readHolder(holderPath);
  try {
    if (holder === undefined) {
      const lock = refuseLink(lockPath, 'write');
      if (lock === undefined || Date.now() - lock.mtimeMs < LOCK_STALE_MS) return false;
      fs.rmdirSync(lockPath);
      return true;
    }
    if (holder.host !== os.hostname() || (await holderRuns(holder, self))) return false;
    const claimed = `${holderPath}.${self.pid}`;
    fs.renameSync(holderPath, claimed);
    fs.rmdirSync(lockPath);
    removeQuietly(claimed);
    return true;
  } catch (error) {
    if (error instanceof StateError) throw error;
    // Another run got there first, or the lock was just released: try again.
    return false;
  }
}

/**
 * Whether the run the holder file names still runs: its pid is alive and, where both are known, is
 * the process that started when the holder file says (after a reboot or a crash its pid may be another's).
 */
async function holderRuns(holder: z.infer<typeof holderSchema>, self: LockProcess): Promise<boolean> {
  if (!self.isAlive(holder.pid)) return false;
  if (holder.start === undefined || self.startedAt === undefined) return true;
  return (await self.startedAt(holder.pid, holder.start)) !== false;
}

/**
 * The holder file's process, or undefined when there is none or it cannot be read or is not
 * valid (then the lock's age decides: a pid that is not a number must not pass for a dead process).
 * @throws StateError when it is a symbolic link.
 */
function readHolder(holderPath: string): z.infer<typeof holderSchema> | undefined {
  try {
    const read = readStateFile(holderPath, 4096);
    if (read === undefined || !read.whole) return undefined;
    const parsed = holderSchema.safeParse(JSON.parse(read.bytes.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch (error) {
    if (error instanceof StateError) throw error;
    return undefined;
  }
}
