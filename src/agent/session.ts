/**
 * After the status connection was lost: reconnect once and ask DOCTOR which agent session
 * answers now (protocol.md "VERIFY": `sessionId` is a random id per agent start, so a new one
 * means the app restarted and loaded its classes fresh from disk).
 */
import { AgentConnection } from './connection.js';
import { askDoctor } from './requests.js';

/**
 * What a reconnect found: nobody answering (`gone`: the app stopped, is restarting or hangs),
 * the same agent session (its hold, if any, is still there), or a new session (the app restarted;
 * a hold is gone with the old session).
 */
export type AgentAfterLoss = { kind: 'gone' } | { kind: 'same-session'; sessionId: string } | { kind: 'restarted'; sessionId: string };

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

/** One clause for messages: what the reconnect found, in the user's terms. */
export function describeAgentAfterLoss(found: AgentAfterLoss): string {
  switch (found.kind) {
    case 'gone':
      return 'the agent is not answering any more (the app stopped, is restarting, or hangs)';
    case 'same-session':
      return 'the agent is back with the same session (the app did not restart)';
    case 'restarted':
      return `the agent is back with a new session ${found.sessionId}: the app restarted and loads classes fresh from disk`;
  }
}
