/**
 * `reclazz-build doctor`: the agent's DOCTOR evidence (protocol.md "DOCTOR"), and whether the
 * class output directories of the project here are among the directories it watches.
 */
import { watchCoverage } from '../agent/coverage.js';
import type { AgentTarget } from '../agent/handshake.js';
import { closeSession } from '../session/session.js';
import { openFor } from './open.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type DoctorResult } from '../outcome/result.js';
import { describeOutcome } from '../report/words.js';

/** Options for {@link runDoctor}. */
export interface DoctorOptions extends AgentTarget {
  /** The class output directories of the project here (absolute). */
  classDirs: string[];
}

/** Asks the agent for DOCTOR. Never throws for the agent's behaviour. */
export async function runDoctor(options: DoctorOptions): Promise<DoctorResult> {
  const started = performance.now();
  const end = (outcome: Outcome, facts: Partial<Pick<DoctorResult, 'endpoint' | 'doctor' | 'classDirs'>> = {}): DoctorResult =>
    buildResult(
      outcome,
      describeOutcome(outcome),
      { action: 'doctor' as const, classDirs: options.classDirs.map((dir) => ({ dir, watched: null })), ...facts },
      performance.now() - started,
    );

  const opening = await openFor(options, { requires: { need: 'DOCTOR' } });
  if (opening.kind === 'refused') return end(opening.outcome, opening.endpoint === undefined ? {} : { endpoint: opening.endpoint });
  const { session } = opening;
  const endpoint = session.endpoint;
  try {
    const doctor = session.doctor!;
    const incomplete = doctor.watchSampleTruncated || doctor.watchedDirectories.length < doctor.watchedDirectoryCount;
    const classDirs = watchCoverage(options.classDirs, doctor.watchedDirectories, incomplete);
    const count = (watched: boolean | null) => classDirs.filter((c) => c.watched === watched).length;
    const done = { kind: 'doctor' as const, dirs: classDirs.length, watched: count(true), unwatched: count(false), unknown: count(null) };
    return end({ reason: 'ok', done }, { endpoint, doctor, classDirs });
  } finally {
    await closeSession(session);
  }
}
