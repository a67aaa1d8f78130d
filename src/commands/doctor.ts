/**
 * `reclazz-build doctor`: the agent's DOCTOR evidence (protocol.md "DOCTOR"), and whether the
 * class output directories of the project here are among the directories it watches.
 */
import path from 'node:path';
import { AgentConnectionError } from '../agent/connection.js';
import { askDoctor } from '../agent/requests.js';
import { interrupted, isCurrentAgent, openAgent, refusal, type AgentTarget, type Refusal } from './connect.js';
import type { DirCoverage, DoctorResult } from './types.js';

/** Options for {@link runDoctor}. */
export interface DoctorOptions extends AgentTarget {
  /** The class output directories of the project here (absolute). */
  classDirs: string[];
}

/** Asks the agent for DOCTOR. Never throws for the agent's behaviour. */
export async function runDoctor(options: DoctorOptions): Promise<DoctorResult> {
  const started = performance.now();
  const done = (fields: Omit<DoctorResult, 'action' | 'durationMs' | 'classDirs'> & { classDirs?: DirCoverage[] }): DoctorResult => ({
    action: 'doctor',
    classDirs: options.classDirs.map((dir) => ({ dir, watched: null })),
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });
  const fromRefusal = ({ kind: _kind, ...r }: Refusal) => done(r);

  const opened = await openAgent(options);
  if (opened.kind === 'refused') return fromRefusal(opened);
  const { connection, endpoint } = opened;
  try {
    if (!isCurrentAgent(opened.connected)) {
      return fromRefusal(
        refusal(
          'old-agent',
          `the agent on port ${endpoint.port} is too old for DOCTOR (its CONNECTED line has no agent version)`,
          'update the reclazz agent in the app; `reclazz-build events` still works with it',
          endpoint,
        ),
      );
    }
    let answer;
    try {
      answer = await askDoctor(connection, options.timeoutMs, options.signal);
    } catch (error) {
      // An abort may surface as the signal's reason rather than an AgentConnectionError.
      if (options.signal?.aborted) return fromRefusal(interrupted(options.signal, 'while waiting for DOCTOR_RESULT', endpoint));
      if (!(error instanceof AgentConnectionError)) throw error;
      if (error.kind === 'timeout') {
        return fromRefusal(
          refusal(
            'no-receipt',
            `no DOCTOR_RESULT from the agent ${endpoint.agentVersion} on port ${endpoint.port} within ${options.timeoutMs} ms: uncertain; it is not ready (still starting) or too old`,
            'wait until the app has started and try again, or raise --timeout',
            endpoint,
          ),
        );
      }
      return fromRefusal(
        refusal(
          'agent-disconnected',
          `the agent on port ${endpoint.port} closed the connection during DOCTOR`,
          'check that the app is still running',
          endpoint,
        ),
      );
    }
    if (answer.kind === 'unavailable') {
      return fromRefusal(
        refusal(
          'agent-not-ready',
          `the agent on port ${endpoint.port} answered DOCTOR with status unavailable: ${answer.detail}`,
          'wait until the app has started and try again',
          endpoint,
        ),
      );
    }
    const doctor = answer.doctor;
    const classDirs = watchCoverage(
      options.classDirs,
      doctor.watchedDirectories,
      doctor.watchSampleTruncated || doctor.watchedDirectories.length < doctor.watchedDirectoryCount,
    );
    const unwatched = classDirs.filter((c) => c.watched === false).length;
    const message =
      classDirs.length === 0
        ? 'DOCTOR observed; no class output directory found here to compare with what the agent watches'
        : unwatched === 0
          ? `DOCTOR observed; ${classDirs.filter((c) => c.watched === true).length} of ${classDirs.length} class output director${classDirs.length === 1 ? 'y' : 'ies'} here watched${classDirs.some((c) => c.watched === null) ? ' (the rest unknown: the agent lists only a sample)' : ''}`
          : `DOCTOR observed; ${unwatched} of ${classDirs.length} class output director${classDirs.length === 1 ? 'y' : 'ies'} here NOT watched by the agent: changes there will not reload`;
    const hint =
      classDirs.length === 0
        ? 'build the project first, or name its class output directory with --classes-dir'
        : unwatched > 0
          ? 'run the app from this project (its attach plugin registers its class output), or check the agent configuration'
          : undefined;
    return done({ reason: 'ok', exitCode: 0, message, ...(hint === undefined ? {} : { hint }), endpoint, doctor, classDirs });
  } finally {
    connection.close();
  }
}

/**
 * Whether the agent watches each of `dirs`: a watched directory equals it, contains it, or lies
 * inside it. Unknown (null) when not found but the agent's sample is incomplete.
 */
export function watchCoverage(dirs: readonly string[], watchedDirectories: readonly string[], sampleIncomplete: boolean): DirCoverage[] {
  const watched = watchedDirectories.map((d) => path.resolve(d));
  return dirs.map((dir) => {
    const found = watched.some((w) => dir === w || dir.startsWith(w + path.sep) || w.startsWith(dir + path.sep));
    return { dir, watched: found ? true : sampleIncomplete ? null : false };
  });
}
