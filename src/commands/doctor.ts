/**
 * `reclazz-build doctor`: the agent's DOCTOR evidence (protocol.md "DOCTOR"), whether the class
 * output directories of the project here are among the directories it watches, and which of
 * its watched directories are this project's (paths translated by --path-map).
 */
import { agentClassDirs, agentView, isForeignAgent, isProjectDir, watchCoverage } from '../classes/coverage.js';
import type { AgentTarget } from '../agent/handshake.js';
import type { PathMapEntry } from '../agent/path-map.js';
import { classSearchRoot, findClassDirs } from '../classes/dirs.js';
import { closeSession } from '../session/session.js';
import { openFor } from './open.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type DoctorResult, type WatchedDirFact } from '../outcome/result.js';
import { describeOutcome } from '../report/words.js';

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
  const end = (outcome: Outcome, facts: Partial<Pick<DoctorResult, 'endpoint' | 'doctor' | 'classDirs' | 'watched'>> = {}): DoctorResult =>
    buildResult(
      outcome,
      describeOutcome(outcome),
      { action: 'doctor' as const, classDirs: options.classDirs.map((dir) => ({ dir, watched: null })), watched: [], ...facts },
      performance.now() - started,
    );

  const opening = await openFor(options, { requires: { need: 'DOCTOR' } });
  if (opening.kind === 'refused') return end(opening.outcome, opening.endpoint === undefined ? {} : { endpoint: opening.endpoint });
  const { session } = opening;
  const endpoint = session.endpoint;
  try {
    const doctor = session.doctor!;
    const view = agentView(doctor, options.pathMap ?? []);
    const roots = [...new Set([options.cwd, session.location.projectDir])];
    const known = [
      ...new Set([...findClassDirs(classSearchRoot(options.cwd, session.location.projectDir), 'command'), ...options.classDirs]),
    ];
    const dirs = [...known, ...agentClassDirs(view, known, roots)];
    const classDirs = watchCoverage(dirs, view);
    const watched: WatchedDirFact[] = view.watched.map((w) => ({
      dir: w.reported,
      local: w.local,
      here: w.here,
      ours: w.here !== 'missing' && isProjectDir(w.local, roots, known),
    }));
    const count = (state: boolean | null) => classDirs.filter((c) => c.watched === state).length;
    const foreign = isForeignAgent(view, roots, known) ? { foreign: view.workingDirectory } : {};
    const done = {
      kind: 'doctor' as const,
      dirs: classDirs.length,
      watched: count(true),
      unwatched: count(false),
      unknown: count(null),
      ...foreign,
    };
    return end({ reason: 'ok', done }, { endpoint, doctor, classDirs, watched });
  } finally {
    await closeSession(session);
  }
}
