/**
 * When the app's JVM started, the cut-off of "unchanged since the app started" (evidence.ts):
 * DOCTOR's `pid` looked up on this machine, confirmed by its working directory being DOCTOR's
 * `workingDirectory` (protocol.md "DOCTOR"). A pid of another machine or container can name an
 * unrelated process here, so anything short of that is an unknown start.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AppStart } from '../outcome/facts.js';
import { localHost, processCwd, processStartTime, type ProcHost } from '../tool/proc.js';

/**
 * The start of the process DOCTOR names, or why it is unknown: `no-pid` (not a process id),
 * `not-visible` (no such process here: the app runs in a container or on another host, or as a
 * user whose processes this one may not see), `elsewhere` (a process with that pid runs in
 * another folder than the agent's working directory, or its folder cannot be read). Never throws.
 */
export async function findAppStart(pid: string, workingDirectory: string, host: ProcHost = localHost): Promise<AppStart> {
  const id = /^\d{1,15}$/.test(pid) ? Number(pid) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) return { kind: 'unknown', why: { kind: 'no-pid', pid } };
  try {
    const start = await processStartTime(id, host);
    if (start === undefined) return { kind: 'unknown', why: { kind: 'not-visible', pid: id } };
    const cwd = await processCwd(id, host);
    if (cwd === undefined || !sameFolder(cwd, workingDirectory)) {
      return { kind: 'unknown', why: { kind: 'elsewhere', pid: id, cwd: cwd ?? null, workingDirectory } };
    }
    return { kind: 'known', pid: id, startMs: start.startMs, errorMs: start.errorMs };
  } catch {
    // A fault reading /proc (EMFILE, EIO): the start stays unknown, which only means more checking.
    return { kind: 'unknown', why: { kind: 'not-visible', pid: id } };
  }
}

/** True when `a` and `b` name the same folder (symbolic links resolved where they exist). */
function sameFolder(a: string, b: string): boolean {
  return real(a) === real(b);
}

function real(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
