/**
 * What the agent watches, read from its JVM (agent/jvm-options.ts) when that process is
 * visible here: DOCTOR's `pid` names it, confirmed as for the app's start time (agent-jvm.ts:
 * its working directory is DOCTOR's `workingDirectory`), then its command line and environment
 * are read (tool/proc.ts) and the agent's options applied as the agent applies them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AgentLocation, portFilesAround } from '../agent/discover.js';
import { agentWatch, type AgentWatch, readJvm } from '../agent/jvm-options.js';
import { type PathMapEntry, toLocal } from '../agent/path-map.js';
import { type AgentView, isForeignAgent, isProjectDir } from '../classes/coverage.js';
import { findClassDirs } from '../classes/dirs.js';
import type { AppStart, DoctorObserved } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { localHost, processCommandLine, processCwd, processStartTime, type ProcHost } from '../tool/proc.js';

/**
 * What the agent of `doctor` watches by its JVM's options, in its own paths; undefined when the
 * JVM is not visible here, is not confirmed as the agent's, or its options do not say (see
 * agent/jvm-options.ts `agentWatch`). Never throws.
 */
export async function agentWatchOf(
  doctor: Pick<DoctorObserved, 'pid' | 'workingDirectory'>,
  map: readonly PathMapEntry[],
  host: ProcHost = localHost,
): Promise<AgentWatch | undefined> {
  if (doctor.workingDirectory === '') return undefined;
  const local = (agentPath: string) => path.resolve(toLocal(map, agentPath));
  try {
    const start = await findAppStart(doctor.pid, local(doctor.workingDirectory), host);
    if (start.kind !== 'known') return undefined;
    const line = await processCommandLine(start.pid, host);
    if (line === undefined) return undefined;
    const jvm = readJvm(line.args, line.env, doctor.workingDirectory, (file) => host.readText(local(file)));
    return jvm === undefined ? undefined : agentWatch(jvm, doctor.workingDirectory, (dir) => mayHaveBeenDirectory(local(dir)));
  } catch {
    // A fault reading /proc (EMFILE, EIO): what it watches stays unknown, which only means more checking.
    return undefined;
  }
}

/**
 * Whether `dir` may have been a directory when the agent started, which is what its options
 * test: a directory now, or nothing now (deleted since, as by a `mvn clean`: the agent registers
 * a watched directory again when it comes back). Counting a missing one as watched costs only a
 * longer check; counting it as not watched would be a false verdict.
 */
function mayHaveBeenDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Whose agent this is: a test JVM's when its JVM runs a test runner (`watch`, agent/jvm-options.ts
 * `testRunnerOf`), another app's by its DOCTOR evidence (coverage.ts {@link isForeignAgent}),
 * `maybe` when its sample is truncated and nothing listed is this project's, else `ours`.
 * `roots`: the project folders (where the run is, and the port file's project).
 */
export function whoseAgent(view: AgentView, watch: AgentWatch | undefined, roots: string[]): 'test-jvm' | 'foreign' | 'maybe' | 'ours' {
  if (watch?.testRunner !== undefined) return 'test-jvm';
  const classDirs = [...new Set(roots)].flatMap((root) => findClassDirs(root, 'command'));
  if (isForeignAgent(view, roots, classDirs)) return 'foreign';
  const listedOurs = view.watched.some((w) => isProjectDir(w.local, roots, classDirs));
  const outside = view.workingDirectory !== '' && !roots.some((root) => isProjectDir(view.workingDirectory, [root], []));
  return !view.complete && !listedOurs && outside ? 'maybe' : 'ours';
}

/** The refusal of an agent that is not this project's app's: a test JVM's (never held or asked), or another app's. */
export function notOurs(
  whose: 'foreign' | 'test-jvm',
  pid: string,
  view: AgentView,
  watch: AgentWatch | undefined,
  at: AgentLocation,
  cwd: string,
): Outcome {
  const place = { port: at.port, source: at.source, ...portFileOf(at.portFile) };
  const which =
    whose === 'test-jvm'
      ? { testJvm: { pid, runner: watch!.testRunner! } }
      : { foreign: { pid, workingDirectory: view.workingDirectory, watched: view.watched.map((w) => w.local) } };
  return { reason: 'stale-port', place, ...which, ...otherPortFiles(cwd, at.portFile) };
}

/** The port files around `cwd` other than `used`, when there are any. */
export function otherPortFiles(cwd: string, used: string | undefined): { portFiles?: string[] } {
  const others = portFilesAround(cwd).filter((file) => file !== used);
  return others.length > 0 ? { portFiles: others } : {};
}

function portFileOf(portFile: string | undefined): { portFile?: string } {
  return portFile === undefined ? {} : { portFile };
}

/**
 * When the app's JVM started, the cut-off of "unchanged since the app started" (evidence.ts):
 * DOCTOR's `pid` looked up on this machine, confirmed by its working directory being DOCTOR's
 * `workingDirectory` (protocol.md "DOCTOR"). A pid of another machine or container can name an
 * unrelated process here, so anything short of that is an unknown start.
 */

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
