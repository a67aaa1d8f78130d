/**
 * After the status connection was lost: reconnect once and ask DOCTOR which agent session
 * answers now (protocol.md "VERIFY": `sessionId` is a random id per agent start, so a new one
 * means the app restarted and loaded its classes fresh from disk).
 */
import type { AgentAfterLoss } from '../outcome/facts.js';
import { AgentConnection } from './connection.js';
import { askDoctor } from './requests.js';

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
