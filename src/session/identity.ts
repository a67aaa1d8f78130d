/**
 * Whose agent a session reached, the one rule for it (a build's open, the restart's return, the
 * watch's apps): what its JVM's options say it watches, a test JVM's or another app's agent, and
 * whose hold `doctor` sees.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AgentLocation, portFilesAround } from '../agent/discover.js';
import { agentWatch, type AgentWatch, jvmOnly, type JvmOnly, readJvm } from '../agent/jvm-options.js';
import { type PathMapEntry, toLocal } from '../agent/path-map.js';
import { agentView, type AgentView, isForeignAgent, isProjectDir } from '../classes/coverage.js';
import { findClassDirs } from '../classes/dirs.js';
import type { DoctorObserved } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { agentStatePlace, checkoutRoot } from '../state/folder.js';
import { readOwnerState } from '../state/store.js';
import { findAppStart, localHost, processCommandLine, type ProcHost } from '../tool/proc.js';

/**
 * The agent's build hold as `doctor` tells it: a legacy one or a named one this checkout's owner.json
 * does not record as held in this agent session (a build here would wait on it), or this checkout's
 * own (`ours`: the next run here recovers it). An unreadable owner.json records nothing.
 * @param cwd the folder the command runs in; `location` the agent's port file.
 */
export function holdFinding(doctor: DoctorObserved, cwd: string, location: AgentLocation): { hold?: 'ours' | 'not-ours' | 'legacy' } {
  if (doctor.buildHold === 'legacy') return { hold: 'legacy' };
  if (doctor.buildHold !== 'named') return {};
  let saved;
  try {
    saved = readOwnerState(agentStatePlace(checkoutRoot(cwd, [location]), location), () => undefined);
  } catch {
    saved = undefined;
  }
  return { hold: saved?.held === true && saved.sessionId === doctor.sessionId ? 'ours' : 'not-ours' };
}

/**
 * What the agent of `doctor` watches by its JVM's options (agent/jvm-options.ts), in its own paths:
 * DOCTOR's `pid`, confirmed as by `findAppStart`, gives the command line to read. Undefined when the
 * JVM is not visible here, not confirmed, or its options do not say. Never throws.
 */
export async function agentWatchOf(
  doctor: Pick<DoctorObserved, 'pid' | 'workingDirectory'>,
  map: readonly PathMapEntry[],
  host: ProcHost = localHost,
): Promise<AgentWatch | JvmOnly | undefined> {
  if (doctor.workingDirectory === '') return undefined;
  const local = (agentPath: string) => path.resolve(toLocal(map, agentPath));
  try {
    const start = await findAppStart(doctor.pid, local(doctor.workingDirectory), host);
    if (start.kind !== 'known') return undefined;
    const line = await processCommandLine(start.pid, host);
    if (line === undefined) return undefined;
    const jvm = readJvm(line.args, line.env, doctor.workingDirectory, (file) => host.readText(local(file)));
    if (jvm === undefined) return undefined;
    return agentWatch(jvm, doctor.workingDirectory, (dir) => mayHaveBeenDirectory(local(dir))) ?? jvmOnly(jvm, doctor.workingDirectory);
  } catch {
    // A fault reading /proc (EMFILE, EIO): what it watches stays unknown, which only means more checking.
    return undefined;
  }
}

/**
 * Whether `dir` may have been a directory when the agent started: one now, or nothing now (a `mvn
 * clean` deleted it; the agent registers it again when it comes back). Counting a missing one as
 * watched costs a longer check; counting it as not watched would be a false verdict.
 */
function mayHaveBeenDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Whose agent this is, the one rule for an agent session (a build's open, the restart's return): a
 * test JVM's (`watch.testRunner`), another app's by DOCTOR ({@link isForeignAgent}), `maybe` when
 * its sample is truncated and lists nothing of this project, else `ours`. `roots`: the project
 * folders (where the run is, and the port file's project). With `app`, the app's working directory
 * from before a restart (local; '' when not known): `not-the-app` for an agent elsewhere, or, with
 * none known, for any agent not plainly `ours`.
 */
export function whoseAgent(
  view: AgentView,
  watch: AgentWatch | JvmOnly | undefined,
  roots: string[],
  app?: { workingDirectory: string },
): 'test-jvm' | 'foreign' | 'maybe' | 'ours' | 'not-the-app' {
  if (watch?.testRunner !== undefined) return 'test-jvm';
  const classDirs = [...new Set(roots)].flatMap((root) => findClassDirs(root, 'command'));
  if (isForeignAgent(view, roots, classDirs)) return 'foreign';
  const listedOurs = view.watched.some((w) => isProjectDir(w.local, roots, classDirs));
  const outside = view.workingDirectory !== '' && !roots.some((root) => isProjectDir(view.workingDirectory, [root], []));
  const whose = !view.complete && !listedOurs && outside ? 'maybe' : 'ours';
  if (app === undefined) return whose;
  const same = app.workingDirectory === '' ? whose === 'ours' : view.workingDirectory === app.workingDirectory;
  return same ? whose : 'not-the-app';
}

/**
 * The view of `doctor`, an agent answering after a restart, when {@link whoseAgent} says it is the
 * app's, in its working directory from before (`workingDirectory`, local). Undefined when it is not.
 */
export async function sameAppView(
  doctor: DoctorObserved,
  map: readonly PathMapEntry[],
  roots: string[],
  workingDirectory: string,
  proc?: ProcHost,
): Promise<AgentView | undefined> {
  const watch = await agentWatchOf(doctor, map, proc);
  const view = agentView(doctor, map, watch);
  const whose = whoseAgent(view, watch, roots, { workingDirectory });
  return whose === 'ours' || whose === 'maybe' ? view : undefined;
}

/** The refusal of an agent that is not this project's app's: a test JVM's (never held or asked), or another app's. */
export function notOurs(
  whose: 'foreign' | 'test-jvm',
  pid: string,
  view: AgentView,
  watch: AgentWatch | JvmOnly | undefined,
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
