/** How a status-socket operation fails (connection.ts), and the words of the failure's own account. */

/** Why a connection-level operation failed. */
export type ConnectionFailure =
  | 'refused' // nothing listens on the port (a stale port file)
  | 'connect-timeout' // no TCP connection within the timeout
  | 'closed-before-connected' // accepted then closed before CONNECTED (the agent's sixth client)
  | 'handshake-timeout' // connected, but no first line within the timeout
  | 'bad-handshake' // the first line was not a valid CONNECTED event
  | 'closed' // the agent closed the connection while we waited
  | 'timeout' // a reply did not arrive within the timeout
  | 'aborted'; // the caller's AbortSignal fired

/** A failure on the status socket. `kind` says which; `message` names the port and what we waited for. */
export class AgentConnectionError extends Error {
  override readonly name = 'AgentConnectionError';
  constructor(
    readonly kind: ConnectionFailure,
    message: string,
  ) {
    super(message);
  }
}

/** A short, printable description of a first line that was not CONNECTED (undefined: not UTF-8 or not JSON). */
export function describeFirstLine(first: unknown): string {
  if (first === undefined) return 'a line that is not UTF-8 JSON, or longer than 64 KiB';
  return (JSON.stringify(first) ?? String(first)).slice(0, 200);
}

/**
 * Maps what p-timeout rejects with to an AgentConnectionError. An aborted signal rejects with
 * the signal's *reason* (for the CLI the string 'SIGINT' or 'SIGTERM', not an Error), so the
 * signal itself is checked, not only the error's name.
 */
export function normaliseAbort(error: unknown, what: string, signal?: AbortSignal): unknown {
  if (error instanceof AgentConnectionError) return error;
  if (signal?.aborted) return new AgentConnectionError('aborted', `interrupted while ${what}`);
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new AgentConnectionError(error.name === 'AbortError' ? 'aborted' : 'timeout', `interrupted while ${what}`);
  }
  return error;
}
