/**
 * Requests whose replies go only to the requester, each with a fresh request token and a
 * bounded wait (protocol.md "DOCTOR", "RELOAD").
 */
import { AgentConnection } from './connection.js';
import { type AgentAfterLoss, type DoctorObserved, doctorObservedSchema, type ReloadAction, type ReloadState } from '../outcome/facts.js';
import { diagnoseLine, doctorLine, doctorUnavailableSchema, newToken, parseReloadState, parseTokenJson, reloadLine } from './protocol.js';
import { type Diagnosis, DiagnosisReader, PendingReader } from './reports.js';

/**
 * Names asked of DIAGNOSE before each end marker: each answer is about 5 lines broadcast to every
 * client, far below a client's 1000-line outbox at the agent (a slow IDE must not overflow).
 */
const DIAGNOSE_CHUNK = 16;
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
 * Sends `DIAGNOSE <name>` for `classNames` (binary names VERIFY accepts), a DOCTOR after each
 * {@link DIAGNOSE_CHUNK} as end marker (see {@link untilMarker}). Unanswered before VERIFY is wired.
 * @param timeoutMs bound for each DOCTOR reply, in ms.
 * @returns per name, what the agent said (reports.ts); a name it did not answer is missing.
 *   Undefined when a marker did not come.
 */
export async function askDiagnose(
  connection: AgentConnection,
  classNames: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Map<string, Diagnosis> | undefined> {
  const reader = new DiagnosisReader();
  for (let at = 0; at < classNames.length; at += DIAGNOSE_CHUNK) {
    const chunk = classNames.slice(at, at + DIAGNOSE_CHUNK);
    const marked = await untilMarker(connection, chunk.map(diagnoseLine), (message) => reader.read(message), 'DIAGNOSE', timeoutMs, signal);
    if (!marked) return undefined;
  }
  return reader.diagnoses;
}

/**
 * Sends `PENDING` (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE") with a DOCTOR as end marker.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns the digest's entries (reports.ts `PendingReader`); undefined when the marker did not come.
 */
export async function askPending(connection: AgentConnection, timeoutMs: number, signal?: AbortSignal): Promise<string[] | undefined> {
  const reader = new PendingReader();
  const marked = await untilMarker(connection, ['PENDING'], (message) => reader.read(message), 'PENDING', timeoutMs, signal);
  return marked ? reader.entries : undefined;
}

/**
 * Sends `lines`, then a DOCTOR: their INFO lines are broadcast with no token or end marker
 * (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE"), but the agent answers in order, so its reply
 * marks their end. Each INFO before it goes to `read`.
 * False when the marker did not come.
 */
async function untilMarker(
  connection: AgentConnection,
  lines: readonly string[],
  read: (message: string) => void,
  what: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const token = newToken();
  try {
    for (const line of lines) connection.send(line);
    await connection.request(
      doctorLine(token),
      (event) => {
        if (event.level !== 'INFO') return undefined;
        read(event.message);
        return parseTokenJson(event.message, 'DOCTOR_RESULT', token);
      },
      `DOCTOR_RESULT after ${what}`,
      timeoutMs,
      signal,
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * Sends `HEALTH` with a DOCTOR as end marker and reads the agent's reload attempts since it
 * started (reloads plus failures, per class); of several counts (another client asked) the largest.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns the count; undefined when no count line came before the marker (an agent without it) or the marker did not come.
 */
export async function askReloadCount(connection: AgentConnection, timeoutMs: number, signal?: AbortSignal): Promise<number | undefined> {
  let count: number | undefined;
  const read = (message: string) => {
    const line = RELOADS_LINE.exec(message);
    const seen = line !== null ? Number(line[1]) + Number(line[4] ?? 0) : message === NOTHING_RELOADED ? 0 : undefined;
    if (seen !== undefined) count = Math.max(count ?? 0, seen);
  };
  return (await untilMarker(connection, ['HEALTH'], read, 'HEALTH', timeoutMs, signal)) ? count : undefined;
}

/** HEALTH's line while a build is held (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE"). */
const HOLDING_LINE = /^Build holding (\d+) class files since /;

/**
 * Sends `HEALTH` with a DOCTOR marking the end of its lines (as {@link askReloadCount}) and reads
 * how many class files the agent holds for a build.
 * @param timeoutMs bound for the DOCTOR reply, in ms.
 * @returns the count; undefined when no holding line came (then it is not known to be 0) or the marker did not come.
 */
export async function askHeldCount(connection: AgentConnection, timeoutMs: number, signal?: AbortSignal): Promise<number | undefined> {
  let held: number | undefined;
  const read = (message: string) => {
    const line = HOLDING_LINE.exec(message);
    if (line !== null) held = Math.max(held ?? 0, Number(line[1]));
  };
  return (await untilMarker(connection, ['HEALTH'], read, 'HEALTH', timeoutMs, signal)) ? held : undefined;
}

/**
 * After the status connection was lost: reconnect once and ask DOCTOR which agent session
 * answers now (protocol.md "VERIFY": `sessionId` is a random id per agent start, so a new one
 * means the app restarted and loaded its classes fresh from disk).
 */

/**
 * Reconnects to `127.0.0.1:<port>` and asks DOCTOR for the session id.
 * @param sessionId the session seen before the loss (DOCTOR at connect time).
 * @param timeoutMs bound for the connect, the CONNECTED line and the DOCTOR reply, each, in ms.
 * @returns never rejects: any failure to reconnect or to get an observed DOCTOR answer is `gone`.
 */
export async function observeAgentAfterLoss(port: number, sessionId: string, timeoutMs: number): Promise<AgentAfterLoss> {
  try {
    const { connection } = await AgentConnection.open(port, { timeoutMs });
    try {
      const answer = await askDoctor(connection, timeoutMs);
      if (answer.kind !== 'observed' || answer.doctor.sessionId === '') return { kind: 'gone' };
      const now = answer.doctor.sessionId;
      return now === sessionId ? { kind: 'same-session', sessionId: now } : { kind: 'restarted', sessionId: now };
    } finally {
      connection.close();
    }
  } catch {
    return { kind: 'gone' };
  }
}
