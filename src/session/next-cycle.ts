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
import type { BuildSession } from './cycle-context.js';
import { lockCheckout } from './open.js';

/** A cycle may start (release the lock after it), the lock or DOCTOR refused it, or the agent went away. */
export type CycleStart = { kind: 'ready'; releaseLock: () => Promise<void> } | { kind: 'refused'; outcome: Outcome } | { kind: 'lost' };

/**
 * Takes the run lock (waiting up to --wait) and asks DOCTOR again. A DOCTOR naming another agent
 * session, or a closed connection, is `lost`: the session is over. Never throws for the agent.
 * @throws StateError when the run lock or owner.json cannot be read or written.
 */
export async function beginCycle(session: BuildSession): Promise<CycleStart> {
  const hooks = { onEvent: session.emit, ...(session.signal === undefined ? {} : { signal: session.signal }) };
  const lock = await lockCheckout(session.location.projectDir, session.host, session.options, hooks);
  if (typeof lock !== 'function') return lock.kind === 'refused' ? { kind: 'refused', outcome: lock.outcome } : { kind: 'lost' };
  const refuse = async (start: CycleStart): Promise<CycleStart> => {
    await lock();
    return start;
  };
  let answer;
  try {
    answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
  } catch (error) {
    if (!(error instanceof AgentConnectionError) || session.connection.closed) return refuse({ kind: 'lost' });
    if (error.kind === 'aborted')
      return refuse({ kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(session.signal), at: 'doctor' } });
    const why = { kind: 'doctor-timeout' as const, agent: session.agent.agentVersion, timeoutMs: session.timeoutMs };
    return refuse({ kind: 'refused', outcome: { reason: 'agent-not-ready', port: session.agent.port, why } });
  }
  if (answer.kind !== 'observed' || answer.doctor.sessionId !== session.agent.sessionId) return refuse({ kind: 'lost' });
  session.doctor = answer.doctor;
  try {
    session.owner = rereadOwner(session.location.projectDir, session.agent.sessionId, session.owner, (message) =>
      session.emit({ type: 'warning', message }),
    );
  } catch (error) {
    await lock();
    throw error;
  }
  return { kind: 'ready', releaseLock: lock };
}
