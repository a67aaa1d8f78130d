/**
 * Before each cycle of a long session (watch mode): the checkout's run lock for this cycle only,
 * so that a one-shot run in another terminal can run between two cycles, and what the session
 * knew when it opened read again: DOCTOR (the agent's hold, protocol.md "DOCTOR") and owner.json.
 * Either may have moved since: that run, or this session's own last cycle, changed them.
 */
import { AgentConnectionError } from '../agent/connection.js';
import { askDoctor } from '../agent/requests.js';
import { rereadOwner } from '../hold/owner.js';
import { signalOf } from '../outcome/exit.js';
import type { Outcome } from '../outcome/outcome.js';
import { processStopped } from '../tool/proc.js';
import { findAppStart } from './app-start.js';
import type { BuildSession } from './cycle-context.js';
import { lockCheckout } from './open.js';

/** A cycle may start (release the lock after it), the lock or DOCTOR refused it, or an agent (`session`'s) went away. */
export type CycleStart =
  | { kind: 'ready'; releaseLock: () => Promise<void> }
  | { kind: 'refused'; outcome: Outcome; session?: BuildSession }
  | { kind: 'lost'; session: BuildSession };

/**
 * Takes the run lock of the checkout (waiting up to --wait) and asks each session's agent DOCTOR
 * again. A DOCTOR naming another agent session, or a closed connection, is `lost`: the sessions
 * are over. Never throws for the agent.
 * @throws StateError when the run lock or an owner.json cannot be read or written.
 */
export async function beginCycle(sessions: readonly BuildSession[]): Promise<CycleStart> {
  const first = sessions[0]!;
  const hooks = { onEvent: first.emit, ...(first.signal === undefined ? {} : { signal: first.signal }) };
  const taken = await lockCheckout(first.checkout, first.host, first.options, hooks);
  if ('kind' in taken) return { kind: 'refused', outcome: taken.outcome };
  // The cycle's build is recorded with this cycle's lock, so a run after a killed watch waits for it.
  if (taken.recordBuild !== undefined) first.recordBuild = taken.recordBuild;
  const lock = async () => {
    delete first.recordBuild;
    await taken.release();
  };
  try {
    for (const session of sessions) {
      const refused = await refresh(session);
      if (refused !== undefined) {
        await lock();
        return refused;
      }
    }
  } catch (error) {
    await lock();
    throw error;
  }
  return { kind: 'ready', releaseLock: lock };
}

/** DOCTOR and owner.json of one session again; the start that refuses the cycle, if any. */
async function refresh(session: BuildSession): Promise<Exclude<CycleStart, { kind: 'ready' }> | undefined> {
  let answer;
  try {
    answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
  } catch (error) {
    if (!(error instanceof AgentConnectionError) || session.connection.closed) return { kind: 'lost', session };
    if (error.kind === 'aborted')
      return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(session.signal), at: 'doctor' } };
    // It answered DOCTOR when the session opened: not starting, but stopped or hung.
    const answered = { pid: session.agent.pid, stopped: await jvmStopped(session) };
    const why = { kind: 'doctor-timeout' as const, agent: session.agent.agentVersion, timeoutMs: session.timeoutMs, answered };
    return { kind: 'refused', outcome: { reason: 'agent-not-ready', port: session.agent.port, why }, session };
  }
  if (answer.kind !== 'observed' || answer.doctor.sessionId !== session.agent.sessionId) return { kind: 'lost', session };
  session.doctor = answer.doctor;
  session.owner = rereadOwner(session.state, session.agent.sessionId, session.owner, (message) =>
    session.emit({ type: 'warning', message }),
  );
  return undefined;
}

/**
 * True when the agent's JVM is stopped (SIGSTOP, Ctrl-Z, a tracer): DOCTOR's `pid` confirmed as
 * the app's on this machine as for its start time (app-start.ts), then its process state. False
 * when it runs, or when that cannot be told here (a container, another host). Never throws.
 */
async function jvmStopped(session: BuildSession): Promise<boolean> {
  try {
    const start = await findAppStart(session.agent.pid, session.view.workingDirectory);
    return start.kind === 'known' && (await processStopped(start.pid)) === true;
  } catch {
    // A fault reading /proc (EMFILE, EIO): not known to be stopped.
    return false;
  }
}
