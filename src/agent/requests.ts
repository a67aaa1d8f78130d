/**
 * Requests whose replies go only to the requester, each with a fresh request token and a
 * bounded wait (protocol.md "DOCTOR", "RELOAD").
 */
import type { AgentConnection } from './connection.js';
import { doctorObservedSchema, type DoctorObserved } from '../outcome/doctor.js';
import type { ReloadAction, ReloadState } from '../outcome/facts.js';
import {
  DiagnosisReader,
  diagnoseLine,
  doctorLine,
  doctorUnavailableSchema,
  newToken,
  parseReloadState,
  parseTokenJson,
  reloadLine,
} from './protocol.js';

/** A PENDING line naming a change the agent cannot apply without a restart: `Restart required: <class>: <change>`. */
const RESTART_LINE = /^Restart required: (\S+): (.+)$/;
/**
 * HEALTH's count of what the agent reloaded since it started (its SessionReport, protocol.md "SCAN,
 * PENDING, HEALTH, DIAGNOSE"): `<R> reload(s): <S> structural, <B> method bodies[, and <F> failure(s)].`
 */
const RELOADS_LINE = /^(\d+) reloads?: (\d+) structural, (\d+) method bodies(?:, and (\d+) failures?)?\.$/;
/** HEALTH's line when nothing has reloaded or failed since the agent started. */
const NOTHING_RELOADED = 'Nothing has reloaded yet this session.';

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

/**
 * Sends `DIAGNOSE <name>` for each of `classNames` (binary names VERIFY accepts), whose INFO
 * lines go to every client with no token and no end marker, then a DOCTOR that marks their end
 * as for PENDING ({@link askRestartRequired}). Before VERIFY is wired the agent does not answer
 * DIAGNOSE.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns per name, the class files the agent found under its watched class output directories
 *   (its paths; empty: none); a name it did not answer is missing. Undefined when the marker did not come.
 */
export async function askDiagnose(
  connection: AgentConnection,
  classNames: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Map<string, string[]> | undefined> {
  const token = newToken();
  const reader = new DiagnosisReader();
  try {
    for (const name of classNames) connection.send(diagnoseLine(name));
    await connection.request(
      doctorLine(token),
      (event) => {
        if (event.level !== 'INFO') return undefined;
        reader.read(event.message);
        return parseTokenJson(event.message, 'DOCTOR_RESULT', token);
      },
      'DOCTOR_RESULT after DIAGNOSE',
      timeoutMs,
      signal,
    );
  } catch {
    return undefined;
  }
  return reader.files;
}

/**
 * Sends `PENDING`, whose INFO lines go to every client with no token and no end marker
 * (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE"), then a DOCTOR: the agent answers commands in
 * order and writes a client's lines in order, so the DOCTOR_RESULT marks the end of PENDING's
 * lines. Collects the `Restart required: <class>: <change>` lines seen before it.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns class name -> the change the agent cannot apply; undefined when the marker did not come.
 */
export async function askRestartRequired(
  connection: AgentConnection,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Map<string, string> | undefined> {
  const token = newToken();
  const notes = new Map<string, string>();
  try {
    connection.send('PENDING');
    await connection.request(
      doctorLine(token),
      (event) => {
        if (event.level !== 'INFO') return undefined;
        const note = RESTART_LINE.exec(event.message);
        if (note !== null) notes.set(note[1]!, note[2]!);
        return parseTokenJson(event.message, 'DOCTOR_RESULT', token);
      },
      'DOCTOR_RESULT after PENDING',
      timeoutMs,
      signal,
    );
  } catch {
    return undefined;
  }
  return notes;
}

/**
 * Sends `HEALTH`, whose INFO lines go to every client with no token and no end marker (protocol.md
 * "SCAN, PENDING, HEALTH, DIAGNOSE"), then a DOCTOR whose reply marks the end of them (as for
 * {@link askRestartRequired}), and reads the agent's count of reload attempts since it started:
 * reloads plus failures, each counted per class. Several counts (another client asked too) give
 * the largest: the count only grows.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns the count; undefined when no count line came before the marker (an agent without it) or the marker did not come.
 */
export async function askReloadCount(connection: AgentConnection, timeoutMs: number, signal?: AbortSignal): Promise<number | undefined> {
  const token = newToken();
  let count: number | undefined;
  try {
    connection.send('HEALTH');
    await connection.request(
      doctorLine(token),
      (event) => {
        if (event.level !== 'INFO') return undefined;
        const line = RELOADS_LINE.exec(event.message);
        const seen = line !== null ? Number(line[1]) + Number(line[4] ?? 0) : event.message === NOTHING_RELOADED ? 0 : undefined;
        if (seen !== undefined) count = Math.max(count ?? 0, seen);
        return parseTokenJson(event.message, 'DOCTOR_RESULT', token);
      },
      'DOCTOR_RESULT after HEALTH',
      timeoutMs,
      signal,
    );
  } catch {
    return undefined;
  }
  return count;
}
