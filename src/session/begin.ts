/**
 * The start of each cycle of a long session (watch mode): the run lock for that cycle only, then
 * DOCTOR and owner.json of every agent again. An agent gone since the last cycle is set aside,
 * not the end of the cycle: the others build (the watch keeps the gone one's app in view).
 */
import { AgentConnectionError } from '../agent/connection.js';
import { askDoctor } from '../agent/requests.js';
import { rereadOwner } from '../hold/owner.js';
import { signalOf } from '../outcome/exit.js';
import type { Outcome } from '../outcome/outcome.js';
import { findAppStart, processStopped } from '../tool/proc.js';
import { lockCheckout } from './open.js';
import type { BuildSession } from './options.js';

/**
 * A cycle may start with the sessions not in `lost` (release the lock after it), or the lock or
 * DOCTOR refused it (`session`: the agent that did).
 */
export type CycleStart =
  { kind: 'ready'; releaseLock: () => Promise<void>; lost: BuildSession[] } | { kind: 'refused'; outcome: Outcome; session?: BuildSession };

/**
 * Before each watch cycle: the run lock for this cycle only (waiting up to --wait), so a one-shot run
 * in another terminal can run between cycles, then DOCTOR (the agent's hold, protocol.md "DOCTOR") and
 * owner.json read again, which that run may have moved. DOCTOR naming another agent session, or a
 * closed connection, puts that session in `lost`. Never throws for the agent.
 * @throws StateError when the run lock or an owner.json cannot be read or written.
 */
export async function beginCycle(sessions: readonly BuildSession[]): Promise<CycleStart> {
  const first = sessions[0]!;
  const hooks = { onEvent: first.emit, ...(first.signal === undefined ? {} : { signal: first.signal }) };
  const taken = await lockCheckout(first.checkout, first.host, first.options, hooks);
  if ('kind' in taken) return { kind: 'refused', outcome: taken.outcome };
  const lost: BuildSession[] = [];
  try {
    for (const session of sessions) {
      const refused = await refresh(session);
      if (refused === 'lost') lost.push(session);
      else if (refused !== undefined) {
        await taken.release();
        return refused;
      }
    }
  } catch (error) {
    await taken.release();
    throw error;
  }
  // The cycle's build is recorded with this cycle's lock, so a run after a killed watch waits for it.
  const builder = sessions.find((s) => !lost.includes(s));
  if (builder !== undefined && taken.recordBuild !== undefined) builder.recordBuild = taken.recordBuild;
  const releaseLock = async () => {
    if (builder !== undefined) delete builder.recordBuild;
    await taken.release();
  };
  return { kind: 'ready', releaseLock, lost };
}

/** DOCTOR and owner.json of one session again; `lost`, or the refusal of the cycle, if any. */
async function refresh(session: BuildSession): Promise<Extract<CycleStart, { kind: 'refused' }> | 'lost' | undefined> {
  let answer;
  try {
    answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
  } catch (error) {
    if (!(error instanceof AgentConnectionError) || session.connection.closed) return 'lost';
    if (error.kind === 'aborted')
      return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(session.signal), at: 'doctor' } };
    // It answered DOCTOR when the session opened: not starting, but stopped or hung.
    const answered = { pid: session.agent.pid, stopped: await jvmStopped(session) };
    const why = { kind: 'doctor-timeout' as const, agent: session.agent.agentVersion, timeoutMs: session.timeoutMs, answered };
    return { kind: 'refused', outcome: { reason: 'agent-not-ready', port: session.agent.port, why }, session };
  }
  if (answer.kind !== 'observed' || answer.doctor.sessionId !== session.agent.sessionId) return 'lost';
  session.doctor = answer.doctor;
  session.owner = rereadOwner(session.state, session.agent.sessionId, session.owner, (problem) =>
    session.emit({ type: 'warning', kind: 'state-file', problem }),
  );
  return undefined;
}

/**
 * True when the agent's JVM is stopped (SIGSTOP, Ctrl-Z, a tracer), its pid confirmed as by `findAppStart`;
 * false when it runs or that cannot be told here (a container, another host). Never throws.
 */
async function jvmStopped(session: BuildSession): Promise<boolean> {
  try {
    const start = await findAppStart(session.agent.pid, session.view.workingDirectory, session.host.proc);
    return start.kind === 'known' && (await processStopped(start.pid, session.host.proc)) === true;
  } catch {
    // A fault reading /proc (EMFILE, EIO): not known to be stopped.
    return false;
  }
}
