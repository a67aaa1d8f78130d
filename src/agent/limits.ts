/**
 * The agent's limits and token rule (protocol.md "Commands", "VERIFY"), apart from
 * `protocol.ts` so that the command line can check `--owner` and write its help without
 * loading the protocol's schemas.
 */

/** Tokens (request, owner, doctor): protocol.md "Commands". */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `token` is a valid request, owner or doctor token. */
export function isToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** A command line of this many characters or more makes the agent close the connection (protocol.md "Commands"). */
export const MAX_COMMAND_CHARS = 513;

/** The agent keeps the latest VERIFY receipt of at most this many classes (protocol.md "VERIFY"). */
export const AGENT_RECEIPT_CAPACITY = 512;
