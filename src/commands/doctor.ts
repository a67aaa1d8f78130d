/**
 * `reclazz-build doctor`: the agent's DOCTOR evidence (protocol.md "DOCTOR"), what it watches
 * (read from its JVM's options when visible, else DOCTOR's list), whether the class output
 * directories of the project here are among it, which of its watched directories are this
 * project's (paths translated by --path-map), and whether its reloads are paused (RELOAD status).
 */
import { agentView, appClassDirs, isForeignAgent, isProjectDir, jvmPathsOf, watchCoverage } from '../classes/coverage.js';
import { classFilesIn, jarRunOf } from '../classes/jar-run.js';
import type { AgentTarget } from '../agent/handshake.js';
import type { PathMapEntry } from '../agent/path-map.js';
import { classSearchRoot, findClassDirs } from '../classes/dirs.js';
import { closeSession, type SessionHost } from '../session/options.js';
import { agentWatchOf, holdFinding } from '../session/identity.js';
import { doctorBlocks, type Outcome } from '../outcome/outcome.js';
import { buildResult, type DoctorResult, type WatchedDirFact } from '../outcome/result.js';
import type { AgentConnection } from '../agent/connection.js';
import { askReload } from '../agent/requests.js';
import type { ReloadState } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import { type Opening, type OpenPlan, openSession } from '../session/open.js';

/** Options for {@link runDoctor}. */
export interface DoctorOptions extends AgentTarget {
  /** Class output directories named by the user (--classes-dir, absolute), added to the ones found in the project. */
  classDirs: string[];
  /** How the agent's paths read here (an app in a container). */
  pathMap?: PathMapEntry[];
}

/** Asks the agent for DOCTOR. Never throws for the agent's behaviour. */
export async function runDoctor(options: DoctorOptions): Promise<DoctorResult> {
  const started = performance.now();
  type Facts = Partial<Pick<DoctorResult, 'endpoint' | 'doctor' | 'classDirs' | 'watched' | 'watchedFrom' | 'reload'>>;
  const end = (outcome: Outcome, facts: Facts = {}): DoctorResult =>
    buildResult(
      outcome,
      {
        action: 'doctor' as const,
        classDirs: options.classDirs.map((dir) => ({ dir, watched: null })),
        watched: [],
        watchedFrom: 'none' as const,
        reload: null,
        ...facts,
      },
      performance.now() - started,
    );

  const opening = await openFor(options, { requires: { need: 'DOCTOR' } });
  if (opening.kind === 'refused') return end(opening.outcome, opening.endpoint === undefined ? {} : { endpoint: opening.endpoint });
  const { session } = opening;
  const endpoint = session.endpoint;
  try {
    const doctor = session.doctor!;
    const map = options.pathMap ?? [];
    const view = agentView(doctor, map, await agentWatchOf(doctor, map));
    const roots = [...new Set([options.cwd, session.location.projectDir])];
    const known = [
      ...new Set([...findClassDirs(classSearchRoot(options.cwd, session.location.projectDir), 'command'), ...options.classDirs]),
    ];
    const { fromAgent, fromClassPath } = appClassDirs(view, known, [...roots, session.checkout]);
    const dirs = [...known, ...fromAgent, ...fromClassPath];
    const classDirs = watchCoverage(dirs, view);
    const watched: WatchedDirFact[] = view.watched.map((w) => ({
      dir: w.reported,
      local: w.local,
      here: w.here,
      ours: w.here !== 'missing' && isProjectDir(w.local, roots, known),
    }));
    const count = (state: boolean | null) => classDirs.filter((c) => c.watched === state).length;
    const foreign = isForeignAgent(view, roots, known) ? { foreign: view.workingDirectory } : {};
    const reload = doctor.buildOwnershipSupported ? await reloadState(session.connection, options) : null;
    const here = classDirs.map((c) => c.dir);
    const jarRun = jarRunOf(jvmPathsOf(view, session.checkout), classFilesIn(here), here);
    const done = {
      kind: 'doctor' as const,
      dirs: classDirs.length,
      watched: count(true),
      unwatched: count(false),
      unknown: count(null),
      ...foreign,
      ...(jarRun === undefined ? {} : { jarRun }),
      ...(reload?.paused === true ? { paused: reload.pendingClasses } : {}),
      ...holdFinding(doctor, options.cwd, session.location),
      ...(doctor.watcherState === 'watching' ? {} : { watcher: doctor.watcherState }),
    };
    const outcome: Outcome = doctorBlocks(done) ? { reason: 'doctor-findings', done } : { reason: 'ok', done };
    return end(outcome, { endpoint, doctor, classDirs, watched, watchedFrom: view.from, reload });
  } finally {
    await closeSession(session);
  }
}

/** RELOAD status (whether reloads are paused), or null when no receipt came. */
async function reloadState(connection: AgentConnection, options: Pick<DoctorOptions, 'timeoutMs' | 'signal'>): Promise<ReloadState | null> {
  try {
    return await askReload(connection, 'status', options.timeoutMs, options.signal);
  } catch {
    return null;
  }
}

/** The session a subcommand opens: no lock and no owner, only what it asks the agent. */

/**
 * Opens a session for a subcommand against `target`.
 * @param onEvent where `agent` events go (`verify` shows them, as a build does).
 */
export function openFor(
  target: AgentTarget,
  plan: Omit<OpenPlan, 'builds' | 'onAgentEvent'> = {},
  onEvent?: (event: RunEvent) => void,
): Promise<Opening<SessionHost>> {
  const options = {
    timeoutMs: target.timeoutMs,
    ...(target.port === undefined ? {} : { port: target.port }),
    ...(target.portFile === undefined ? {} : { portFile: target.portFile }),
    ...(target.portFiles === undefined ? {} : { portFiles: target.portFiles }),
  };
  const hooks = { ...(target.signal === undefined ? {} : { signal: target.signal }), ...(onEvent === undefined ? {} : { onEvent }) };
  return openSession(options, { cwd: target.cwd, env: target.env }, hooks, { ...plan, onAgentEvent: target.onEvent ?? (() => undefined) });
}
