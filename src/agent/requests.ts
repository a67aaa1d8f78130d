/**
 * Requests whose replies go only to the requester, each with a fresh request token and a
 * bounded wait (protocol.md "DOCTOR", "RELOAD").
 */
import type { AgentConnection } from './connection.js';
import { doctorObservedSchema, type DoctorObserved } from '../outcome/doctor.js';
import type { ReloadAction, ReloadState } from '../outcome/facts.js';
import { doctorLine, doctorUnavailableSchema, newToken, parseReloadState, parseTokenJson, reloadLine } from './protocol.js';

/** A DOCTOR answer: observed evidence, the agent's own "unavailable", or a reply that did not parse. */
export type DoctorAnswer = { kind: 'observed'; doctor: DoctorObserved } | { kind: 'unavailable'; detail: string };

/**
 * Sends `DOCTOR <token>` and waits for `DOCTOR_RESULT <token> <json>`.
 * @param timeoutMs bound for the reply, in ms.
 * @throws AgentConnectionError kind timeout (agent not ready, or too old), closed or aborted.
 */
export async function askDoctor(connection: AgentConnection, timeoutMs: number, signal?: AbortSignal): Promise<DoctorAnswer> {
  const token = newToken();
  const json = await connection.request(
    doctorLine(token),
    (event) => (event.level === 'INFO' ? parseTokenJson(event.message, 'DOCTOR_RESULT', token) : undefined),
    'DOCTOR_RESULT',
    timeoutMs,
    signal,
  );
  const observed = doctorObservedSchema.safeParse(json);
  if (observed.success) return { kind: 'observed', doctor: observed.data };
  const unavailable = doctorUnavailableSchema.safeParse(json);
  return { kind: 'unavailable', detail: unavailable.success ? unavailable.data.detail : 'malformed DOCTOR_RESULT' };
}

/**
 * Sends `RELOAD <action> request=<token>` and waits for the matching `RELOAD_STATE`.
 * @throws AgentConnectionError kind timeout (outcome uncertain), closed or aborted.
 */
export function askReload(
  connection: AgentConnection,
  action: ReloadAction,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ReloadState> {
  const token = newToken();
  return connection.request(
    reloadLine(action, token),
    (event) => (event.level === 'INFO' ? parseReloadState(event.message, token) : undefined),
    'RELOAD_STATE',
    timeoutMs,
    signal,
  );
}
